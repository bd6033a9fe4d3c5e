"""Samples of the dropout operators of _builtins/dropout.py. Only the
deterministic cases (p 0 or 1, evaluation) are sampled: gradcheck and the
PyTorch comparison need the same mask at every call; the random mask is
tested in tests/test_nn_ops.py."""
from __future__ import annotations

from op_db import OpInfo, S, a, mask

OPS = [
    OpInfo("native_dropout", [S(a(3, 4), 0.0, True), S(a(3, 4), 1.0, True), S(a(2, 3), 0.5, False),
                              S(a(0, 2), 0.0, None)], differentiable_outputs=(0,)),
    OpInfo("native_dropout_backward", [S(a(3, 4), mask(3, 4), 2.0), S(a(2, 2), mask(2, 2), 1.0)],
           ref=lambda g, m, scale: g * m * scale),
    OpInfo("dropout", [S(a(3, 4), 0.0, True), S(a(3, 4), 0.5, False), S(a(2, 2), 1.0, True)]),
]
