"""Joining, repeating and reordering tensors: cat (along an existing dimension), stack (along a new one),
repeat and flip."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import views
from ._numpy import call_numpy, check_device, meta_like, result_dtype, wrap_dim
from ._output_strides import call_numpy_strided, preserved_strides
from ._registry import CORE, PT2, Op, defop
from .._tensor_type import Tensor


def _cat_shape(tensors: Sequence[Tensor], dim: int) -> tuple[int, tuple[int, ...]]:
    """The wrapped dim and the output shape of cat; RuntimeError naming the shapes that do not fit."""
    op = "od::cat"
    if not tensors:
        raise RuntimeError(f"{op}: expected a non-empty list of Tensors")
    check_device(op, *tensors)
    first = tensors[0]
    if first.ndim == 0:
        raise RuntimeError(f"{op}: zero-dimensional tensor (at position 0) cannot be concatenated")
    d = wrap_dim(op, dim, first.ndim)
    for i, t in enumerate(tensors):
        if t.ndim != first.ndim or any(a != b for k, (a, b) in enumerate(zip(t.shape, first.shape)) if k != d):
            raise RuntimeError(f"{op}: sizes of tensors must match except in dimension {d}: tensor 0 has shape "
                               f"{list(first.shape)} and tensor {i} has shape {list(t.shape)}")
    shape = list(first.shape)
    shape[d] = sum(t.shape[d] for t in tensors)
    return d, tuple(shape)


def _concatenate(arrays: list[np.ndarray], axis: int, dtype: np.dtype) -> np.ndarray:
    return np.concatenate(arrays, axis=axis, dtype=dtype)


def _stack(arrays: list[np.ndarray], axis: int, dtype: np.dtype) -> np.ndarray:
    return np.stack(arrays, axis=axis, dtype=dtype)


def _cat_cpu(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    d, _ = _cat_shape(tensors, dim)
    return call_numpy(_concatenate, list(tensors), d, result_dtype(*tensors))


def _cat_meta(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    return meta_like(_cat_shape(tensors, dim)[1], result_dtype(*tensors))


def _cat_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    tensors, dim = inputs
    ctx.dim = _cat_shape(tensors, dim)[0]
    ctx.sizes = [t.shape[ctx.dim] for t in tensors]


def _cat_backward(ctx: Any, grad: Tensor) -> tuple[list[Tensor], None]:
    starts = np.cumsum([0] + ctx.sizes)
    return [views.slice_(grad, ctx.dim, int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])], None


cat: Op = defop("cat(Tensor[] tensors, int dim=0) -> Tensor", tags=CORE, cpu=_cat_cpu, meta=_cat_meta,
                backward=_cat_backward, setup_context=_cat_setup)


def _stack_dim(tensors: Sequence[Tensor], dim: int) -> int:
    op = "od::stack"
    if not tensors:
        raise RuntimeError(f"{op}: expected a non-empty list of Tensors")
    check_device(op, *tensors)
    for i, t in enumerate(tensors):
        if tuple(t.shape) != tuple(tensors[0].shape):
            raise RuntimeError(f"{op}: stack expects each tensor to be equal size, but got {list(tensors[0].shape)} "
                               f"at entry 0 and {list(t.shape)} at entry {i}")
    return wrap_dim(op, dim, tensors[0].ndim + 1)


def _stack_cpu(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    d = _stack_dim(tensors, dim)
    return call_numpy(_stack, list(tensors), d, result_dtype(*tensors))


def _stack_meta(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    d = _stack_dim(tensors, dim)
    shape = list(tensors[0].shape)
    shape.insert(d, len(tensors))
    return meta_like(shape, result_dtype(*tensors))


def _stack_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    tensors, dim = inputs
    ctx.dim, ctx.n = _stack_dim(tensors, dim), len(tensors)


stack: Op = defop("stack(Tensor[] tensors, int dim=0) -> Tensor", tags=PT2, cpu=_stack_cpu, meta=_stack_meta,
                  backward=lambda ctx, grad: ([views.select(grad, ctx.dim, i) for i in range(ctx.n)], None),
                  setup_context=_stack_setup)


# --- flip ---------------------------------------------------------------------------------


def _flip_dims(self: Tensor, dims: Sequence[int]) -> tuple[int, ...]:
    """``dims`` wrapped; RuntimeError for a repeated dimension, with PyTorch's message."""
    wrapped = tuple(wrap_dim("od::flip", d, self.ndim) for d in dims)
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"od::flip: dim {d} appears multiple times in the list of dims")
    return wrapped


def _flip_cpu(self: Tensor, dims: Sequence[int]) -> Tensor:
    """A copy laid out as self (PyTorch: empty_like with preserve_format, then a TensorIterator copy)."""
    return call_numpy_strided(self.shape, preserved_strides(self), np.flip, self,
                              _flip_dims(self, dims) if self.ndim else None)


def _flip_meta(self: Tensor, dims: Sequence[int]) -> Tensor:
    _flip_dims(self, dims)
    return meta_like(self.shape, self.dtype, preserved_strides(self))


def _flip_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dims = list(inputs[1])


flip: Op = defop("flip(Tensor self, int[] dims) -> Tensor", tags=CORE, cpu=_flip_cpu, meta=_flip_meta,
                 backward=lambda ctx, grad: (flip(grad, ctx.dims), None), setup_context=_flip_setup)


# --- repeat -------------------------------------------------------------------------------


def _repeat_shape(self: Tensor, repeats: Sequence[int]) -> tuple[int, ...]:
    """The result's shape: ``self``'s shape, padded with leading 1s to
    len(repeats) dims, times ``repeats``; RuntimeError (PyTorch's messages)
    for too few repeats or a negative one."""
    if len(repeats) < self.ndim:
        raise RuntimeError("od::repeat: Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded = (1,) * (len(repeats) - self.ndim) + tuple(self.shape)
    shape = [r * s for r, s in zip(repeats, padded)]
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"od::repeat: Trying to create tensor with negative dimension "
                           f"{min(shape)}: {shape}")
    return tuple(shape)


def _repeat_cpu(self: Tensor, repeats: Sequence[int]) -> Tensor:
    _repeat_shape(self, repeats)
    return call_numpy(np.tile, self, tuple(repeats))


def _repeat_meta(self: Tensor, repeats: Sequence[int]) -> Tensor:
    return meta_like(_repeat_shape(self, repeats), self.dtype)


def _repeat_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.shape, ctx.repeats = tuple(inputs[0].shape), list(inputs[1])


def _repeat_backward(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    """Each element's gradient is the sum over its copies: ``grad`` split
    into (repeat, size) pairs per dim and summed over the repeats.
    PyTorch: repeat_backward in FunctionsManual.cpp."""
    from .reduction import sum_dim  # reduction imports this module

    padded = (1,) * (len(ctx.repeats) - len(ctx.shape)) + ctx.shape
    pairs = [n for r, s in zip(ctx.repeats, padded) for n in (r, s)]
    summed = sum_dim(views.reshape(grad, pairs), list(range(0, len(pairs), 2))) if pairs else grad
    return views.reshape(summed, list(ctx.shape)), None


repeat: Op = defop("repeat(Tensor self, SymInt[] repeats) -> Tensor", tags=CORE, cpu=_repeat_cpu, meta=_repeat_meta,
                   backward=_repeat_backward, setup_context=_repeat_setup)
