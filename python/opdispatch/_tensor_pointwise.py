"""The pointwise Tensor methods beyond _tensor.py's arithmetic core: unary
math (acos ... erf, exp2, square), rounding and predicates, atan2, division
with a rounding mode, fmod and remainder, clamp, the bitwise and logical
operators, PyTorch's aliases (negative, absolute, arccos, divide, ...), their
in-place forms, and the Python operators ``&``, ``|``, ``^``, ``~``,
``//``, ``%`` and unary ``+``. opdispatch.Tensor inherits them from
PointwiseMethods; each calls an ``od`` operator through the dispatcher
(Note [Calling operators from methods] in _tensor.py)."""
from __future__ import annotations

import numbers
from types import NotImplementedType
from typing import TYPE_CHECKING, Any, Optional, Union

from . import _C
from ._builtins import binary_math as _bm
from ._builtins import elementwise as _ew
from ._builtins import factories as _fac
from ._builtins import logical as _logic
from ._builtins import pointwise_decompositions as _dec
from ._builtins import unary_math as _unary
from .types import Number

if TYPE_CHECKING:
    from ._tensor import Tensor

_TensorOp = _C._DispatchOperator
_PLAIN_SCALARS = frozenset({int, float, bool})


def is_scalar(x: Any) -> bool:
    """Whether ``x`` is a Python (or NumPy) real number an operator takes as a Scalar."""
    return type(x) in _PLAIN_SCALARS or (isinstance(x, numbers.Real) and not isinstance(x, _C.TensorBase))


def binary(self: Any, other: Any, tensor_op: _TensorOp, scalar_op: _TensorOp) -> Union["Tensor", NotImplementedType]:
    """``tensor_op(self, other)`` for a tensor ``other``, ``scalar_op(self, other)`` for a number, else
    NotImplemented (so Python tries the reflected operator). PyTorch picks the overload the same way."""
    if isinstance(other, _C.TensorBase):
        result: Tensor = tensor_op(self, other)
        return result
    if is_scalar(other):
        result = scalar_op(self, other)
        return result
    return NotImplemented  # type: ignore[no-any-return]  # typeshed's NotImplementedType derives from Any


def scalar_tensor(like: Any, value: Any) -> "Tensor":
    """A 0-d tensor holding ``value`` on ``like``'s device, of the dtype PyTorch gives ``like op value``
    (_C._result_type): the left operand of a reflected operator (``2 / x``, ``7 // x``, ``7 % x``)."""
    return _fac.full([], value, dtype=_C._result_type(like, value), device=like.device)


def _bounds_op(min: Any, max: Any, scalar_op: _TensorOp, tensor_op: _TensorOp) -> _TensorOp:  # noqa: A002
    """clamp's overload for its bounds: the Tensor one when either bound is a tensor."""
    return tensor_op if isinstance(min, _C.TensorBase) or isinstance(max, _C.TensorBase) else scalar_op


def _bounds(op: _TensorOp, self: Any, min: Any, max: Any) -> "Tensor":  # noqa: A002
    """``op(self, min, max)`` passing only the bounds given (Note [Calling operators from methods])."""
    result: Tensor = op(self, min) if max is None else op(self, min, max)
    return result


