"""opdispatch: a standalone operator dispatcher (schemas, dispatch keys, boxed
and unboxed kernels, Python kernels) with its own small tensor type and a
built-in operator library (``od``)."""
from __future__ import annotations

from . import _C
from ._C import (
    bool,
    complex64,
    complex128,
    device,
    dtype,
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
from . import _builtins, _functional  # noqa: F401  (_builtins registers the od operators)
from ._functional import *  # noqa: F401,F403  (factories and functional forms of Tensor methods)
from . import autograd, testing
from ._library import autograd as _library_autograd

_library_autograd.install_not_implemented_fallback()

__all__ = [
    "Tag",
    "Tensor",
    "autograd",
    "bool",
    "complex64",
    "complex128",
    "device",
    "dtype",
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "int8",
    "library",
    "int16",
    "int32",
    "int64",
    "ops",
    "testing",
    "uint8",
    *_functional.__all__,
]
