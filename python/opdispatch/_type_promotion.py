"""PyTorch's public type-promotion functions: result_type, promote_types and
can_cast, over the one promotion rule in csrc/opdispatch/core/TypePromotion.h
that the elementwise kernels use."""
from __future__ import annotations

from typing import Union

from . import _C
from ._tensor import Tensor
from .types import Number


def result_type(tensor: Union[Tensor, Number], other: Union[Tensor, Number]) -> _C.dtype:
    """The dtype an elementwise operation on ``tensor`` and ``other`` (tensors
    or Python numbers) computes in: tensors with dimensions first, then 0-d
    tensors, then Python numbers (int as int64, float as float32, complex as
    complex64), a lower class counting only when its category (bool < integer
    < floating < complex) is higher. TypeError for any other operand.
    PyTorch: torch.result_type (at::native::result_type)."""
    return _C._result_type(tensor, other)


def promote_types(type1: _C.dtype, type2: _C.dtype) -> _C.dtype:
    """The smallest dtype both dtypes convert to without losing their kind
    (int8 with uint8: int16; an integer with float16: float16; float64 with
    complex64: complex128). TypeError for a non-dtype. PyTorch: torch.promote_types."""
    return _C._promote_types(type1, type2)


def can_cast(from_: _C.dtype, to: _C.dtype) -> bool:
    """Whether a value of dtype ``from_`` may be cast to ``to`` by type
    promotion's rules: not to a lower category (floating to integer, complex
    to floating, anything else to bool). PyTorch: torch.can_cast."""
    return _C._can_cast(from_, to)
