"""Reductions: sum (and the sum_to helper gradients of broadcasting use)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import _C
from ._numpy import arr, meta_like, tensor, wrap_dim
from ._registry import defop


def _dims(op: str, dim: Optional[Sequence[int]], ndim: int) -> tuple[int, ...]:
    if dim is None or len(dim) == 0:
        return tuple(range(ndim))
    dims = tuple(wrap_dim(op, d, ndim) for d in dim)
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dimension list {list(dim)} names a dimension twice")
    return dims


def _reduced_shape(shape: Sequence[int], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keepdim or i not in dims)


def _sum_dtype(self: _C.TensorBase, dtype: Any) -> Any:
    if dtype is not None:
        return dtype.to_numpy()
    npd = self.dtype.to_numpy()
    return np.dtype(np.int64) if npd.kind in "biu" else npd


def _sum_dim_cpu(self: _C.TensorBase, dim: Optional[Sequence[int]], keepdim: bool = False, *,
                 dtype: Any = None) -> _C.TensorBase:
    dims = _dims("od::sum.dim_IntList", dim, self.ndim)
    return tensor(np.sum(arr(self), axis=dims, keepdims=keepdim, dtype=_sum_dtype(self, dtype)))


def _sum_dim_meta(self: _C.TensorBase, dim: Optional[Sequence[int]], keepdim: bool = False, *,
                  dtype: Any = None) -> _C.TensorBase:
    dims = _dims("od::sum.dim_IntList", dim, self.ndim)
    return meta_like(_reduced_shape(self.shape, dims, keepdim), _sum_dtype(self, dtype))


def _sum_setup(ctx: Any, inputs: tuple, keyword_only_inputs: dict, output: Any) -> None:
    self = inputs[0]
    ctx.shape = tuple(self.shape)
    ctx.dims = _dims("od::sum", inputs[1] if len(inputs) > 1 else None, self.ndim)
    ctx.keepdim = inputs[2] if len(inputs) > 2 else False


def _sum_backward(ctx: Any, grad: _C.TensorBase) -> tuple[Any, ...]:
    from .views import expand, reshape

    kept = grad if ctx.keepdim else reshape(grad, _reduced_shape(ctx.shape, ctx.dims, True))
    return (expand(kept, ctx.shape),) + (None,) * (ctx.n_inputs - 1)


def _with_inputs(setup: Any, n: int) -> Any:
    def s(ctx: Any, inputs: tuple, keyword_only_inputs: dict, output: Any) -> None:
        setup(ctx, inputs, keyword_only_inputs, output)
        ctx.n_inputs = n

    return s


sum_dim = defop("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                cpu=_sum_dim_cpu, meta=_sum_dim_meta, backward=_sum_backward, setup_context=_with_inputs(_sum_setup, 3))
sum_ = defop("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
             cpu=lambda self, *, dtype=None: _sum_dim_cpu(self, None, False, dtype=dtype),
             meta=lambda self, *, dtype=None: _sum_dim_meta(self, None, False, dtype=dtype),
             backward=_sum_backward, setup_context=_with_inputs(_sum_setup, 1))


def sum_to(grad: _C.TensorBase, shape: Sequence[int]) -> _C.TensorBase:
    """Sums ``grad`` over the dimensions that broadcasting added or stretched to ``shape``."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    stretched = [lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1]
    if stretched:
        grad = sum_dim(grad, stretched, True)
    if lead:
        grad = sum_dim(grad, list(range(lead)), False)
    return grad
