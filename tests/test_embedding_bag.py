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


def test_functional_embedding_bag_matches_pytorch():
    import opdispatch.nn.functional as F

    indices = opdispatch.tensor([0, 2, 4, 1, 1, 3])
    # Values recorded from PyTorch 2.13's torch.nn.functional.embedding_bag.
    assert F.embedding_bag(opdispatch.tensor([[0, 2, 4], [1, 1, 3]]), W).tolist() == [[6, 7, 8], [5, 6, 7]]
    assert F.embedding_bag(indices, W, opdispatch.tensor([0, 2, 2]), mode="max").tolist() == [
        [6, 7, 8], [0, 0, 0], [12, 13, 14]]
    assert F.embedding_bag(indices, W, opdispatch.tensor([0, 2, 2]), mode="sum", padding_idx=-4).tolist() == [
        [6, 8, 10], [0, 0, 0], [21, 23, 25]]
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(opdispatch.tensor([[0, 2]]), W, opdispatch.tensor([0]))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(opdispatch.tensor([0, 2]), W)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(opdispatch.tensor([0, 2]), W, opdispatch.tensor([0]), mode="x")
    with pytest.raises(ValueError, match="input has to be 1D or 2D Tensor, but got Tensor of dimension 3"):
        F.embedding_bag(opdispatch.tensor([[[0]]]), W)


def test_functional_embedding_bag_gradient():
    import opdispatch.nn.functional as F

    w = W.clone().requires_grad_(True)
    F.embedding_bag(opdispatch.tensor([[0, 2, 4], [1, 1, 3]]), w).sum().backward()  # mean of 3: 1/3 per use
    assert w.grad[:, 0].tolist() == pytest.approx([1 / 3, 2 / 3, 1 / 3, 1 / 3, 1 / 3])
