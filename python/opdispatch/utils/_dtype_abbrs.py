"""Short names of the dtypes ("f32", "i64", "b8"), as logs and graph
printouts use them. PyTorch: torch/utils/_dtype_abbrs.py (dtype.abbr)."""
from __future__ import annotations

from .. import _C

__all__ = ["dtype_abbrs"]

#: {dtype: short name} for every opdispatch dtype.
dtype_abbrs: dict[_C.dtype, str] = {
    _C.uint8: "u8",
    _C.int8: "i8",
    _C.int16: "i16",
    _C.int32: "i32",
    _C.int64: "i64",
    _C.float16: "f16",
    _C.float32: "f32",
    _C.float64: "f64",
    _C.complex64: "c64",
    _C.complex128: "c128",
    _C.bool: "b8",
}
