"""Samples of the distance operators of _builtins/distance.py (the matrix
product path of p = 2 needs more than 25 rows, or compute_mode 1)."""
from __future__ import annotations

import math

import numpy as np

from op_db import Const, OpInfo, S, a


def _cdist(x1: np.ndarray, x2: np.ndarray, p: float) -> np.ndarray:
    return np.linalg.norm(x1[..., :, None, :] - x2[..., None, :, :], ord=p, axis=-1) if p not in (0,) else \
        np.count_nonzero(x1[..., :, None, :] - x2[..., None, :, :], axis=-1).astype(x1.dtype)


def _backward(x1: np.ndarray, x2: np.ndarray, p: float) -> object:
    dist = _cdist(x1, x2, p)
    return S(a(*dist.shape), x1, Const(x2), p, Const(dist))


def _pdist_backward(x: np.ndarray, p: float) -> object:
    i, j = np.triu_indices(x.shape[0], 1)
    dist = np.linalg.norm(x[i] - x[j], ord=p, axis=-1)
    return S(a(len(i)), x, p, Const(dist))


OPS = [
    OpInfo("_cdist_forward", [S(a(3, 4), a(5, 4), 2.0, None), S(a(2, 3, 4), a(2, 5, 4), 1.0, None),
                              S(a(3, 2), a(4, 2), 0.5, None), S(a(3, 2), a(4, 2), 3.0, None),
                              S(a(3, 2), a(4, 2), math.inf, None), S(a(3, 2), a(2, 4, 2), 2.0, None),
                              S(a(3, 4), a(5, 4), 2.0, 1), S(a(27, 3), a(4, 3), 2.0, None),
                              S(a(3, 2).astype(np.float32), a(4, 2).astype(np.float32), 2.0, None)]),
    OpInfo("_cdist_backward", [_backward(a(3, 4), a(5, 4), 2.0), _backward(a(3, 2), a(4, 2), 1.0),
                               _backward(a(3, 2), a(4, 2), 3.0), _backward(a(3, 2), a(4, 2), math.inf)], grad=False),
    OpInfo("_pdist_forward", [S(a(4, 3)), S(a(5, 2), 1.0), S(a(4, 3), 3.0), S(a(4, 3), math.inf), S(a(1, 3))]),
    OpInfo("_pdist_backward", [_pdist_backward(a(4, 3), 2.0), _pdist_backward(a(4, 3), 1.0)], grad=False),
    OpInfo("cdist", [S(a(3, 4), a(5, 4)), S(a(2, 3, 2), a(2, 4, 2), 1.0)]),
    OpInfo("pdist", [S(a(4, 3)), S(a(4, 3), 1.0)]),
]
