"""Indexing by an index tensor: index_select and its gradient operator
index_select_backward (scatter-add of the gradient into zeros, NumPy's
np.add.at)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _C
from ._numpy import call_numpy, meta_like, wrap_dim
from ._registry import CORE, PT2, Op, defop
from .._tensor_type import Tensor


def _check_index(op: str, index: Tensor, size: int, values: bool) -> None:
    """PyTorch's rules for index_select's ``index``: at most 1-D, int32 or
    int64, and (when ``values``, on cpu) every entry in [0, size)."""
    if index.ndim > 1:
        raise IndexError(f"{op}: index_select(): Index is supposed to be a vector")
    if index.dtype not in (_C.int32, _C.int64):
        raise RuntimeError(f"{op}: index_select(): Expected dtype int32 or int64 for index")
    if values and not index.is_meta:
        entries = index.numpy().reshape(-1)
        bad = entries[(entries < 0) | (entries >= size)]
        if bad.size:
            raise RuntimeError(f"{op}: INDICES element is out of DATA bounds, id={bad[0]} axis_dim={size}")


def _selected_shape(op: str, self: Tensor, dim: int, index: Tensor) -> tuple[int, tuple[int, ...]]:
    d = wrap_dim(op, dim, self.ndim)
    if self.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"{op}: index_select(): Index to scalar can have only 1 value, got {index.numel()} "
                               f"value(s)")
        return d, ()
    shape = list(self.shape)
    shape[d] = index.numel()
    return d, tuple(shape)


def _index_select_of(a: np.ndarray, d: int, index: np.ndarray) -> np.ndarray:
    return a.copy() if a.ndim == 0 else np.take(a, index.reshape(-1), axis=d)


def _index_select_cpu(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d, _ = _selected_shape("od::index_select", self, dim, index)
    _check_index("od::index_select", index, self.shape[d] if self.ndim else 1, True)
    return call_numpy(_index_select_of, self, d, index)


def _index_select_meta(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d, shape = _selected_shape("od::index_select", self, dim, index)
    _check_index("od::index_select", index, self.shape[d] if self.ndim else 1, False)
    return meta_like(shape, self.dtype)


def _index_select_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, ctx.dim, index = inputs
    ctx.shape = list(self.shape)
    ctx.save_for_backward(index)


index_select: Op = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor", tags=CORE,
                         cpu=_index_select_cpu, meta=_index_select_meta, setup_context=_index_select_setup,
                         backward=lambda ctx, grad: (index_select_backward(grad, ctx.shape, ctx.dim,
                                                                           ctx.saved_tensors[0]), None, None))


def _added_at(grad: np.ndarray, sizes: tuple[int, ...], d: int, index: np.ndarray) -> np.ndarray:
    out = np.zeros(sizes, grad.dtype)
    if not sizes:
        out[()] = grad.reshape(())
        return out
    where: Any = (slice(None),) * d + (index.reshape(-1),)
    np.add.at(out, where, grad)
    return out


def _index_select_backward_cpu(grad: Tensor, self_sizes: Sequence[int], dim: int, index: Tensor) -> Tensor:
    """Zeros of ``self_sizes`` with each row of ``grad`` added at its index (repeated indices add up)."""
    d = wrap_dim("od::index_select_backward", dim, len(self_sizes))
    return call_numpy(_added_at, grad, tuple(self_sizes), d, index)


def _index_select_backward_meta(grad: Tensor, self_sizes: Sequence[int], dim: int, index: Tensor) -> Tensor:
    wrap_dim("od::index_select_backward", dim, len(self_sizes))
    return meta_like(tuple(self_sizes), grad.dtype)


def _index_select_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dim = inputs[2]
    ctx.save_for_backward(inputs[3])


index_select_backward: Op = defop(
    "index_select_backward(Tensor grad, SymInt[] self_sizes, int dim, Tensor index) -> Tensor", tags=PT2,
    cpu=_index_select_backward_cpu, meta=_index_select_backward_meta, setup_context=_index_select_backward_setup,
    backward=lambda ctx, grad: (index_select(grad, ctx.dim, ctx.saved_tensors[0]), None, None, None))
