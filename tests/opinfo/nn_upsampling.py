"""Samples of the upsampling operators of _builtins/upsampling.py."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a

OPS = [
    OpInfo("upsample_nearest2d", [S(a(1, 2, 3, 4), [6, 8]), S(a(2, 1, 4, 3), [5, 7]), S(a(1, 2, 5, 5), [3, 2]),
                                  S(a(1, 1, 3, 3), [7, 5], 2.5, 1.7),
                                  S(a(1, 2, 3, 3).astype(np.float32), [4, 4])]),
    OpInfo("upsample_bilinear2d", [S(a(1, 2, 3, 4), [6, 8], False), S(a(2, 1, 4, 3), [5, 7], True),
                                   S(a(1, 2, 5, 5), [3, 2], False), S(a(1, 1, 3, 3), [7, 5], False, 2.5, 1.7),
                                   S(a(1, 1, 3, 3), [1, 1], True),
                                   S(a(1, 2, 3, 3).astype(np.float32), [5, 4], False)]),
    OpInfo("upsample_nearest2d_backward", [S(a(1, 2, 6, 8), [6, 8], [1, 2, 3, 4]),
                                           S(a(2, 1, 5, 7), [5, 7], [2, 1, 4, 3]),
                                           S(a(1, 1, 7, 5), [7, 5], [1, 1, 3, 3], 2.5, 1.7)]),
    OpInfo("upsample_bilinear2d_backward", [S(a(1, 2, 6, 8), [6, 8], [1, 2, 3, 4], False),
                                            S(a(2, 1, 5, 7), [5, 7], [2, 1, 4, 3], True),
                                            S(a(1, 1, 7, 5), [7, 5], [1, 1, 3, 3], False, 2.5, 1.7)]),
    OpInfo("upsample_nearest2d.vec", [S(a(1, 2, 3, 4), [6, 8], None), S(a(1, 2, 3, 3), None, [2.0, 1.5])]),
    OpInfo("upsample_bilinear2d.vec", [S(a(1, 2, 3, 4), [6, 8], False, None),
                                       S(a(1, 2, 3, 3), None, True, [2.0, 1.5])]),
]
