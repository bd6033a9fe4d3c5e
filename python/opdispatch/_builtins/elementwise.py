"""Elementwise operators: NumPy ufuncs with NumPy broadcasting and type
promotion; Meta kernels give the broadcast shape and promoted dtype."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _C
from ._numpy import arr, broadcast_shape, meta_like, result_dtype, tensor
from ._registry import defop
from .reduction import sum_to


def _binary_cpu(name: str, fn: Any) -> Any:
    def kernel(self: _C.TensorBase, other: _C.TensorBase, **kw: Any) -> _C.TensorBase:
        broadcast_shape(name, self.shape, other.shape)
        return tensor(fn(arr(self), arr(other), **kw))

    kernel.__name__ = name.replace("od::", "") + "_cpu"
    return kernel


def _binary_meta(name: str) -> Any:
    def kernel(self: _C.TensorBase, other: _C.TensorBase, **kw: Any) -> _C.TensorBase:
        return meta_like(broadcast_shape(name, self.shape, other.shape), result_dtype(name, self, other))

    kernel.__name__ = name.replace("od::", "") + "_meta"
    return kernel


def _unary(name: str, ufunc: Any) -> tuple[Any, Any]:
    def cpu(self: _C.TensorBase) -> _C.TensorBase:
        return tensor(ufunc(arr(self)))

    def meta(self: _C.TensorBase) -> _C.TensorBase:
        return meta_like(self.shape, np.result_type(ufunc(np.zeros((), self.dtype.to_numpy()))))

    cpu.__name__, meta.__name__ = f"{name}_cpu", f"{name}_meta"
    return cpu, meta


# --- add, mul -----------------------------------------------------------------

def _add(a: np.ndarray, b: np.ndarray, alpha: Any = 1) -> np.ndarray:
    return a + b if alpha == 1 else a + alpha * b


def _add_setup(ctx: Any, inputs: tuple, keyword_only_inputs: dict, output: Any) -> None:
    self, other = inputs
    ctx.shapes = (tuple(self.shape), tuple(other.shape))
    ctx.alpha = keyword_only_inputs["alpha"]


def _add_backward(ctx: Any, grad: _C.TensorBase) -> tuple[Any, Any]:
    s_shape, o_shape = ctx.shapes
    g_other = grad if ctx.alpha == 1 else mul_scalar(grad, ctx.alpha)
    return sum_to(grad, s_shape), sum_to(g_other, o_shape)


add = defop("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
            cpu=_binary_cpu("od::add.Tensor", _add), meta=_binary_meta("od::add.Tensor"),
            backward=_add_backward, setup_context=_add_setup)


def _mul_setup(ctx: Any, inputs: tuple, output: Any) -> None:
    self, other = inputs
    ctx.save_for_backward(self, other)


def _mul_backward(ctx: Any, grad: _C.TensorBase) -> tuple[Any, Any]:
    self, other = ctx.saved_tensors
    g_self = sum_to(mul(grad, other), tuple(self.shape)) if ctx.needs_input_grad[0] else None
    g_other = sum_to(mul(grad, self), tuple(other.shape)) if ctx.needs_input_grad[1] else None
    return g_self, g_other


mul = defop("mul.Tensor(Tensor self, Tensor other) -> Tensor",
            cpu=_binary_cpu("od::mul.Tensor", np.multiply), meta=_binary_meta("od::mul.Tensor"),
            backward=_mul_backward, setup_context=_mul_setup)


def _mul_scalar_cpu(self: _C.TensorBase, other: Any) -> _C.TensorBase:
    return tensor(arr(self) * other)


def _mul_scalar_meta(self: _C.TensorBase, other: Any) -> _C.TensorBase:
    return meta_like(self.shape, result_dtype("od::mul.Scalar", self, other))


def _mul_scalar_setup(ctx: Any, inputs: tuple, output: Any) -> None:
    ctx.other = inputs[1]


mul_scalar = defop("mul.Scalar(Tensor self, Scalar other) -> Tensor",
                   cpu=_mul_scalar_cpu, meta=_mul_scalar_meta,
                   backward=lambda ctx, grad: (mul_scalar(grad, ctx.other), None), setup_context=_mul_scalar_setup)

# --- unary --------------------------------------------------------------------

_neg_cpu, _neg_meta = _unary("neg", np.negative)
neg = defop("neg(Tensor self) -> Tensor", cpu=_neg_cpu, meta=_neg_meta,
            backward=lambda ctx, grad: neg(grad))


def _exp_setup(ctx: Any, inputs: tuple, output: Any) -> None:
    ctx.save_for_backward(output)


_exp_cpu, _exp_meta = _unary("exp", np.exp)
exp = defop("exp(Tensor self) -> Tensor", cpu=_exp_cpu, meta=_exp_meta,
            backward=lambda ctx, grad: mul(grad, ctx.saved_tensors[0]), setup_context=_exp_setup)