class PointwiseMethods:
    """The pointwise methods and operators of opdispatch.Tensor (see the module docstring)."""

    __slots__ = ()

    # --- one operand ---------------------------------------------------------------------------------------

    def acos(self) -> "Tensor":
        """Arccosine of each element (od::acos)."""
        return _unary.acos(self)

    def asin(self) -> "Tensor":
        """Arcsine of each element (od::asin)."""
        return _unary.asin(self)

    def atan(self) -> "Tensor":
        """Arctangent of each element (od::atan)."""
        return _unary.atan(self)

    def acosh(self) -> "Tensor":
        """Inverse hyperbolic cosine of each element (od::acosh)."""
        return _unary.acosh(self)

    def asinh(self) -> "Tensor":
        """Inverse hyperbolic sine of each element (od::asinh)."""
        return _unary.asinh(self)

    def atanh(self) -> "Tensor":
        """Inverse hyperbolic tangent of each element (od::atanh)."""
        return _unary.atanh(self)

    def cosh(self) -> "Tensor":
        """Hyperbolic cosine of each element (od::cosh)."""
        return _unary.cosh(self)

    def sinh(self) -> "Tensor":
        """Hyperbolic sine of each element (od::sinh)."""
        return _unary.sinh(self)

    def tan(self) -> "Tensor":
        """Tangent of each element (od::tan)."""
        return _unary.tan(self)

    def expm1(self) -> "Tensor":
        """``exp(x) - 1``, exact near 0, of each element (od::expm1)."""
        return _unary.expm1(self)

    def exp2(self) -> "Tensor":
        """``2 ** x`` of each element (od::exp2)."""
        return _unary.exp2(self)

    def log1p(self) -> "Tensor":
        """``log(1 + x)``, exact near 0, of each element (od::log1p)."""
        return _unary.log1p(self)

    def log2(self) -> "Tensor":
        """Base-2 logarithm of each element (od::log2)."""
        return _unary.log2(self)

    def log10(self) -> "Tensor":
        """Base-10 logarithm of each element (od::log10)."""
        return _unary.log10(self)

    def reciprocal(self) -> "Tensor":
        """``1 / x`` of each element (od::reciprocal)."""
        return _unary.reciprocal(self)

    def rsqrt(self) -> "Tensor":
        """``1 / sqrt(x)`` of each element (od::rsqrt)."""
        return _unary.rsqrt(self)

    def erf(self) -> "Tensor":
        """The error function of each element (od::erf)."""
        return _unary.erf(self)

    def square(self) -> "Tensor":
        """``x ** 2`` of each element (od::square, a decomposition into pow)."""
        return _dec.square(self)

    def sign(self) -> "Tensor":
        """-1, 0 or 1 by the sign of each element (od::sign)."""
        return _unary.sign(self)

    def ceil(self) -> "Tensor":
        """Smallest integer >= x of each element (od::ceil)."""
        return _unary.ceil(self)

    def floor(self) -> "Tensor":
        """Largest integer <= x of each element (od::floor)."""
        return _unary.floor(self)

    def round(self) -> "Tensor":
        """Nearest integer, halves to even, of each element (od::round)."""
        return _unary.round(self)

    def trunc(self) -> "Tensor":
        """Integer part of each element (od::trunc)."""
        return _unary.trunc(self)

    def fix(self) -> "Tensor":
        """PyTorch's alias of trunc (od::fix)."""
        return _dec.fix(self)

    def negative(self) -> "Tensor":
        """PyTorch's alias of neg (od::negative)."""
        return _dec.negative(self)

    def absolute(self) -> "Tensor":
        """PyTorch's alias of abs (od::absolute)."""
        return _dec.absolute(self)

    def positive(self) -> "Tensor":
        """``self`` itself; RuntimeError for a bool tensor (od::positive)."""
        return _dec.positive(self)

    def arccos(self) -> "Tensor":
        """PyTorch's alias of acos (od::arccos)."""
        return _dec.arccos(self)

    def arcsin(self) -> "Tensor":
        """PyTorch's alias of asin (od::arcsin)."""
        return _dec.arcsin(self)

    def arctan(self) -> "Tensor":
        """PyTorch's alias of atan (od::arctan)."""
        return _dec.arctan(self)

    def isnan(self) -> "Tensor":
        """Whether NaN of each element (od::isnan)."""
        return _unary.isnan(self)

    def isinf(self) -> "Tensor":
        """Whether infinite of each element (od::isinf)."""
        return _unary.isinf(self)

    def logical_not(self) -> "Tensor":
        """``not x`` of each element (od::logical_not)."""
        return _unary.logical_not(self)

    def bitwise_not(self) -> "Tensor":
        """``~x`` (integers and bool) of each element (od::bitwise_not)."""
        return _unary.bitwise_not(self)

    # --- two operands ------------------------------------------------------------------------------------------

    def atan2(self, other: "Tensor") -> "Tensor":
        """Arctangent of ``self / other`` in the right quadrant, broadcast (od::atan2)."""
        return _bm.atan2(self, other)

    def arctan2(self, other: "Tensor") -> "Tensor":
        """PyTorch's alias of atan2 (od::arctan2)."""
        return _dec.arctan2(self, other)

    def fmod(self, other: Union["Tensor", Number]) -> "Tensor":
        """C's remainder, the sign of ``self`` (od::fmod.Tensor / .Scalar). Integer division by zero raises."""
        return _checked(binary(self, other, _bm.fmod, _bm.fmod_scalar), "fmod", other)

    def fmod_(self, other: Union["Tensor", Number]) -> "Tensor":
        """In-place fmod (od::fmod_.Tensor / .Scalar)."""
        return _checked(binary(self, other, _bm.fmod_, _bm.fmod_scalar_), "fmod_", other)

    def remainder(self, other: Union["Tensor", Number]) -> "Tensor":
        """Python's remainder, the sign of ``other`` (od::remainder.Tensor / .Scalar)."""
        return _checked(binary(self, other, _bm.remainder, _bm.remainder_scalar), "remainder", other)

    def remainder_(self, other: Union["Tensor", Number]) -> "Tensor":
        """In-place remainder (od::remainder_.Tensor / .Scalar)."""
        return _checked(binary(self, other, _bm.remainder_, _bm.remainder_scalar_), "remainder_", other)

    def floor_divide(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self / other`` rounded down (od::floor_divide / .Scalar)."""
        return _checked(binary(self, other, _bm.floor_divide, _bm.floor_divide_scalar), "floor_divide", other)

    def floor_divide_(self, other: Union["Tensor", Number]) -> "Tensor":
        """In-place floor_divide (od::floor_divide_.Tensor / .Scalar)."""
        return _checked(binary(self, other, _bm.floor_divide_, _bm.floor_divide_scalar_), "floor_divide_", other)

    def true_divide(self, other: Union["Tensor", Number]) -> "Tensor":
        """PyTorch's alias of true division (od::true_divide.Tensor / .Scalar)."""
        return _checked(binary(self, other, _dec.true_divide, _dec.true_divide_scalar), "true_divide", other)

    def divide(self, other: Union["Tensor", Number], *, rounding_mode: Optional[str] = None) -> "Tensor":
        """PyTorch's alias of div (od::divide.Tensor / .Scalar / .Tensor_mode)."""
        if rounding_mode is not None:
            if isinstance(other, _C.TensorBase):
                return _dec.divide_tensor_mode(self, other, rounding_mode=rounding_mode)
            return _bm.div_scalar_mode(self, other, rounding_mode=rounding_mode)
        return _checked(binary(self, other, _dec.divide, _dec.divide_scalar), "divide", other)

    def multiply(self, other: Union["Tensor", Number]) -> "Tensor":
        """PyTorch's alias of mul (od::multiply.Tensor)."""
        return _checked(binary(self, other, _dec.multiply, _ew.mul_scalar), "multiply", other)

    def subtract(self, other: Union["Tensor", Number], *, alpha: Number = 1) -> "Tensor":
        """PyTorch's alias of sub (od::subtract.Tensor)."""
        if not isinstance(other, _C.TensorBase):
            return _ew.sub_scalar(self, other) if alpha == 1 else _ew.sub_scalar(self, other, alpha)
        return _dec.subtract(self, other) if alpha == 1 else _dec.subtract(self, other, alpha=alpha)

    def clamp(self, min: Any = None, max: Any = None) -> "Tensor":  # noqa: A002  (PyTorch's names)
        """Each element limited to [min, max]; max wins where min > max; bounds are numbers or tensors
        (od::clamp / od::clamp.Tensor). RuntimeError if both are None."""
        return _bounds(_bounds_op(min, max, _bm.clamp, _bm.clamp_tensor), self, min, max)

    def clamp_(self, min: Any = None, max: Any = None) -> "Tensor":  # noqa: A002
        """In-place clamp (od::clamp_ / od::clamp_.Tensor)."""
        return _bounds(_bounds_op(min, max, _bm.clamp_, _bm.clamp_tensor_), self, min, max)

    def clip(self, min: Any = None, max: Any = None) -> "Tensor":  # noqa: A002
        """PyTorch's alias of clamp (od::clip / od::clip.Tensor)."""
        return _bounds(_bounds_op(min, max, _dec.clip, _dec.clip_tensor), self, min, max)

    def clamp_min(self, min: Any) -> "Tensor":  # noqa: A002
        """``max(self, min)`` (od::clamp_min / .Tensor)."""
        return _checked(binary(self, min, _bm.clamp_min_tensor, _bm.clamp_min), "clamp_min", min)

    def clamp_min_(self, min: Number) -> "Tensor":  # noqa: A002
        """In-place clamp_min (od::clamp_min_)."""
        return _bm.clamp_min_(self, min)

    def clamp_max(self, max: Any) -> "Tensor":  # noqa: A002
        """``min(self, max)`` (od::clamp_max / .Tensor)."""
        return _checked(binary(self, max, _bm.clamp_max_tensor, _bm.clamp_max), "clamp_max", max)

    def clamp_max_(self, max: Number) -> "Tensor":  # noqa: A002
        """In-place clamp_max (od::clamp_max_)."""
        return _bm.clamp_max_(self, max)

    def bitwise_and(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self & other`` of integer or bool tensors (od::bitwise_and.Tensor / .Scalar)."""
        return _checked(binary(self, other, _logic.bitwise_and, _logic.bitwise_and_scalar), "bitwise_and", other)

    def bitwise_and_(self, other: Union["Tensor", Number]) -> "Tensor":
        """In-place bitwise_and (od::bitwise_and_.Tensor / .Scalar)."""
        return _checked(binary(self, other, _logic.bitwise_and_, _logic.bitwise_and_scalar_), "bitwise_and_", other)

    def bitwise_or(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self | other`` of integer or bool tensors (od::bitwise_or.Tensor / .Scalar)."""
        return _checked(binary(self, other, _logic.bitwise_or, _logic.bitwise_or_scalar), "bitwise_or", other)

    def bitwise_or_(self, other: Union["Tensor", Number]) -> "Tensor":
        """In-place bitwise_or (od::bitwise_or_.Tensor / .Scalar)."""
        return _checked(binary(self, other, _logic.bitwise_or_, _logic.bitwise_or_scalar_), "bitwise_or_", other)

    def bitwise_xor(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self ^ other`` of integer or bool tensors (od::bitwise_xor.Tensor / .Scalar)."""
        return _checked(binary(self, other, _logic.bitwise_xor, _logic.bitwise_xor_scalar), "bitwise_xor", other)

    def bitwise_xor_(self, other: Union["Tensor", Number]) -> "Tensor":
        """In-place bitwise_xor (od::bitwise_xor_.Tensor / .Scalar)."""
        return _checked(binary(self, other, _logic.bitwise_xor_, _logic.bitwise_xor_scalar_), "bitwise_xor_", other)

    def logical_and(self, other: "Tensor") -> "Tensor":
        """``self and other`` of each pair, as bool (od::logical_and)."""
        return _logic.logical_and(self, other)

    def logical_or(self, other: "Tensor") -> "Tensor":
        """``self or other`` of each pair, as bool (od::logical_or)."""
        return _logic.logical_or(self, other)

    def logical_xor(self, other: "Tensor") -> "Tensor":
        """``bool(self) != bool(other)`` of each pair (od::logical_xor)."""
        return _logic.logical_xor(self, other)

    # --- Python operators -------------------------------------------------------------------------------------

    def __and__(self, other: Any) -> "Tensor":
        return binary(self, other, _logic.bitwise_and, _logic.bitwise_and_scalar)

    __rand__ = __and__

    def __or__(self, other: Any) -> "Tensor":
        return binary(self, other, _logic.bitwise_or, _logic.bitwise_or_scalar)

    __ror__ = __or__

    def __xor__(self, other: Any) -> "Tensor":
        return binary(self, other, _logic.bitwise_xor, _logic.bitwise_xor_scalar)

    __rxor__ = __xor__

    def __iand__(self, other: Any) -> "Tensor":
        return binary(self, other, _logic.bitwise_and_, _logic.bitwise_and_scalar_)

    def __ior__(self, other: Any) -> "Tensor":
        return binary(self, other, _logic.bitwise_or_, _logic.bitwise_or_scalar_)

    def __ixor__(self, other: Any) -> "Tensor":
        return binary(self, other, _logic.bitwise_xor_, _logic.bitwise_xor_scalar_)

    def __invert__(self) -> "Tensor":
        return _unary.bitwise_not(self)

    def __pos__(self) -> "Tensor":
        return _dec.positive(self)

    def __floordiv__(self, other: Any) -> "Tensor":
        return binary(self, other, _bm.floor_divide, _bm.floor_divide_scalar)

    def __rfloordiv__(self, other: Any) -> "Tensor":
        if not is_scalar(other):
            return NotImplemented
        return _bm.floor_divide(scalar_tensor(self, other), self)

    def __ifloordiv__(self, other: Any) -> "Tensor":
        return binary(self, other, _bm.floor_divide_, _bm.floor_divide_scalar_)

    def __mod__(self, other: Any) -> "Tensor":
        return binary(self, other, _bm.remainder, _bm.remainder_scalar)

    def __rmod__(self, other: Any) -> "Tensor":
        if not is_scalar(other):
            return NotImplemented
        return _bm.remainder(scalar_tensor(self, other), self)

    def __imod__(self, other: Any) -> "Tensor":
        return binary(self, other, _bm.remainder_, _bm.remainder_scalar_)


def _checked(result: Union["Tensor", NotImplementedType], method: str, other: Any) -> "Tensor":
    """A named method's result: TypeError where ``binary`` found no overload (operators return NotImplemented)."""
    if result is NotImplemented:
        raise TypeError(f"{method}(): argument 'other' must be a Tensor or a number, not {type(other).__name__}")
    return result
