"""Samples of _fft_r2c and _fft_c2r (_builtins/fft.py). Their gradients are
checked against PyTorch's in tests/test_fft.py: the harness's gradcheck takes
real inputs and outputs, and one of each is complex."""
from __future__ import annotations

import numpy as np

import opdispatch
from op_db import OpInfo, S, a, ints

_REAL = (opdispatch.float32, opdispatch.float64)
_NORM = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM = {0: "forward", 1: "ortho", 2: "backward"}


def _r2c(x, dim, normalization, onesided):
    transform = np.fft.rfftn if onesided else np.fft.fftn
    return transform(x, axes=dim, norm=_NORM[normalization])


def _c2r(x, dim, normalization, last_dim_size):
    sizes = [x.shape[d] for d in dim[:-1]] + [last_dim_size]
    return np.fft.irfftn(x, s=sizes, axes=dim, norm=_INVERSE_NORM[normalization])


def _complex(*shape):
    return a(*shape) + 1j * a(*shape)


OPS = [
    OpInfo("_fft_r2c", [S(a(3, 4, 5), [2], 0, True), S(a(3, 4, 5), [1], 1, True), S(a(3, 4, 5), [0, 2], 2, True),
                        S(a(3, 4, 5), [1], 0, False), S(a(6), [0], 0, True), S(a(2, 3, 4), [2, 0], 0, True)],
           ref=_r2c, grad=False, dtypes=_REAL,
           error_samples=[S(ints(3), [0], 0, True), S(_complex(3), [0], 0, True)]),
    OpInfo("_fft_c2r", [S(_complex(3, 4, 3), [2], 0, 4), S(_complex(3, 4, 3), [2], 2, 5),
                        S(_complex(3, 4, 3), [1], 1, 7), S(_complex(3, 4, 3), [0, 2], 2, 4), S(_complex(4), [0], 0, 6)],
           ref=_c2r, grad=False, dtypes=(),
           error_samples=[S(a(3), [0], 0, 4)]),
]
