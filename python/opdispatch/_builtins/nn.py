"""Neural-network operators: softmax and log_softmax over one dimension with
their single-operator gradients (_softmax_backward_data,
_log_softmax_backward_data), and the negative log-likelihood loss (nll_loss
over nll_loss_forward and nll_loss_backward, with class weights,
ignore_index and none/mean/sum reduction), as PyTorch splits them."""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, cast

import numpy as np

from .. import _C
from . import elementwise, factories, reduction
from ._numpy import call_numpy, call_numpy_pair, check_device, meta_like, wrap_dim
from ._registry import PT2, Kernels, Op, PairOp, defop
from .._tensor_type import Tensor


#: nll_loss's ``reduction`` argument (PyTorch: at::Reduction::Reduction).
NONE: int = 0
MEAN: int = 1
SUM: int = 2


def _softmax_kernels(name: str, fn: Callable[[np.ndarray, Optional[int], Any], np.ndarray]
                     ) -> Kernels:
    def out_dtype(self: Tensor, dtype: Any) -> Any:
        dtype = self.dtype if dtype is None else dtype
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name}: expected a floating-point input (or dtype=), got {dtype}")
        return dtype

    def cpu(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
        d = wrap_dim(name, dim, self.ndim)
        return call_numpy(fn, self, d if self.ndim else None, out_dtype(self, dtype).to_numpy())

    def meta(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
        wrap_dim(name, dim, self.ndim)
        return meta_like(self.shape, out_dtype(self, dtype))

    return {"cpu": cpu, "meta": meta}


_max_along, _sum_along = np.maximum.reduce, reduction.sums_along


def _shifted(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    """A new array: ``a`` minus its maximum along ``axis`` (so exp cannot overflow); a copy of an empty ``a``."""
    shifted: np.ndarray = np.subtract(a, _max_along(a, axis, keepdims=True)) if a.size else a.copy()
    return shifted


def _as_1d(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a`` in ``dtype``, a 0-d array as 1-d (NumPy gives scalars, not arrays, for 0-d operands)."""
    a = a.astype(dtype, copy=False)
    return a.reshape(1) if a.ndim == 0 else a


def _softmax(a: np.ndarray, axis: Optional[int], dtype: np.dtype) -> np.ndarray:
    e: np.ndarray = np.exp(_shifted(_as_1d(a, dtype), axis))
    np.true_divide(e, _sum_along(e, axis), out=e)
    return e.reshape(a.shape)


def _log_softmax(a: np.ndarray, axis: Optional[int], dtype: np.dtype) -> np.ndarray:
    s = _shifted(_as_1d(a, dtype), axis)
    np.subtract(s, np.log(_sum_along(np.exp(s), axis)), out=s)
    return s.reshape(a.shape)


def _softmax_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self = inputs[0]
    ctx.dim = wrap_dim("od::softmax", inputs[1], self.ndim)  # the kernel checked dim
    ctx.input_dtype = self.dtype
    ctx.save_for_backward(output)


def _softmax_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    (out,) = ctx.saved_tensors
    return _softmax_backward_data(grad, out, ctx.dim, ctx.input_dtype), None, None


def _log_softmax_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    (out,) = ctx.saved_tensors
    return _log_softmax_backward_data(grad, out, ctx.dim, ctx.input_dtype), None, None


softmax: Op = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", tags=PT2,
                    **_softmax_kernels("od::softmax.int", _softmax),
                    backward=_softmax_backward, setup_context=_softmax_setup)
log_softmax: Op = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", tags=PT2,
                        **_softmax_kernels("od::log_softmax.int", _log_softmax),
                        backward=_log_softmax_backward, setup_context=_softmax_setup)

# --- the gradients of softmax and log_softmax -------------------------------------------------------


def _backward_data_kernels(name: str, fn: Callable[..., np.ndarray]) -> Kernels:
    """Kernels of ``(grad_output, output, dim, input_dtype)``: the gradient of
    the input, in ``input_dtype`` (the dtype of softmax's input, which its ``dtype=`` may have changed)."""

    def check(grad_output: Tensor, output: Tensor, dim: int) -> Optional[int]:
        if grad_output.shape != output.shape:
            raise RuntimeError(f"{name}: grad_output of shape {list(grad_output.shape)} does not match output of "
                               f"shape {list(output.shape)}")
        d = wrap_dim(name, dim, output.ndim)
        return d if output.ndim else None

    def cpu(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
        return call_numpy(fn, grad_output, output, check(grad_output, output, dim), input_dtype.to_numpy())

    def meta(grad_output: Tensor, output: Tensor, dim: int, input_dtype: Any) -> Tensor:
        check_device(name, grad_output, output)
        check(grad_output, output, dim)
        return meta_like(output.shape, input_dtype)

    return {"cpu": cpu, "meta": meta}


def _softmax_grad(g: np.ndarray, out: np.ndarray, axis: Optional[int], dtype: np.dtype) -> np.ndarray:
    """out * (g - sum(g * out)). PyTorch: _softmax_backward_data."""
    shape, out = out.shape, _as_1d(out, out.dtype)
    g = _as_1d(g, out.dtype)
    r: np.ndarray = np.subtract(g, _sum_along(np.multiply(g, out), axis))
    np.multiply(r, out, out=r)
    return r.astype(dtype, copy=False).reshape(shape)


def _log_softmax_grad(g: np.ndarray, out: np.ndarray, axis: Optional[int], dtype: np.dtype) -> np.ndarray:
    """g - exp(out) * sum(g). PyTorch: _log_softmax_backward_data."""
    shape, out = out.shape, _as_1d(out, out.dtype)
    g = _as_1d(g, out.dtype)
    r: np.ndarray = np.multiply(np.exp(out), _sum_along(g, axis))
    np.subtract(g, r, out=r)
    return r.astype(dtype, copy=False).reshape(shape)


def _backward_data_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    grad_output, out, dim, _ = inputs
    ctx.dim = wrap_dim("od::_softmax_backward_data", dim, out.ndim)
    ctx.dtypes = (grad_output.dtype, out.dtype)
    ctx.save_for_backward(grad_output, out)


def _softmax_backward_data_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None, None]:
    """PyTorch: derivatives.yaml _softmax_backward_data (softmax_double_backward for output)."""
    grad_output, out = ctx.saved_tensors
    g = elementwise.as_dtype(grad, out.dtype)
    g_grad = g_out = None
    if ctx.needs_input_grad[0]:
        g_grad = elementwise.as_dtype(_softmax_backward_data(g, out, ctx.dim, out.dtype), ctx.dtypes[0])
    if ctx.needs_input_grad[1]:
        dot = reduction.sum_dim(elementwise.mul(grad_output, out), [ctx.dim], True)
        g_out = elementwise.sub(elementwise.mul(g, elementwise.sub(grad_output, dot)),
                                elementwise.mul(grad_output, reduction.sum_dim(elementwise.mul(g, out), [ctx.dim], True)))
    return g_grad, g_out, None, None


def _log_softmax_backward_data_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None, None]:
    """PyTorch: derivatives.yaml _log_softmax_backward_data."""
    grad_output, out = ctx.saved_tensors
    g = elementwise.as_dtype(grad, out.dtype)
    g_grad = g_out = None
    if ctx.needs_input_grad[0]:
        g_grad = elementwise.sub(g, reduction.sum_dim(elementwise.mul(g, elementwise.exp(out)), [ctx.dim], True))
        g_grad = elementwise.as_dtype(g_grad, ctx.dtypes[0])
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

# --- nll_loss -------------------------------------------------------------------------------------


_INTEGER_DTYPES = frozenset({_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64})


def _check_nll(op: str, self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int) -> None:
    """RuntimeError (ValueError for reduction) naming ``op`` unless the
    arguments make an nll_loss (devices are checked by the caller)."""
    if self.ndim not in (1, 2):
        raise RuntimeError(f"{op}: input tensor should be 1D or 2D, got shape {list(self.shape)}")
    if target.dtype not in _INTEGER_DTYPES:
        raise RuntimeError(f"{op}: expected target of an integer dtype (class indices), got {target.dtype}")
    if target.shape != self.shape[:-1]:
        raise RuntimeError(f"{op}: expected target of shape {list(self.shape[:-1])} for input of shape "
                           f"{list(self.shape)}, got {list(target.shape)}")
    if weight is not None and weight.shape != self.shape[-1:]:
        raise RuntimeError(f"{op}: weight tensor should be defined either for all {self.shape[-1]} classes or no "
                           f"classes but got weight tensor of shape {list(weight.shape)}")
    if reduction_ not in (NONE, MEAN, SUM):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction_}")


@functools.lru_cache(maxsize=8)
def _rows(n: int) -> np.ndarray:
    """0..n-1 (read-only, shared): the row index of a per-sample gather."""
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows


def _gathered(x: np.ndarray, t: np.ndarray, ignore_index: int) -> Optional[np.ndarray]:
    """``x[n, t[n]]`` for every sample when every target is a class and none
    can be ``ignore_index`` (the common case, which needs no masks), else None."""
    if 0 <= ignore_index < x.shape[1] or (len(t) and _min_of(t) < 0):
        return None
    try:
        picked: np.ndarray = x[_rows(len(t)), t]
        return picked
    except IndexError:  # a target past the last class: _picked_weights names it
        return None


_min_of = np.minimum.reduce


def _picked_weights(x: np.ndarray, t: np.ndarray, w: Optional[np.ndarray], ignore_index: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: the class index (0 where ignored) and its weight in x's
    dtype (0 where ignored). IndexError for a class out of range."""
    n_classes = x.shape[1]
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds (there are {n_classes} classes)")
    picked = np.where(valid, t, 0)
    weights = valid.astype(x.dtype) if w is None else np.where(valid, w[picked], 0).astype(x.dtype, copy=False)
    return picked, weights


def _nll_forward(x: np.ndarray, t: np.ndarray, w: Optional[np.ndarray], reduction_: int, ignore_index: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    shape = t.shape
    x = x.reshape(-1, x.shape[-1])
    t = t.reshape(-1)
    gathered = _gathered(x, t, ignore_index) if w is None else None
    if gathered is not None:
        if reduction_ == NONE:
            return np.negative(gathered).reshape(shape), np.zeros((), x.dtype)
        total = np.negative(reduction.sum_of(gathered))
        return (total / len(t) if reduction_ == MEAN else total), np.asarray(len(t), x.dtype)
    picked, weights = _picked_weights(x, t, w, ignore_index)
    losses = np.multiply(np.negative(x[_rows(len(t)), picked]), weights)
    if reduction_ == NONE:
        return losses.reshape(shape), np.zeros((), x.dtype)
    total_weight = reduction.sum_of(weights)
    total = reduction.sum_of(losses)
    return (total / total_weight if reduction_ == MEAN else total), total_weight


def _nll_loss_forward_cpu(self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int,
                          ignore_index: int) -> tuple[Tensor, Tensor]:
    _check_nll("od::nll_loss_forward", self, target, weight, reduction_)
    try:
        return call_numpy_pair(_nll_forward, self, target, weight, reduction_, ignore_index)
    except IndexError as e:
        raise IndexError(f"od::nll_loss_forward: {e}") from None


def _nll_loss_forward_meta(self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int,
                           ignore_index: int) -> tuple[Tensor, Tensor]:
    check_device("od::nll_loss_forward", self, target, *([weight] if weight is not None else []))
    _check_nll("od::nll_loss_forward", self, target, weight, reduction_)
    return meta_like(target.shape if reduction_ == NONE else (), self.dtype), meta_like((), self.dtype)


def _nll_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, target, weight, ctx.reduction, ctx.ignore_index = inputs
    ctx.mark_non_differentiable(output[1])
    # total_weight is an output without history, kept as a plain attribute (no version to check).
    ctx.total_weight = output[1]
    ctx.save_for_backward(self, target, weight)


def _nll_forward_backward(ctx: Any, grad: Tensor, grad_total_weight: Any) -> tuple[Any, None, None, None, None]:
    """PyTorch: derivatives.yaml nll_loss_forward (the weight gets no gradient)."""
    if ctx.needs_input_grad[2]:
        raise RuntimeError("od::nll_loss_forward: the derivative for 'weight' is not implemented")
    self, target, weight = ctx.saved_tensors
    return nll_loss_backward(grad, self, target, weight, ctx.reduction, ctx.ignore_index, ctx.total_weight), \
        None, None, None, None


nll_loss_forward = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) "
    "-> (Tensor output, Tensor total_weight)", tags=PT2,
    cpu=_nll_loss_forward_cpu, meta=_nll_loss_forward_meta, backward=_nll_forward_backward, setup_context=_nll_setup))


def _nll_grad(grad: np.ndarray, x: np.ndarray, t: np.ndarray, w: Optional[np.ndarray], reduction_: int,
              ignore_index: int, total_weight: np.ndarray) -> np.ndarray:
    """d loss / d x[n, c] = -w[c] [c == target[n] != ignore_index], times
    grad_output (per sample for reduction none), over total_weight for mean."""
    shape = x.shape
    x = x.reshape(-1, x.shape[-1])
    t = t.reshape(-1)
    scale = np.negative(grad.reshape(-1) if reduction_ == NONE else grad)
    if reduction_ == MEAN:
        scale = scale / total_weight
    out = np.zeros(x.shape, x.dtype)
    if w is None and _gathered(x, t, ignore_index) is not None:
        out[_rows(len(t)), t] = scale
    else:
        picked, weights = _picked_weights(x, t, w, ignore_index)
        out[_rows(len(t)), picked] = weights * scale
    return out.reshape(shape)


def _check_nll_backward(grad_output: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor],
                        reduction_: int, total_weight: Tensor) -> None:
    op = "od::nll_loss_backward"
    _check_nll(op, self, target, weight, reduction_)
    expected = tuple(target.shape) if reduction_ == NONE else ()
    if tuple(grad_output.shape) != expected:
        raise RuntimeError(f"{op}: expected grad_output of shape {list(expected)}, got {list(grad_output.shape)}")
    if total_weight.numel() != 1:
        raise RuntimeError(f"{op}: expected a single-element total_weight, got shape {list(total_weight.shape)}")


def _nll_loss_backward_cpu(grad_output: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor],
                           reduction_: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    _check_nll_backward(grad_output, self, target, weight, reduction_, total_weight)
    try:
        return call_numpy(_nll_grad, grad_output, self, target, weight, reduction_, ignore_index, total_weight)
    except IndexError as e:
        raise IndexError(f"od::nll_loss_backward: {e}") from None


def _nll_loss_backward_meta(grad_output: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor],
                            reduction_: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    check_device("od::nll_loss_backward", grad_output, self, target, total_weight,
                 *([weight] if weight is not None else []))
    _check_nll_backward(grad_output, self, target, weight, reduction_, total_weight)
    return meta_like(self.shape, self.dtype)


def _nll_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, self, target, weight, ctx.reduction, ctx.ignore_index, _ = inputs
    ctx.save_for_backward(self, target, weight)


def _nll_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """nll_loss_backward is linear in grad_output: its gradient is nll_loss of
    the incoming gradient. PyTorch: derivatives.yaml nll_loss_backward."""
    if ctx.needs_input_grad[3] or ctx.needs_input_grad[6]:
        raise RuntimeError("od::nll_loss_backward: the derivative for 'weight' and 'total_weight' is not implemented")
    self, target, weight = ctx.saved_tensors
    g_grad = nll_loss(grad, target, weight, ctx.reduction, ctx.ignore_index) if ctx.needs_input_grad[0] else None
    g_self = factories.zeros_like(self) if ctx.needs_input_grad[1] else None
    return g_grad, g_self, None, None, None, None, None


nll_loss_backward: Op = defop(
    "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index, Tensor total_weight) -> Tensor", tags=PT2,
    cpu=_nll_loss_backward_cpu, meta=_nll_loss_backward_meta, backward=_nll_backward_backward,
    setup_context=_nll_backward_setup)


def _nll_loss(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction_: int = MEAN,
              ignore_index: int = -100) -> Tensor:
    """PyTorch: at::native::nll_loss (CompositeImplicitAutograd)."""
    return nll_loss_forward(self, target, weight, reduction_, ignore_index)[0]


nll_loss: Op = defop("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
                     "SymInt ignore_index=-100) -> Tensor", tags=PT2, composite=_nll_loss)
