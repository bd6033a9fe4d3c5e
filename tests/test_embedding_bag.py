"""_embedding_bag's data-dependent errors (PyTorch 2.13's messages; the Meta
kernel cannot see them) and its gradient's scale_grad_by_freq, where od
divides each row by its own count (PyTorch 2.13 divides some rows by another
row's: with indices [1, 1, 2, 2, 2] and a gradient of ones it gives row 2
1.5, not 1). Values and gradients otherwise: tests/opinfo/nn_embedding.py."""
from __future__ import annotations

import pytest

import opdispatch

ops = opdispatch.ops.od
W = opdispatch.arange(15.0).reshape(5, 3)


@pytest.mark.parametrize(("indices", "offsets", "message"), [
    ([0, 5], [0], r"Index 1 of input takes value 5 which is not in the valid range \[0, 5\)"),
    ([0, 2], [1], "offsets\\[0\\] has to be 0, i.e., the first sequence in the mini-batch has to start from position "
                  "0. However, got 1"),
    ([0, 2], [0, 3], "offsets\\[-1\\] can not be greater than input's length 2 but got offsets\\[-1\\] of 3"),
])
def test_data_dependent_errors(indices, offsets, message):
    with pytest.raises(RuntimeError, match=message):
        ops._embedding_bag(W, opdispatch.tensor(indices), opdispatch.tensor(offsets))


@pytest.mark.parametrize("mode", [0, 1])
def test_scale_grad_by_freq_divides_each_row_by_its_own_count(mode):
    w = W.clone().requires_grad_(True)
    out = ops._embedding_bag(w, opdispatch.tensor([1, 1, 2, 2, 2]), opdispatch.tensor([0, 2]), True, mode)[0]
    out.sum().backward()
    per_index = [1.0] * 5 if mode == 0 else [1 / 2] * 2 + [1 / 3] * 3  # mean: 1 / the bag's size
    # each of row 1's two and row 2's three gradients, divided by that row's count
    expected_1, expected_2 = sum(per_index[:2]) / 2, sum(per_index[2:]) / 3
    assert w.grad[:, 0].tolist() == pytest.approx([0, expected_1, expected_2, 0, 0])
