"""opdispatch: a standalone operator dispatcher (schemas, dispatch keys, boxed
and unboxed kernels, Python kernels) with its own small tensor type."""
from __future__ import annotations

from . import _C
from ._C import (
    bool,
    complex64,
    complex128,
    device,
    dtype,
    empty,
    float16,
    float32,
    float64,
    from_numpy,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from ._tensor import Tensor
from ._ops import Tag, ops
from . import library

__all__ = [
    "Tag",
    "Tensor",
    "bool",
    "complex64",
    "complex128",
    "device",
    "dtype",
    "empty",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "int8",
    "library",
    "ops",
    "int16",
    "int32",
    "int64",
    "uint8",
]
