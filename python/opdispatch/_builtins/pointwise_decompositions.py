"""Everyday non-core pointwise operators that PyTorch 2.13 implements as
CompositeImplicitAutograd kernels, here the same way: a decomposition into
core ``od`` operators that serves every dispatch key (autograd comes from
the operators it calls) and that ``OpOverload.decompose()`` runs. The
aliases (negative, absolute, fix, arccos, divide, multiply, subtract,
true_divide, clip, min.other, ...) call their operator; square, relu6 and selu
compute with core operators as PyTorch's kernels do.
PyTorch: the CompositeImplicitAutograd entries of native_functions.yaml."""
from __future__ import annotations

from typing import Any, Optional

from . import activation, binary_math, elementwise, unary_math
from ._registry import NONCORE_POINTWISE, PT2, Op, defop
from .._tensor_type import Tensor

#: selu's alpha and scale (Klambauer et al., 2017), as PyTorch's selu kernel writes them.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _positive(self: Tensor) -> Tensor:
    if self.dtype.name == "bool":
        raise RuntimeError("od::positive: The `+` operator, on a bool tensor is not supported.")
    return self


def _div_mode(self: Tensor, other: Any, *, rounding_mode: Optional[str] = None) -> Tensor:
    if rounding_mode is None:
        return elementwise.div(self, other)
    return binary_math.div_tensor_mode(self, other, rounding_mode=rounding_mode)


def _clip(self: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002  (PyTorch's argument names)
    return binary_math.clamp(self, min, max)


def _clip_tensor(self: Tensor, min: Optional[Tensor] = None, max: Optional[Tensor] = None) -> Tensor:  # noqa: A002
    return binary_math.clamp_tensor(self, min, max)


square: Op = defop("square(Tensor self) -> Tensor", tags=NONCORE_POINTWISE,
                   composite=lambda self: elementwise.pow_tensor_scalar(self, 2))
true_divide: Op = defop("true_divide.Tensor(Tensor self, Tensor other) -> Tensor", tags=NONCORE_POINTWISE,
                        composite=elementwise.div)
true_divide_scalar: Op = defop("true_divide.Scalar(Tensor self, Scalar other) -> Tensor", tags=PT2,
                               composite=elementwise.div_scalar)
min_other: Op = defop("min.other(Tensor self, Tensor other) -> Tensor", tags=NONCORE_POINTWISE,
                      composite=elementwise.minimum)
max_other: Op = defop("max.other(Tensor self, Tensor other) -> Tensor", tags=NONCORE_POINTWISE,
                      composite=elementwise.maximum)
divide: Op = defop("divide.Tensor(Tensor self, Tensor other) -> Tensor", tags=PT2, composite=elementwise.div)
divide_scalar: Op = defop("divide.Scalar(Tensor self, Scalar other) -> Tensor", tags=PT2,
                          composite=elementwise.div_scalar)
divide_tensor_mode: Op = defop("divide.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                               tags=PT2, composite=_div_mode)
multiply: Op = defop("multiply.Tensor(Tensor self, Tensor other) -> Tensor", tags=PT2, composite=elementwise.mul)
subtract: Op = defop("subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", tags=PT2,
                     composite=elementwise.sub)
negative: Op = defop("negative(Tensor self) -> Tensor", tags=PT2, composite=elementwise.neg)
absolute: Op = defop("absolute(Tensor self) -> Tensor", tags=PT2, composite=elementwise.abs)
positive: Op = defop("positive(Tensor(a) self) -> Tensor(a)", tags=NONCORE_POINTWISE, composite=_positive)
fix: Op = defop("fix(Tensor self) -> Tensor", tags=PT2, composite=unary_math.trunc)
arccos: Op = defop("arccos(Tensor self) -> Tensor", tags=PT2, composite=unary_math.acos)
arcsin: Op = defop("arcsin(Tensor self) -> Tensor", tags=PT2, composite=unary_math.asin)
arctan: Op = defop("arctan(Tensor self) -> Tensor", tags=PT2, composite=unary_math.atan)
arctan2: Op = defop("arctan2(Tensor self, Tensor other) -> Tensor", tags=PT2, composite=binary_math.atan2)
clip: Op = defop("clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", tags=NONCORE_POINTWISE,
                 composite=_clip)
clip_tensor: Op = defop("clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor",
                        tags=NONCORE_POINTWISE, composite=_clip_tensor)
relu6: Op = defop("relu6(Tensor self) -> Tensor", tags=NONCORE_POINTWISE,
                  composite=lambda self: activation.hardtanh(self, 0, 6))
selu: Op = defop("selu(Tensor self) -> Tensor", tags=NONCORE_POINTWISE,
                 composite=lambda self: activation.elu(self, _SELU_ALPHA, _SELU_SCALE))
