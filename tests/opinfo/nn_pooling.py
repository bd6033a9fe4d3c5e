"""Samples of the pooling operators of _builtins/max_pooling.py,
avg_pooling.py and adaptive_pooling.py; their values, indices and gradients
against PyTorch 2.13: tests/test_nn_ops.py."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a, ints


def _indices(x: np.ndarray, *args: object) -> np.ndarray:
    """The indices a max pooling of ``x`` gives (computed by the operator: the backward samples need real ones)."""
    import opdispatch

    op = opdispatch.ops.od.max_pool2d_with_indices if len(args[0]) == 2 else opdispatch.ops.od.max_pool3d_with_indices
    return op(opdispatch.tensor(x), *args)[1].numpy()


def _backward(x: np.ndarray, *args: object) -> object:
    indices = _indices(x, *args)
    return S(a(*indices.shape), x, *args, indices)


MAX_POOL_2D = [
    S(a(2, 3, 5, 5), [2, 2]),
    S(a(1, 2, 7, 6), [3, 2], [2, 1], [1, 1], [1, 2], True),
    S(a(2, 5, 5), [3, 3], [2, 2], [1, 1], [1, 1], True),
    S(a(0, 2, 4, 4), [2, 2]),
    S(a(1, 2, 4, 4).astype(np.float32), [2, 2], [1, 1]),
]

OPS = [
    OpInfo("max_pool2d_with_indices", MAX_POOL_2D, differentiable_outputs=(0,)),
    OpInfo("max_pool3d_with_indices", [S(a(1, 2, 4, 4, 3), [2, 2, 2]),
                                       S(a(2, 3, 4, 5), [2, 3, 2], [1, 2, 1], [1, 1, 0], [1, 1, 1], True)],
           differentiable_outputs=(0,)),
    OpInfo("max_pool2d_with_indices_backward",
           [_backward(a(2, 3, 5, 5), [2, 2], [2, 2], [0, 0], [1, 1], False),
            _backward(a(1, 2, 7, 6), [3, 2], [2, 1], [1, 1], [1, 2], True)]),
    OpInfo("max_pool3d_with_indices_backward", [_backward(a(1, 2, 4, 4, 3), [2, 2, 2], [1, 1, 1], [0, 0, 0],
                                                          [1, 1, 1], False)]),
    OpInfo("max_pool1d", [S(a(2, 3, 7), [3], [2], [1]), S(a(3, 6), [2])]),
    OpInfo("max_pool2d", [S(a(2, 3, 5, 5), [2, 2]), S(a(2, 5, 5), [3, 3], [2, 2], [1, 1], [1, 1], True)]),
    OpInfo("max_pool3d", [S(a(1, 2, 4, 4, 3), [2, 2, 2])]),
]


def _avg_backward(x: np.ndarray, k: int, *args: object) -> object:
    import opdispatch

    op = opdispatch.ops.od.avg_pool2d if k == 2 else opdispatch.ops.od.avg_pool3d
    shape = op(opdispatch.empty(*x.shape, dtype=opdispatch.float64, device="meta"), *args).shape
    full = list(args) + [[], [0], False, True, None][len(args) - 1:]
    return S(a(*shape), x, *full)


def _adaptive_backward(x: np.ndarray, size: list[int]) -> object:
    return S(a(*x.shape[:-len(size)], *size), x)


OPS += [
    OpInfo("avg_pool2d", [S(a(2, 3, 5, 5), [2, 2]), S(a(1, 2, 7, 6), [3, 2], [2, 1], [1, 1], True, False),
                          S(a(2, 5, 5), [3, 3], [2, 2], [1, 1], True, True, 2), S(a(0, 2, 4, 4), [2, 2]),
                          S(ints(1, 2, 4, 4), [2, 2]), S(a(1, 2, 4, 4).astype(np.float32), [3, 3], [1, 1], [1, 1])]),
    OpInfo("avg_pool3d", [S(a(1, 2, 4, 4, 3), [2, 2, 2]),
                          S(a(2, 3, 4, 5), [2, 3, 2], [1, 2, 1], [1, 1, 0], True, False, None)]),
    OpInfo("avg_pool2d_backward", [_avg_backward(a(2, 3, 5, 5), 2, [2, 2], [2, 2], [0, 0], False, True, None),
                                   _avg_backward(a(1, 2, 7, 6), 2, [3, 2], [2, 1], [1, 1], True, False, None),
                                   _avg_backward(a(2, 5, 5), 2, [3, 3], [2, 2], [1, 1], True, True, 2)]),
    OpInfo("avg_pool3d_backward", [_avg_backward(a(1, 2, 4, 4, 3), 3, [2, 2, 2], [1, 2, 1], [1, 1, 0], True, False,
                                                 None)]),
    OpInfo("avg_pool1d", [S(a(2, 3, 7), [3], [2], [1]), S(a(3, 6), [2]), S(a(2, 3, 7), [3], [2], [1], True, False)]),
    OpInfo("_adaptive_avg_pool2d", [S(a(2, 3, 5, 7), [3, 2]), S(a(3, 4, 4), [4, 4]), S(a(1, 2, 3, 3), [5, 4]),
                                    S(a(1, 2, 4, 4).astype(np.float32), [2, 3])]),
    OpInfo("_adaptive_avg_pool3d", [S(a(1, 2, 4, 3, 5), [2, 3, 2]), S(a(2, 3, 3, 3), [1, 2, 3])]),
    OpInfo("_adaptive_avg_pool2d_backward", [_adaptive_backward(a(2, 3, 5, 7), [3, 2]),
                                             _adaptive_backward(a(1, 2, 3, 3), [5, 4])]),
    OpInfo("_adaptive_avg_pool3d_backward", [_adaptive_backward(a(1, 2, 4, 3, 5), [2, 3, 2])]),
    OpInfo("adaptive_avg_pool1d", [S(a(2, 3, 7), [3]), S(a(3, 5), [1])]),
    OpInfo("adaptive_avg_pool2d", [S(a(2, 3, 5, 7), [3, 2]), S(a(2, 3, 5, 7), [1, 1])]),
    OpInfo("adaptive_avg_pool3d", [S(a(1, 2, 4, 3, 5), [2, 3, 2]), S(a(1, 2, 2, 3, 2), [1, 1, 1])]),
]
