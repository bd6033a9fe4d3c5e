"""The bridge from kernels to NumPy (the kernel library): arrays of tensors,
tensors of arrays, dtypes, broadcasting, and metadata-only outputs."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import _C


def arr(t: _C.TensorBase) -> np.ndarray:
    """The NumPy view of a cpu tensor's memory (kernels run below autograd)."""
    return t.numpy(force=True)


def tensor(a: Any) -> _C.TensorBase:
    """A tensor owning the result array ``a`` (made C-contiguous; 0-d stays 0-d)."""
    a = np.asarray(a)
    if not a.flags.c_contiguous:
        a = a.copy(order="C")
    return _C.from_numpy(a)


def np_dtype(t: _C.TensorBase) -> np.dtype:
    return t.dtype.to_numpy()


def result_dtype(op: str, *operands: Any) -> np.dtype:
    """NumPy's type promotion over tensors (their dtypes) and Python scalars
    (weak, as NumPy 2 treats them)."""
    return np.result_type(*[np_dtype(o) if isinstance(o, _C.TensorBase) else o for o in operands])


def broadcast_shape(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of ``shapes``; RuntimeError naming the op and the shapes if they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        listed = " and ".join(str(tuple(s)) for s in shapes)
        raise RuntimeError(f"{op}: the shapes {listed} are not broadcastable") from None


def meta_like(shape: Sequence[int], dtype: Any) -> _C.TensorBase:
    """A contiguous meta tensor: the output of a Meta kernel."""
    return _C.empty(tuple(shape), dtype=dtype, device="meta")


def wrap_dim(op: str, dim: int, ndim: int) -> int:
    """``dim`` in [0, ndim) (negative counts from the end); IndexError naming the op otherwise."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"{op}: dimension {dim} out of range for a tensor with {ndim} dimensions "
                         f"(expected a value in [{-bound}, {bound - 1}])")
    return dim % bound
