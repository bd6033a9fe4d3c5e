"""Samples of embedding and embedding_dense_backward (_builtins/embedding.py;
the gradient masking of padding_idx and the scaling of scale_grad_by_freq
are in tests/test_nn_ops.py: gradcheck's numerical Jacobian has neither, so
the samples here use a padding_idx absent from the indices and indices
without repeats)."""
from __future__ import annotations

import numpy as np

from op_db import OpInfo, S, a

_IDX = np.array([0, 2, 4, 1, 1, 3])
_OFF = np.array([0, 2, 2, 5])

OPS = [
    OpInfo("embedding", [S(a(5, 3), np.array([[0, 4], [2, 0]])), S(a(5, 3), np.array([1, 3, 1]), 0),
                         S(a(4, 2), np.array(2)), S(a(4, 2), np.array([1, 2], dtype=np.int32)),
                         S(a(4, 2), np.zeros((0, 3), np.int64)), S(a(5, 3), np.array([1, 3, 2]), -1, True)]),
    OpInfo("embedding_dense_backward", [S(a(2, 2, 3), np.array([[0, 4], [2, 0]]), 5, -1, False),
                                        S(a(3, 3), np.array([1, 3, 1]), 5, 1, False)]),
    # _embedding_bag: sum, mean, max; include_last_offset; padding_idx; per_sample_weights; empty bags and
    # input. Its data-dependent errors (offsets, index range) are in tests/test_indexing_ops.py. No gradient yet.
    OpInfo("_embedding_bag", [S(a(5, 3), _IDX, _OFF), S(a(5, 3), _IDX, _OFF, False, 1), S(a(5, 3), _IDX, _OFF, False, 2),
                              S(a(5, 3), _IDX, _OFF, False, 0, False, None, True),
                              S(a(5, 3), _IDX, _OFF, False, 1, False, None, True),
                              S(a(5, 3), _IDX, _OFF, False, 2, False, None, True, 1),
                              S(a(5, 3), _IDX, _OFF, False, 0, False, None, False, 1),
                              S(a(5, 3), _IDX, _OFF, False, 1, False, None, True, 1),
                              S(a(5, 3), _IDX, _OFF, False, 0, False, a(6)),
                              S(a(5, 3), np.zeros(0, np.int64), np.array([0, 0]), False, 1),
                              S(a(4, 2), np.array([1, 2], dtype=np.int32), np.array([0]), False, 2)],
           grad=False,
           error_samples=[S(a(5, 3), _IDX, _OFF, False, 3), S(a(5, 3), _IDX.astype(np.float64), _OFF),
                          S(a(5, 3), _IDX, _OFF, False, 1, False, a(6))]),
    OpInfo("_embedding_bag_backward",
           [S(a(4, 3), _IDX, _OFF, np.array([0, 0, 2, 2, 2, 3]), np.array([2, 0, 3, 1]), np.array([2, 0, 3, 1]), 5,
              False, 1, False, None),
            # scale_grad_by_freq with distinct indices: with repeats PyTorch divides some rows by another row's
            # count (tests/test_embedding_bag.py has od's own).
            S(a(4, 3), np.array([0, 2, 4, 1, 3]), np.array([0, 2, 2, 4]), np.zeros(0, np.int64), np.zeros(4, np.int64),
              np.zeros(4, np.int64), 5, True, 0, False, a(5)),
            S(a(4, 3), _IDX, _OFF, np.array([0, 0, 2, 2, 2, 3]), np.array([2, 0, 3, 1]),
              np.array([[2, 2, 2], [0, 0, 0], [4, 4, 4], [3, 3, 3]]), 5, False, 2, False, None)],
           grad=False),
    OpInfo("_embedding_bag_per_sample_weights_backward",
           [S(a(4, 3), a(5, 3), _IDX, _OFF, np.zeros(0, np.int64), 0),
            S(a(4, 3), a(5, 3), _IDX, _OFF, np.array([0, 0, 2, 2, 2, 3]), 0, 1)],
           grad=False),
]
