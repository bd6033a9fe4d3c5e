"""Samples of the padding operators of _builtins/padding.py; values and
gradients against PyTorch 2.13: tests/test_nn_ops.py."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a, ints


def _backward(name: str, x: np.ndarray, padding: list[int]) -> OpInfo:
    k = len(padding) // 2
    shape = list(x.shape)
    for i in range(k):
        shape[-1 - i] += padding[2 * i] + padding[2 * i + 1]
    return OpInfo(f"{name}_backward", [S(a(*shape), x, padding)])


OPS = [
    OpInfo("constant_pad_nd", [S(a(2, 3), [1, 2]), S(a(2, 3, 4), [1, -1, 2, 0], 1.5), S(ints(2, 3), [1, 1], 7),
                               S(a(2, 3), [-1, -1, 1, 0]), S(a(0, 2), [1, 1])]),
    OpInfo("reflection_pad1d", [S(a(2, 3, 5), [2, 1]), S(a(3, 4), [3, 0]), S(a(0, 2, 3), [1, 1])]),
    OpInfo("reflection_pad2d", [S(a(1, 2, 4, 5), [1, 2, 3, 0]), S(a(2, 3, 3), [2, 2, 1, 1])]),
    OpInfo("reflection_pad3d", [S(a(1, 2, 3, 4, 3), [1, 1, 2, 0, 2, 1])]),
    OpInfo("replication_pad2d", [S(a(1, 2, 3, 4), [2, 2, -1, 3]), S(a(2, 2, 3), [1, 0, 0, 2])]),
    OpInfo("replication_pad3d", [S(a(1, 2, 3, 2, 3), [1, 3, 0, 2, 1, 1])]),
    _backward("reflection_pad1d", a(2, 3, 5), [2, 1]),
    _backward("reflection_pad2d", a(1, 2, 4, 5), [1, 2, 3, 0]),
    _backward("reflection_pad3d", a(1, 2, 3, 4, 3), [1, 1, 2, 0, 2, 1]),
    _backward("replication_pad2d", a(1, 2, 3, 4), [2, 2, 1, 3]),
    _backward("replication_pad3d", a(1, 2, 3, 2, 3), [1, 3, 0, 2, 1, 1]),
    OpInfo("pad", [S(a(2, 3, 4), [1, 1], "reflect"), S(a(2, 3, 4), [1, 2, 0, 1], "replicate"),
                   S(a(2, 3), [1, 1], "constant", 2.5), S(a(2, 3), [2, 0])]),
]
