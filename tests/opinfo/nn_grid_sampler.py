"""Samples of grid_sampler_2d and its gradient operator (_builtins/grid_sampler.py).
The grids keep away from the points where bilinear interpolation has kinks
(integer source coordinates), so that gradcheck's differences are smooth."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a


def grid(n: int, h: int, w: int, spread: float = 1.2) -> np.ndarray:
    rng = np.random.default_rng(h * 10 + w)
    return rng.uniform(-spread, spread, (n, h, w, 2))


OPS = [
    OpInfo("grid_sampler_2d", [S(a(1, 2, 3, 4), grid(1, 2, 3), 0, 0, False), S(a(2, 1, 4, 3), grid(2, 3, 2), 0, 1, True),
                               S(a(1, 2, 3, 3), grid(1, 2, 2, 2.5), 0, 2, False),
                               S(a(1, 2, 3, 3), grid(1, 2, 2, 2.5), 0, 2, True),
                               S(a(1, 2, 4, 3), grid(1, 3, 2, 0.9), 1, 0, False)]),
    OpInfo("grid_sampler_2d_backward", [S(a(1, 2, 2, 3), a(1, 2, 3, 4), grid(1, 2, 3), 0, 0, False, [True, True]),
                                        S(a(2, 1, 3, 2), a(2, 1, 4, 3), grid(2, 3, 2), 0, 1, True, [True, True])],
           grad=False),
    OpInfo("grid_sampler", [S(a(1, 2, 3, 4), grid(1, 2, 3), 0, 0, False)]),
]
