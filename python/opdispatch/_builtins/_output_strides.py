"""The strides of new outputs that follow their inputs' memory layout, as
PyTorch gives them: an elementwise operator's output (TensorIterator's), and
a copy that preserves its input's layout (empty_like with
memory_format=preserve_format). A Meta kernel and the CPU kernel of such an
operator both take their output's strides from here, so the two agree.

Note [Output strides]
PyTorch's strides of these outputs are a contract code relies on (a
column-major input gives a column-major ``x + 1``, ``x.clone()``,
``zeros_like(x)``). NumPy's functions lay their results out by similar but
not equal rules, and a tensor made from a result is C-contiguous
(_C._call_numpy); so a CPU kernel whose output must follow its inputs runs
its NumPy function through :func:`call_numpy_strided`, which lays the result
out in the strides computed here. Inputs that are all C-contiguous give a
C-contiguous output without computing anything (PyTorch's
compute_elementwise_output_logical_to_physical_perm short-circuits the same
way), which keeps the common call as fast as before.
Strides are in elements; None stands for the C-contiguous ones."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from .. import _C
from ._numpy import PRESERVE_FORMAT, call_numpy, contiguous_strides
from .._tensor_type import Tensor

Strides = Optional[list[int]]


def is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements of a tensor of ``shape`` and ``strides`` fill a
    block of memory exactly once, in some order of its dimensions (size-1
    dimensions, whose strides address nothing, are ignored). PyTorch:
    TensorImpl::compute_non_overlapping_and_dense."""
    expected = 1
    for d in sorted(range(len(shape)), key=lambda d: (strides[d], shape[d])):
        if shape[d] == 1:
            continue
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _channels_last_order(ndim: int) -> list[int]:
    """The dimensions of a channels-last 4-d or 5-d tensor, innermost first (C, then W, H, (D), then N)."""
    return [1, *range(ndim - 1, 1, -1), 0]


def _is_channels_last(t: Tensor) -> bool:
    """PyTorch: compute_channels_last_contiguous_2d / _3d."""
    expected, shape, strides = 1, t.shape, t.stride()
    for d in _channels_last_order(t.ndim):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _dense_strides(shape: Sequence[int], order: Sequence[int], step_of: Callable[[int], int]) -> list[int]:
    """Dense strides of ``shape`` with its dimensions laid out in ``order`` (innermost first), each
    dimension's stride the previous one's times ``step_of(its size)``."""
    strides = [0] * len(shape)
    step = 1
    for d in order:
        strides[d] = step
        step *= step_of(shape[d])
    return strides


def _dimension_order(shape: Sequence[int], operand_strides: list[list[int]]) -> list[int]:
    """The output's dimensions innermost first: an insertion sort of the
    dimensions (starting from the last) by the first operand's strides that
    tell them apart; a broadcast (stride 0) dimension tells nothing, and of
    two equal strides the dimension of smaller size goes inside. PyTorch:
    TensorIteratorBase::reorder_dimensions."""

    def should_swap(d0: int, d1: int) -> int:
        for strides in operand_strides:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return -1 if s0 < s1 else 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    order = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            comparison = should_swap(order[d0], order[d1])
            if comparison > 0:
                order[d0], order[d1] = order[d1], order[d0]
                d1 = d0
            elif comparison < 0:
                break
    return order


def _broadcast_strides(shape: Sequence[int], t: Tensor) -> list[int]:
    """``t``'s strides as an operand of an output of ``shape``: 0 for the dimensions it is broadcast along."""
    lead = len(shape) - t.ndim
    return [0] * lead + [0 if n == 1 and shape[lead + i] != 1 else s
                         for i, (n, s) in enumerate(zip(t.shape, t.stride()))]


