"""Samples of im2col and col2im (_builtins/fold.py)."""
from __future__ import annotations

from op_db import OpInfo, S, a

OPS = [
    OpInfo("im2col", [S(a(2, 3, 4, 5), [2, 2], [1, 1], [1, 0], [2, 1]), S(a(2, 4, 4), [3, 2], [1, 2], [1, 1], [1, 1]),
                      S(a(1, 1, 3, 3), [3, 3], [1, 1], [0, 0], [1, 1])]),
    OpInfo("col2im", [S(a(2, 12, 12), [4, 5], [2, 2], [1, 1], [1, 0], [2, 1]),
                      S(a(12, 16), [4, 4], [3, 2], [1, 2], [1, 1], [1, 1]),
                      S(a(1, 9, 1), [3, 3], [3, 3], [1, 1], [0, 0], [1, 1])]),
]
