"""Sorting: sort (the values along a dimension in order, and where each came
from) and topk (the k largest or smallest of them, in order), whose gradients
put the values' gradients back where the values came from."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, cast

import numpy as np

from .. import _C
from . import factories, indexing
from ._numpy import call_numpy_pair, contiguous_strides, meta_like, wrap_dim
from ._registry import CORE, PairOp, defop
from .._tensor_type import Tensor


def _sort_dim(op: str, self: Tensor, dim: int) -> int:
    """``dim`` wrapped; RuntimeError for complex input (PyTorch sorts only real and bool tensors)."""
    if self.dtype.is_complex:
        raise RuntimeError(f"{op}: Sort does not support complex dtypes on CPU")
    return wrap_dim(op, dim, self.ndim)


def _order(a: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The stable sorting permutation of ``a`` along ``axis``, NaN as the
    largest value (PyTorch's order): descending sorts the reversed slice
    ascending and reverses the result, so ties keep their first-come order."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    backwards = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
    return cast(np.ndarray, n - 1 - np.flip(backwards, axis))


def _sorted(a: np.ndarray, axis: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    """The values and int64 indices of ``a`` sorted along ``axis``."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    order = _order(a, axis, descending)
    return np.take_along_axis(a, order, axis), order.astype(np.int64, copy=False)


def _dense_order(self: Tensor) -> Optional[list[int]]:
    """The dims of ``self`` from the largest stride to the smallest if its
    elements fill its memory without overlap in some order other than
    C-contiguous (a transposed or column-major tensor), else None. Results
    made like it (PyTorch's empty_like, preserve_format) take its strides."""
    shape, strides = list(self.shape), list(self.stride())
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    if order == list(range(len(shape))):
        return None
    packed = contiguous_strides([shape[d] for d in order])
    dense = all(shape[d] == 1 or strides[d] == stride for d, stride in zip(order, packed))
    return order if dense else None


def _sort_cpu(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    """values and indices, laid out as ``self`` when it is dense (PyTorch's sort makes them with empty_like)."""
    d = _sort_dim("od::sort", self, dim)
    order = _dense_order(self)
    if order is None:
        return call_numpy_pair(_sorted, self, d, descending)
    values, indices = call_numpy_pair(
        lambda a: tuple(np.ascontiguousarray(r.transpose(order)) for r in _sorted(a, d, descending)), self)
    shape, strides = tuple(self.shape), tuple(self.stride())
    return _C._as_strided(values, shape, strides, 0), _C._as_strided(indices, shape, strides, 0)


def _sort_meta(self: Tensor, dim: int = -1, descending: bool = False) -> tuple[Tensor, Tensor]:
    _sort_dim("od::sort", self, dim)
    values, indices = meta_like(self.shape, self.dtype), meta_like(self.shape, _C.int64)
    if _dense_order(self) is None:
        return values, indices
    shape, strides = tuple(self.shape), tuple(self.stride())
    return _C._as_strided(values, shape, strides, 0), _C._as_strided(indices, shape, strides, 0)


def _selection_setup(dim_position: int) -> Callable[..., None]:
    """The setup of sort or topk, whose ``dim`` (default -1) is argument
    ``dim_position``: saves the input's shape, the dim and the indices returned."""

    def setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        self = inputs[0]
        ctx.shape = tuple(self.shape)
        ctx.dim = wrap_dim("od::sort", inputs[dim_position] if len(inputs) > dim_position else -1, self.ndim)
        ctx.n_args = len(inputs)
        ctx.save_for_backward(output[1])

    return setup


def _selection_backward(ctx: Any, grad: Tensor, grad_indices: Any) -> tuple[Any, ...]:
    """The values' gradient scattered into zeros at the returned indices.
    PyTorch: derivatives.yaml sort and topk (value_selecting_reduction_backward)."""
    (indices,) = ctx.saved_tensors
    g = grad
    if ctx.shape:
        g = indexing.scatter_add(factories.zeros(list(ctx.shape), dtype=grad.dtype, device=grad.device), ctx.dim,
                                 indices, grad)
    return (g,) + (None,) * (int(ctx.n_args) - 1)


sort = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", tags=CORE,
    cpu=_sort_cpu, meta=_sort_meta, backward=_selection_backward, setup_context=_selection_setup(1)))


def _topk_dim(self: Tensor, k: int, dim: int) -> int:
    """``dim`` wrapped; RuntimeError unless 0 <= k <= the size along it (1 for a 0-d tensor)."""
    d = _sort_dim("od::topk", self, dim)
    size = self.shape[d] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError(f"od::topk: selected index k out of range (k={k}, size {size} along dimension {dim})")
    return d


def _top(a: np.ndarray, k: int, axis: int, largest: bool, in_order: bool) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest (or smallest) values of ``a`` along ``axis`` and their int64 indices, NaN the
    largest, chosen and ordered as PyTorch's CPU kernel does, equal values included (Note [topk's order
    among equal values] in csrc/python/TopK.cpp); ``in_order`` False leaves them in the order its
    selection does."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(a, axis, -1)
    keys = moved.reshape(math.prod(moved.shape[:-1]), moved.shape[-1])
    keys = np.ascontiguousarray(keys, dtype=np.float64 if a.dtype.kind in "fc" else np.int64)
    chosen = _C._topk_indices(keys, k, largest, in_order).reshape(moved.shape[:-1] + (k,))
    order = np.moveaxis(chosen, -1, axis)
    return np.take_along_axis(a, order, axis), order


def _topk_cpu(self: Tensor, k: int, dim: int = -1, largest: bool = True,
              sorted: bool = True) -> tuple[Tensor, Tensor]:
    d = _topk_dim(self, k, dim)
    return call_numpy_pair(_top, self, k, d, largest, sorted)


def _topk_meta(self: Tensor, k: int, dim: int = -1, largest: bool = True,
               sorted: bool = True) -> tuple[Tensor, Tensor]:
    d = _topk_dim(self, k, dim)
    shape = [k if i == d else n for i, n in enumerate(self.shape)]
    return meta_like(shape, self.dtype), meta_like(shape, _C.int64)


topk = cast(PairOp, defop(
    "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)",
    tags=CORE, cpu=_topk_cpu, meta=_topk_meta, backward=_selection_backward, setup_context=_selection_setup(2)))
