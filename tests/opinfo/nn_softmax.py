"""Samples of _softmax and _log_softmax (_builtins/softmax.py; softmax.int,
log_softmax.int and their gradient operators are in op_db.py) and of
cross_entropy_loss (_builtins/loss.py)."""
from __future__ import annotations

import numpy as np

from op_db import Const, OpInfo, S, a, pos


def _softmax(x: np.ndarray, dim: int, half_to_float: bool = False) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _probabilities(*shape: int) -> np.ndarray:
    p = pos(*shape)
    return p / p.sum(axis=1, keepdims=True)


OPS = [
    OpInfo("_softmax", [S(a(2, 3), 1, False), S(a(2, 3, 2), 0, False), S(a(4).astype(np.float32), -1, False),
                        S(a(0, 3), 1, False)], ref=_softmax),
    OpInfo("_log_softmax", [S(a(2, 3), 1, False), S(a(2, 3, 2), -1, False), S(a(0, 3), 1, False)],
           ref=lambda x, dim, h: np.log(_softmax(x, dim))),
    OpInfo("cross_entropy_loss", [
        S(a(4, 3), np.array([0, 2, 1, 1])),
        S(a(4, 3), np.array([0, 2, -100, 1]), Const(pos(3)), 1, -100, 0.1),
        S(a(4, 3), np.array([0, 2, 1, 1]), None, 0, -100, 0.2),
        S(a(4, 3), np.array([0, 2, 1, 1]), None, 2),
        S(a(2, 3, 2), np.array([[0, 2], [1, 1]])),
        S(a(2, 3, 2), np.array([[0, 2], [1, 1]]), None, 0),
        S(a(3), np.array(1)),
        S(a(4, 3), Const(_probabilities(4, 3))),
        S(a(4, 3), Const(_probabilities(4, 3)), Const(pos(3)), 0, -100, 0.3),
    ]),
]
