"""Samples of the unary operators of _builtins/unary_math.py (NumPy references;
PyTorch's values are checked in tests/test_unary_math_ops.py)."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a, ints, mask, pos


def unit(*shape: int) -> np.ndarray:
    """Values with 0.045 <= |x| <= 0.9: inside the domains of acos, asin and atanh."""
    return a(*shape) * 0.45


def _keep_integers(fn):
    return lambda x: x.copy() if x.dtype.kind in "biu" else fn(x)


OPS = [
    OpInfo("acos", [S(unit(2, 3)), S(unit(3).astype(np.float32))], ref=np.arccos),
    OpInfo("asin", [S(unit(2, 3)), S(unit(3).astype(np.float32))], ref=np.arcsin),
    OpInfo("atan", [S(a(2, 3)), S(a())], ref=np.arctan),
    OpInfo("acosh", [S(pos(2, 3) + 1.0)], ref=np.arccosh),
    OpInfo("asinh", [S(a(2, 3))], ref=np.arcsinh),
    OpInfo("atanh", [S(unit(2, 3))], ref=np.arctanh),
    OpInfo("cosh", [S(a(2, 3))], ref=np.cosh),
    OpInfo("sinh", [S(a(2, 3)), S(a(3).astype(np.float32))], ref=np.sinh),
    OpInfo("tan", [S(unit(2, 3))], ref=np.tan),
    OpInfo("expm1", [S(a(2, 3))], ref=np.expm1),
    OpInfo("log1p", [S(pos(2, 3))], ref=np.log1p),
    OpInfo("log2", [S(pos(2, 3))], ref=np.log2),
    OpInfo("log10", [S(pos(2, 3)), S(pos(0, 3))], ref=np.log10),
    OpInfo("reciprocal", [S(a(2, 3))], ref=np.reciprocal),
    OpInfo("rsqrt", [S(pos(2, 3))], ref=lambda x: 1 / np.sqrt(x)),
    OpInfo("sign", [S(a(2, 3)), S(ints(4)), S(mask(3))], ref=lambda x: x.copy() if x.dtype == bool else np.sign(x)),
    OpInfo("ceil", [S(a(2, 3)), S(ints(4))], ref=_keep_integers(np.ceil)),
    OpInfo("floor", [S(a(2, 3)), S(ints(4))], ref=_keep_integers(np.floor)),
    OpInfo("round", [S(a(2, 3)), S(ints(4))], ref=_keep_integers(np.round)),
    OpInfo("trunc", [S(a(2, 3)), S(ints(4))], ref=_keep_integers(np.trunc)),
    OpInfo("isnan", [S(np.array([1.0, np.nan, np.inf])), S(ints(3))], ref=np.isnan, grad=False),
    OpInfo("isinf", [S(np.array([1.0, -np.inf, np.inf, np.nan]))], ref=np.isinf, grad=False),
    OpInfo("logical_not", [S(a(2, 3)), S(mask(3)), S(ints(3))], ref=np.logical_not, grad=False),
    OpInfo("bitwise_not", [S(ints(2, 3)), S(mask(3))], ref=np.invert, grad=False),
]
