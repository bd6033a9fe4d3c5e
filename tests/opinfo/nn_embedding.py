"""Samples of embedding and embedding_dense_backward (_builtins/embedding.py;
the gradient masking of padding_idx and the scaling of scale_grad_by_freq
are in tests/test_nn_ops.py: gradcheck's numerical Jacobian has neither, so
the samples here use a padding_idx absent from the indices and indices
without repeats)."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a

OPS = [
    OpInfo("embedding", [S(a(5, 3), np.array([[0, 4], [2, 0]])), S(a(5, 3), np.array([1, 3, 1]), 0),
                         S(a(4, 2), np.array(2)), S(a(4, 2), np.array([1, 2], dtype=np.int32)),
                         S(a(4, 2), np.zeros((0, 3), np.int64)), S(a(5, 3), np.array([1, 3, 2]), -1, True)]),
    OpInfo("embedding_dense_backward", [S(a(2, 2, 3), np.array([[0, 4], [2, 0]]), 5, -1, False),
                                        S(a(3, 3), np.array([1, 3, 1]), 5, 1, False)]),
]
