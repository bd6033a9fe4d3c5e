"""Samples of the convolution operators of _builtins/convolution.py (and
linear, addmm); their values and gradients against PyTorch 2.13: tests/test_nn_ops.py."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a


def f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


CONVOLUTION = [
    S(a(2, 3, 5, 5), a(4, 3, 3, 3), a(4), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    S(a(1, 4, 6, 5), a(4, 2, 3, 2), None, [2, 1], [1, 0], [2, 1], False, [0, 0], 2),
    S(a(2, 2, 7), a(3, 2, 3), a(3), [2], [1], [1], False, [0], 1),
    S(a(1, 2, 3, 4, 3), a(2, 2, 2, 2, 2), a(2), [1, 2, 1], [0, 1, 1], [1, 1, 1], False, [0, 0, 0], 1),
    S(a(2, 2, 3, 3), a(2, 3, 3, 2), a(3), [2, 2], [1, 0], [1, 1], True, [1, 0], 1),
    S(a(1, 4, 3, 2), a(4, 1, 2, 3), None, [1, 2], [0, 1], [2, 1], True, [0, 1], 2),
    S(a(2, 2, 4), a(2, 3, 3), a(3), [3], [1], [1], True, [2], 1),
    S(a(0, 3, 5, 5), a(4, 3, 3, 3), a(4), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    S(f32(a(1, 3, 4, 4)), f32(a(2, 3, 2, 2)), f32(a(2)), [1, 1], [0, 0], [1, 1], False, [0, 0], 1),
]


def _backward_sample(x: np.ndarray, w: np.ndarray, bias: bool, *args: object,
                     mask: tuple[bool, bool, bool] = (True, True, True)) -> object:
    """A gradient of convolution(x, w, ...)'s output shape (its Meta kernel computes it)."""
    import opdispatch

    stride, padding, dilation, transposed, output_padding, groups = args
    out = opdispatch.ops.od.convolution(opdispatch.empty(*x.shape, dtype=opdispatch.float64, device="meta"),
                                        opdispatch.empty(*w.shape, dtype=opdispatch.float64, device="meta"), None,
                                        *args)
    channels = out.shape[1]
    return S(a(*out.shape), x, w, [channels] if bias else None, stride, padding, dilation, transposed,
             output_padding, groups, list(mask))


CONVOLUTION_BACKWARD = [
    _backward_sample(a(2, 3, 5, 5), a(4, 3, 3, 3), True, [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    _backward_sample(a(1, 4, 6, 5), a(4, 2, 3, 2), False, [2, 1], [1, 0], [2, 1], False, [0, 0], 2),
    _backward_sample(a(2, 2, 3, 3), a(2, 3, 3, 2), True, [2, 2], [1, 0], [1, 1], True, [1, 0], 1),
    _backward_sample(a(2, 2, 7), a(3, 2, 3), True, [2], [1], [1], False, [0], 1),
    _backward_sample(a(2, 2, 7), a(3, 2, 3), True, [2], [1], [1], False, [0], 1, mask=(False, True, False)),
]

OPS = [
    OpInfo("convolution", CONVOLUTION),
    OpInfo("convolution_backward", CONVOLUTION_BACKWARD),
    OpInfo("conv1d", [S(a(2, 2, 6), a(3, 2, 3), a(3)), S(a(2, 5), a(4, 2, 2), None, [2], [1], [2], 1)]),
    OpInfo("conv2d", [S(a(1, 2, 4, 4), a(3, 2, 3, 3), a(3), [1, 1], [1, 1]), S(a(2, 4, 4), a(2, 1, 2, 2), None,
                                                                                 [2, 1], [0, 1], [1, 1], 2)]),
    OpInfo("conv3d", [S(a(1, 2, 3, 3, 3), a(2, 2, 2, 2, 2), a(2))]),
    OpInfo("conv_transpose1d", [S(a(1, 2, 4), a(2, 3, 3), a(3), [2], [1], [1])]),
    OpInfo("conv_transpose2d.input", [S(a(1, 2, 3, 3), a(2, 2, 2, 2), a(2), [2, 2]), S(a(2, 3, 2), a(2, 1, 3, 3))]),
    OpInfo("conv_transpose3d.input", [S(a(1, 2, 2, 2, 2), a(2, 1, 2, 2, 2), None, [1, 2, 1])]),
    OpInfo("linear", [S(a(4, 3), a(5, 3), a(5)), S(a(2, 4, 3), a(5, 3), a(5)), S(a(4, 3), a(5, 3)), S(a(3), a(2, 3)),
                      S(a(2, 2, 2, 3), a(5, 3), a(5))],
           ref=lambda x, w, b=None: x @ w.T + (0 if b is None else b)),
    OpInfo("addmm", [S(a(5), a(4, 3), a(3, 5)), S(a(4, 5), a(4, 3), a(3, 5), beta=0.5, alpha=2),
                     S(a(1, 5), a(4, 3), a(3, 5), alpha=-1)],
           ref=lambda b, m1, m2, beta=1, alpha=1: beta * b + alpha * (m1 @ m2)),
]
