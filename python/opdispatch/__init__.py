"""opdispatch: a standalone operator dispatcher (schemas, dispatch keys, boxed
and unboxed kernels, Python kernels) with its own small tensor type and a
built-in operator library (``od``)."""
from __future__ import annotations

# The package version (pyproject.toml reads it from here).
__version__ = "0.1.0"
from typing import Any

from . import _C as _C
from ._lazy import lazy_getattr as _lazy_getattr
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
from ._type_promotion import can_cast, promote_types, result_type
from . import autograd
from ._library import autograd as _library_autograd
from ._checks import (
    _check as _check,
    _check_index as _check_index,
    _check_is_size as _check_is_size,
    _check_not_implemented as _check_not_implemented,
    _check_type as _check_type,
    _check_value as _check_value,
    _check_with as _check_with,
)
from ._layout import layout, strided
from .autograd.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled

# PyTorch's dtype aliases (torch.float is torch.float32, ...). There is no
# bfloat16 alias because opdispatch tensors have no bfloat16 dtype.
float = float32
double = float64
half = float16
long = int64
int = int32
short = int16
cfloat = complex64
cdouble = complex128

_library_autograd.install_not_implemented_fallback()

# Loaded on first use, so that `import opdispatch` stays lean: name -> (module, attribute or None for the module).
_LAZY = {
    "_custom_ops": ("._custom_ops", None),
    "cpp_extension": (".cpp_extension", None),
    "explain": ("._explain", "explain"),
    "nn": (".nn", None),
    "testing": (".testing", None),
    "types": (".types", None),
}

__all__ = [
    "Tag",
    "Tensor",
    "autograd",
    "bool",
    "can_cast",
    "cdouble",
    "cfloat",
    "complex64",
    "complex128",
    "cpp_extension",  # noqa: F405  (lazy: __getattr__)
    "device",
    "double",
    "dtype",
    "enable_grad",
    "float",
    "explain",  # noqa: F405  (lazy: __getattr__)
    "float16",
    "float32",
    "float64",
    "from_numpy",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_grad_enabled",
    "layout",
    "library",
    "long",
    "nn",  # noqa: F405  (lazy: __getattr__)
    "no_grad",
    "ops",
    "promote_types",
    "result_type",
    "set_grad_enabled",
    "short",
    "strided",
    "testing",  # noqa: F405  (lazy: __getattr__)
    "types",  # noqa: F405  (lazy: __getattr__)
    "uint8",
    *_functional.__all__,
]


_load_lazy = _lazy_getattr(globals(), _LAZY)


def __getattr__(name: str) -> Any:
    return _load_lazy(name)


def __dir__() -> list[str]:
    return sorted(__all__)
