"""Comparisons (eq, ne, lt, le, gt, ge; Tensor and Scalar overloads): bool
outputs with NumPy broadcasting; not differentiable."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._pointwise import pointwise
from ._registry import POINTWISE, Op, defop


def _define(name: str, fn: Callable[..., Any]) -> tuple[Op, Op]:
    tensor_op = defop(f"{name}.Tensor(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                      **pointwise(f"od::{name}.Tensor", fn), differentiable=False)
    scalar_op = defop(f"{name}.Scalar(Tensor self, Scalar other) -> Tensor", tags=POINTWISE,
                      **pointwise(f"od::{name}.Scalar", fn), differentiable=False)
    return tensor_op, scalar_op


# (Declared: another module's references to them are checked before the tuple assignments are inferred.)
eq: Op
eq_scalar: Op
ne: Op
ne_scalar: Op
lt: Op
lt_scalar: Op
le: Op
le_scalar: Op
gt: Op
gt_scalar: Op
ge: Op
ge_scalar: Op
eq, eq_scalar = _define("eq", np.equal)
ne, ne_scalar = _define("ne", np.not_equal)
lt, lt_scalar = _define("lt", np.less)
le, le_scalar = _define("le", np.less_equal)
gt, gt_scalar = _define("gt", np.greater)
ge, ge_scalar = _define("ge", np.greater_equal)