def elementwise_strides(shape: Sequence[int], tensors: Sequence[Tensor]) -> Strides:
    """The strides of the output of ``shape`` (the broadcast shape) of an
    elementwise operator on ``tensors`` (None: C-contiguous). Inputs all
    C-contiguous give C-contiguous; inputs of the output's shape all
    channels-last give channels-last, all non-overlapping and dense with
    equal strides give those strides; otherwise the output's dimensions
    are laid out in the order of its inputs' strides (_dimension_order).
    PyTorch: TensorIteratorBase::compute_fast_setup_type, fast_set_up,
    reorder_dimensions, allocate_or_resize_outputs."""
    ndim = len(shape)
    if ndim <= 1 or all(t.is_contiguous() for t in tensors):
        return None
    shape = tuple(shape)
    if all(t.shape == shape for t in tensors):
        if ndim in (4, 5) and all(_is_channels_last(t) for t in tensors):
            return _dense_strides(shape, _channels_last_order(ndim), lambda n: max(n, 1))
        first = tensors[0].stride()
        if all(t.stride() == first for t in tensors) and is_non_overlapping_and_dense(shape, first):
            return list(first)
    order = _dimension_order(shape, [_broadcast_strides(shape, t) for t in tensors])
    return _dense_strides(shape, order, lambda n: n)


def preserved_strides(t: Tensor) -> Strides:
    """The strides of a new tensor that keeps ``t``'s layout
    (memory_format=preserve_format; None: C-contiguous): C-contiguous for a
    contiguous ``t``, ``t``'s own strides if it is non-overlapping and
    dense, else dense strides in the order of ``t``'s. PyTorch: empty_like
    (TensorFactories.cpp), infer_dense_strides."""
    if t.is_contiguous():
        return None
    if is_non_overlapping_and_dense(t.shape, t.stride()):
        return list(t.stride())
    order = _dimension_order(t.shape, [list(t.stride())])
    return _dense_strides(t.shape, order, lambda n: max(n, 1))


#: The memory_format arguments that keep an input's layout: preserve_format, and None (the default of a
#: MemoryFormat? argument, which means preserve_format).
_PRESERVE_FORMATS = (None, PRESERVE_FORMAT)


def like_strides(t: Tensor, memory_format: Any) -> Strides:
    """The strides of a new tensor like ``t`` made with ``memory_format``
    (a dense format, checked by _numpy.check_memory_format): ``t``'s layout
    for preserve_format (:func:`preserved_strides`), else C-contiguous."""
    return preserved_strides(t) if memory_format in _PRESERVE_FORMATS else None


def kept_strides(t: Tensor) -> list[int]:
    """The strides of a copy of ``t`` that keeps them, dense or not
    (select_scatter's, slice_scatter's and copy's result), unless elements of
    ``t`` share memory (a zero stride): then :func:`preserved_strides`.
    PyTorch: clone_preserve_strides."""
    shape, strides = t.shape, t.stride()
    if any(s == 0 and n > 1 for n, s in zip(shape, strides)):
        return preserved_strides(t) or contiguous_strides(shape)
    return list(strides)


def _physical(order: list[int], fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn``'s result (an array or a tuple of arrays) with its dimensions
    transposed to ``order``, C-contiguous (copied only if it is not)."""
    result = fn(*args, **kwargs)
    if isinstance(result, tuple):
        return tuple(np.ascontiguousarray(np.transpose(r, order)) for r in result)
    return np.ascontiguousarray(np.transpose(result, order))


def _call_numpy_strided(shape: Sequence[int], strides: Strides, fn: Callable[..., Any], *args: Any,
                        **kwargs: Any) -> Any:
    """``call_numpy(fn, *args, **kwargs)`` for an ``fn`` returning new arrays
    of ``shape`` (one, or a tuple): their tensors, values laid out in
    ``strides`` (dense; None: C-contiguous, as call_numpy gives). The values
    are copied only when NumPy laid them out otherwise (Note [Output strides])."""
    if strides is None:
        return call_numpy(fn, *args, **kwargs)
    order = sorted(range(len(shape)), key=lambda d: -strides[d])
    result = call_numpy(_physical, order, fn, *args, **kwargs)
    for t in result if isinstance(result, tuple) else (result,):
        _C._set_sizes_and_strides(t, list(shape), strides, 0)
    return result


#: _call_numpy_strided for an fn that returns one array, and for one that returns two (the same function; the
#: names say what the caller's fn returns, as _numpy.call_numpy's do).
call_numpy_strided: Callable[..., Tensor] = _call_numpy_strided
call_numpy_strided_pair: Callable[..., tuple[Tensor, Tensor]] = _call_numpy_strided
