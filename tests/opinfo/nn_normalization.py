"""Samples of the normalisation operators of _builtins/normalization.py;
their values and gradients against PyTorch 2.13: tests/test_nn_ops.py.
The gradient operators get no gradcheck here: their derivative treats mean
and rstd as the statistics of the input (PyTorch's double-backward formulas),
which gradcheck's independent inputs are not; test_nn_ops checks them
against PyTorch and by second derivatives of the forward operators."""
from __future__ import annotations

import numpy as np

from op_db import Const, OpInfo, S, a, pos


def _stats(x: np.ndarray, axes: tuple[int, ...]) -> tuple[Const, Const]:
    mean = x.mean(axis=axes)
    return Const(mean), Const(1 / np.sqrt(x.var(axis=axes) + 1e-5))


def _batch_norm_backward(x: np.ndarray, weight: object, train: bool) -> object:
    c = x.shape[1]
    mean, invstd = _stats(x, (0, *range(2, x.ndim)))
    if train:
        return S(a(*x.shape), x, weight, None, None, mean, invstd, True, 1e-5, [True, True, True])
    return S(a(*x.shape), x, weight, Const(a(c)), Const(pos(c)), None, None, False, 1e-5, [True, True, True])


def _layer_norm_backward(x: np.ndarray, shape: list[int], weight: object, bias: object) -> object:
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean, rstd = _stats(x, axes)
    stats = [*x.shape[:x.ndim - len(shape)], *([1] * len(shape))]
    return S(a(*x.shape), x, shape, Const(mean.array.reshape(stats)), Const(rstd.array.reshape(stats)), weight, bias,
             [True, weight is not None, bias is not None])


def _group_norm_backward(x: np.ndarray, weight: object, group: int) -> object:
    n, c = x.shape[:2]
    g = x.reshape(n, group, -1)
    mean, rstd = _stats(g, (2,))
    return S(a(*x.shape), x, mean, rstd, weight, n, c, int(np.prod(x.shape[2:])), group,
             [True, weight is not None, weight is not None])


OPS = [
    OpInfo("_native_batch_norm_legit",
           [S(a(4, 3, 2), a(3), a(3), Const(a(3)), Const(pos(3)), True, 0.1, 1e-5),
            S(a(3, 2), None, a(2), Const(a(2)), Const(pos(2)), False, 0.1, 1e-5),
            S(a(2, 2, 2, 2), a(2), None, Const(a(2)), Const(pos(2)), True, 0.3, 1e-3),
            S(a(4, 3).astype(np.float32), a(3).astype(np.float32), a(3).astype(np.float32),
              Const(a(3).astype(np.float32)), Const(pos(3).astype(np.float32)), True, 0.1, 1e-5)],
           differentiable_outputs=(0,)),
    OpInfo("_native_batch_norm_legit.no_stats", [S(a(4, 3, 2), a(3), a(3), True, 0.1, 1e-5),
                                                 S(a(5, 2), None, None, True, 0.1, 1e-5)],
           differentiable_outputs=(0,)),
    OpInfo("_native_batch_norm_legit_no_training", [S(a(4, 3, 2), a(3), a(3), Const(a(3)), Const(pos(3)), 0.1, 1e-5),
                                                    S(a(1, 2), None, None, Const(a(2)), Const(pos(2)), 0.1, 1e-5)],
           differentiable_outputs=(0,)),
    OpInfo("native_batch_norm_backward", [_batch_norm_backward(a(4, 3, 2), a(3), True),
                                          _batch_norm_backward(a(3, 2), None, True),
                                          _batch_norm_backward(a(2, 3, 2), a(3), False)], grad=False),
    OpInfo("batch_norm", [S(a(4, 3, 2), a(3), a(3), Const(a(3)), Const(pos(3)), True, 0.1, 1e-5, False),
                          S(a(4, 3), a(3), a(3), Const(a(3)), Const(pos(3)), False, 0.1, 1e-5, False),
                          S(a(4, 3, 2), None, None, None, None, True, 0.1, 1e-5, False)]),
    OpInfo("native_layer_norm", [S(a(2, 3, 4), [4], a(4), a(4), 1e-5), S(a(2, 3, 4), [3, 4], None, None, 1e-5),
                                 S(a(0, 3), [3], a(3), None, 1e-5),
                                 S(a(3, 4).astype(np.float32), [4], a(4).astype(np.float32), None, 1e-5)],
           differentiable_outputs=(0,)),
    OpInfo("native_layer_norm_backward", [_layer_norm_backward(a(2, 3, 4), [4], a(4), a(4)),
                                          _layer_norm_backward(a(2, 3, 4), [3, 4], None, None)], grad=False),
    OpInfo("layer_norm", [S(a(2, 3, 4), [4], a(4), a(4)), S(a(3, 4), [4])]),
    OpInfo("native_group_norm", [S(a(2, 4, 3), a(4), a(4), 2, 4, 3, 2, 1e-5),
                                 S(a(1, 6, 2, 2), None, None, 1, 6, 4, 3, 1e-5)],
           differentiable_outputs=(0,)),
    OpInfo("native_group_norm_backward", [_group_norm_backward(a(2, 4, 3), a(4), 2),
                                          _group_norm_backward(a(1, 6, 2, 2), None, 3)], grad=False),
    OpInfo("group_norm", [S(a(2, 4, 3), 2, a(4), a(4)), S(a(1, 6, 2, 2), 3)]),
]
