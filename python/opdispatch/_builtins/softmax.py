"""Softmax and log-softmax over one dimension: the Core ATen operators
_softmax and _log_softmax, their single-operator gradients
(_softmax_backward_data, _log_softmax_backward_data), and softmax.int /
log_softmax.int (with dtype=) as their CompositeImplicitAutograd
decompositions, as PyTorch splits them."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from . import copy, elementwise, reduction
from ._numpy import call_numpy, check_device, meta_like, opmath, wrap_dim
from ._registry import CORE, PT2, Kernels, Op, defop
from .._tensor_type import Tensor


def _softmax_kernels(name: str, fn: Callable[[np.ndarray, Optional[int]], np.ndarray]) -> Kernels:
    """Kernels of ``(self, dim, half_to_float)``: the result in self's dtype."""

    def check(self: Tensor, dim: int, half_to_float: bool) -> int:
        if half_to_float:
            raise RuntimeError(f"{name}: softmax with half to float conversion is not supported on CPU")
        if not self.dtype.is_floating_point:
            raise RuntimeError(f"{name}: expected a floating-point input (or dtype= of softmax.int), got "
                               f"{self.dtype}")
        return wrap_dim(name, dim, self.ndim)

    def cpu(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
        d = check(self, dim, half_to_float)
        return call_numpy(fn, self, d if self.ndim else None)

    def meta(self: Tensor, dim: int, half_to_float: bool) -> Tensor:
        check(self, dim, half_to_float)
        return meta_like(self.shape, self.dtype)

    return {"cpu": cpu, "meta": meta}


_max_along, _sum_along = np.maximum.reduce, reduction.sums_along


def _shifted(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    """A new array: ``a`` minus its maximum along ``axis`` (so exp cannot overflow); a copy of an empty ``a``."""
    shifted: np.ndarray = np.subtract(a, _max_along(a, axis, keepdims=True)) if a.size else a.copy()
    return shifted


def _as_1d(a: np.ndarray) -> np.ndarray:
    """``a``, a 0-d array as 1-d (NumPy gives scalars, not arrays, for 0-d operands)."""
    return a.reshape(1) if a.ndim == 0 else a


@opmath  # Note [float16 computes in float32]
def _softmax_of(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    e: np.ndarray = np.exp(_shifted(_as_1d(a), axis))
    np.true_divide(e, _sum_along(e, axis), out=e)
    return e.reshape(a.shape)


def _log_softmax_of(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    # Not opmath: PyTorch's float16 log_softmax does not round once either (computing in float32 and
    # rounding once misses it more often than NumPy's float16 steps do; tests/opinfo/_known_differences.py).
    s = _shifted(_as_1d(a), axis)
    np.subtract(s, np.log(_sum_along(np.exp(s), axis)), out=s)
    return s.reshape(a.shape)


def _softmax_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self = inputs[0]
    ctx.dim = wrap_dim("od::_softmax", inputs[1], self.ndim)  # the kernel checked dim
    ctx.input_dtype = self.dtype
    ctx.save_for_backward(output)


def _softmax_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    (out,) = ctx.saved_tensors
    return _softmax_backward_data(grad, out, ctx.dim, ctx.input_dtype), None, None


def _log_softmax_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    (out,) = ctx.saved_tensors
    return _log_softmax_backward_data(grad, out, ctx.dim, ctx.input_dtype), None, None


_softmax: Op = defop("_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", tags=CORE,
                     **_softmax_kernels("od::_softmax", _softmax_of),
                     backward=_softmax_backward, setup_context=_softmax_setup)
_log_softmax: Op = defop("_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", tags=CORE,
                         **_softmax_kernels("od::_log_softmax", _log_softmax_of),
                         backward=_log_softmax_backward, setup_context=_softmax_setup)


def _converted(self: Tensor, dtype: Any) -> Tensor:
    return self if dtype is None else copy.to_dtype(self, dtype)


def _softmax_int(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """PyTorch: at::native::softmax (CompositeImplicitAutograd; CPU never converts half to float)."""
    return _softmax(_converted(self, dtype), dim, False)


def _log_softmax_int(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """PyTorch: at::native::log_softmax (CompositeImplicitAutograd)."""
    return _log_softmax(_converted(self, dtype), dim, False)


softmax: Op = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", tags=PT2,
                    composite=_softmax_int)
log_softmax: Op = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", tags=PT2,
                        composite=_log_softmax_int)

# --- the gradients of softmax and log_softmax -------------------------------------------------------


def _backward_data_kernels(name: str, fn: Callable[..., np.ndarray]) -> Kernels:
    """Kernels of ``(grad_output, output, dim, input_dtype)``: the gradient of
    the input, in grad_output's dtype, which must be output's (float16
    computed in float32). ``input_dtype`` is not used: PyTorch's CPU kernel
    ignores it too (its Meta function returns ``input_dtype``, but its CPU
    kernel returns grad_output's dtype and refuses a grad_output whose dtype
    is not output's: PyTorch: softmax_backward_cpu_out). RuntimeError naming
    ``name`` if the shapes or dtypes differ."""

    def check(grad_output: Tensor, output: Tensor, dim: int) -> Optional[int]:
        if grad_output.shape != output.shape:
            raise RuntimeError(f"{name}: grad_output of shape {list(grad_output.shape)} does not match output of "
                               f"shape {list(output.shape)}")
        if grad_output.dtype != output.dtype:
            raise RuntimeError(f"{name}: expected grad_output and output of one dtype, got {grad_output.dtype} and "
                               f"{output.dtype}")
        d = wrap_dim(name, dim, output.ndim)
        return d if output.ndim else None

    def cpu(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
        return call_numpy(fn, grad_output, output, check(grad_output, output, dim))

    def meta(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
        check_device(name, grad_output, output)
        check(grad_output, output, dim)
        return meta_like(output.shape, grad_output.dtype)

    return {"cpu": cpu, "meta": meta}


@opmath
def _softmax_grad(g: np.ndarray, out: np.ndarray, axis: Optional[int]) -> np.ndarray:
    """out * (g - sum(g * out)). PyTorch: _softmax_backward_data."""
    shape, out, g = out.shape, _as_1d(out), _as_1d(g)
    r: np.ndarray = np.subtract(g, _sum_along(np.multiply(g, out), axis))
    np.multiply(r, out, out=r)
    return r.reshape(shape)


@opmath
def _log_softmax_grad(g: np.ndarray, out: np.ndarray, axis: Optional[int]) -> np.ndarray:
    """g - exp(out) * sum(g). PyTorch: _log_softmax_backward_data."""
    shape, out, g = out.shape, _as_1d(out), _as_1d(g)
    r: np.ndarray = np.multiply(np.exp(out), _sum_along(g, axis))
    np.subtract(g, r, out=r)
    return r.reshape(shape)


def _backward_data_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    grad_output, out, dim, _ = inputs
    ctx.dim = wrap_dim("od::_softmax_backward_data", dim, out.ndim)
    ctx.save_for_backward(grad_output, out)


def _softmax_backward_data_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None, None]:
    """PyTorch: derivatives.yaml _softmax_backward_data (softmax_double_backward for output)."""
    grad_output, out = ctx.saved_tensors
    g = grad  # grad_output, output and the result have one dtype
    g_grad = g_out = None
    if ctx.needs_input_grad[0]:
        g_grad = _softmax_backward_data(g, out, ctx.dim, out.dtype)
    if ctx.needs_input_grad[1]:
        dot = reduction.sum_dim(elementwise.mul(grad_output, out), [ctx.dim], True)
        g_out = elementwise.sub(elementwise.mul(g, elementwise.sub(grad_output, dot)),
                                elementwise.mul(grad_output, reduction.sum_dim(elementwise.mul(g, out), [ctx.dim], True)))
    return g_grad, g_out, None, None


def _log_softmax_backward_data_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None, None]:
    """PyTorch: derivatives.yaml _log_softmax_backward_data."""
    grad_output, out = ctx.saved_tensors
    g = grad  # grad_output, output and the result have one dtype
    g_grad = g_out = None
    if ctx.needs_input_grad[0]:
        g_grad = elementwise.sub(g, reduction.sum_dim(elementwise.mul(g, elementwise.exp(out)), [ctx.dim], True))
    if ctx.needs_input_grad[1]:
        total = reduction.sum_dim(grad_output, [ctx.dim], True)
        g_out = elementwise.neg(elementwise.mul(elementwise.mul(total, elementwise.exp(out)), g))
    return g_grad, g_out, None, None


_softmax_backward_data: Op = defop(
    "_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor", tags=PT2,
    **_backward_data_kernels("od::_softmax_backward_data", _softmax_grad),
    backward=_softmax_backward_data_backward, setup_context=_backward_data_setup)
_log_softmax_backward_data: Op = defop(
    "_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, ScalarType input_dtype) -> Tensor",
    tags=PT2, **_backward_data_kernels("od::_log_softmax_backward_data", _log_softmax_grad),
    backward=_log_softmax_backward_data_backward, setup_context=_backward_data_setup)
