"""Bitwise and logical operators from the Core ATen opset: bitwise_and / or /
xor (Tensor and Scalar overloads, and their in-place forms behind ``&=``,
``|=``, ``^=``) on integer and bool tensors, and logical_and / or / xor,
whose results are bool. PyTorch's type promotion (Note [Elementwise type
promotion] in _pointwise.py); not differentiable."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._pointwise import inplace_of, pointwise
from ._registry import INPLACE_POINTWISE, POINTWISE, Op, defop


def _integral(name: str, ufunc: np.ufunc) -> Callable[[Any, Any], Any]:
    """``ufunc`` on operands of an integer or bool compute dtype; NotImplementedError naming the operator and
    the dtype otherwise (PyTorch: '"bitwise_and_cpu" not implemented for 'Float'')."""

    def bitwise(a: Any, b: Any) -> Any:
        dtype = np.asarray(a).dtype
        if dtype.kind not in "biu":
            raise NotImplementedError(f"od::{name}: not implemented for {dtype} tensors (bitwise operators take "
                                      f"integer and bool tensors)")
        return ufunc(a, b)

    bitwise.__name__ = name
    return bitwise


def _bitwise(name: str, ufunc: np.ufunc) -> tuple[Op, Op, Op, Op]:
    """The Tensor and Scalar overloads of ``name`` and of its in-place form ``name_``."""
    fn = _integral(name, ufunc)
    return (defop(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                  **pointwise(f"od::{name}.Tensor", fn), differentiable=False),
            defop(f"{name}.Scalar(Tensor self, Scalar other) -> Tensor", tags=POINTWISE,
                  **pointwise(f"od::{name}.Scalar", fn), differentiable=False),
            defop(f"{name}_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", tags=INPLACE_POINTWISE,
                  **inplace_of(f"od::{name}_.Tensor", fn), differentiable=False),
            defop(f"{name}_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", tags=INPLACE_POINTWISE,
                  **inplace_of(f"od::{name}_.Scalar", fn), differentiable=False))


def _logical(name: str, ufunc: np.ufunc) -> Op:
    return defop(f"{name}(Tensor self, Tensor other) -> Tensor", tags=POINTWISE, **pointwise(f"od::{name}", ufunc),
                 differentiable=False)


# (Declared: other modules' references to them are checked before the tuple assignments are inferred.)
bitwise_and: Op
bitwise_and_scalar: Op
bitwise_and_: Op
bitwise_and_scalar_: Op
bitwise_or: Op
bitwise_or_scalar: Op
bitwise_or_: Op
bitwise_or_scalar_: Op
bitwise_xor: Op
bitwise_xor_scalar: Op
bitwise_xor_: Op
bitwise_xor_scalar_: Op
bitwise_and, bitwise_and_scalar, bitwise_and_, bitwise_and_scalar_ = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or, bitwise_or_scalar, bitwise_or_, bitwise_or_scalar_ = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor, bitwise_xor_scalar, bitwise_xor_, bitwise_xor_scalar_ = _bitwise("bitwise_xor", np.bitwise_xor)
logical_and: Op = _logical("logical_and", np.logical_and)
logical_or: Op = _logical("logical_or", np.logical_or)
logical_xor: Op = _logical("logical_xor", np.logical_xor)
