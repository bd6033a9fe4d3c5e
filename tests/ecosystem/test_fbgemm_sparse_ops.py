"""Port of FBGEMM's Python registrations (pytorch/FBGEMM
fbgemm_gpu/fbgemm_gpu/sparse_ops.py): fake impls with data-dependent sizes
(get_ctx().new_dynamic_size()) and Optional outputs, an autograd formula on
an operator returning (Tensor, Tensor, Tensor?) whose backward calls other
operators, and _setup()'s idempotency guards on torch.library._impls and
_dispatch_has_kernel_for_dispatch_key. The ported code is in
ported/fbgemm_sparse_ops.py."""
from __future__ import annotations

import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def fb():
    with loaded("fbgemm_sparse_ops") as module:
        yield module


def _sample(requires_grad=False):
    # T=3 features, B=2 batch: lengths[t, b] values each.
    lengths = torch.tensor([[1, 2], [0, 1], [2, 1]])
    values = torch.arange(7.0, dtype=torch.float64).requires_grad_(requires_grad)
    weights = torch.arange(7.0, dtype=torch.float64).mul(10).requires_grad_(requires_grad)
    return torch.tensor([2, 0, 1]), lengths, values, weights


def test_permute_2D_sparse_data(fb):
    permute, lengths, values, weights = _sample()
    out_lengths, out_values, out_weights = torch.ops.fbgemm.permute_2D_sparse_data(permute, lengths, values, weights)
    # Feature 2's segments (values 4, 5, 6), then feature 0's (0, 1, 2), then feature 1's (3).
    assert out_lengths.tolist() == [[2, 1], [1, 2], [0, 1]]
    assert out_values.tolist() == [4.0, 5.0, 6.0, 0.0, 1.0, 2.0, 3.0]
    assert out_weights.tolist() == [40.0, 50.0, 60.0, 0.0, 10.0, 20.0, 30.0]
    assert torch.ops.fbgemm.permute_2D_sparse_data(permute, lengths, values)[2] is None
    assert torch.ops.fbgemm.invert_permute(permute).tolist() == [1, 2, 0]


def test_autograd_formula_permutes_gradients_back(fb):
    permute, lengths, values, weights = _sample(requires_grad=True)
    _, out_values, out_weights = torch.ops.fbgemm.permute_2D_sparse_data(permute, lengths, values, weights)
    scale = torch.arange(1.0, 8.0, dtype=torch.float64)
    ((out_values * scale).sum() + out_weights.sum()).backward()
    # values[i] landed at position pos[i] of out_values, so its gradient is scale[pos[i]].
    pos = [3, 4, 5, 6, 0, 1, 2]
    assert values.grad.tolist() == [float(pos[i] + 1) for i in range(7)]
    assert weights.grad.tolist() == [1.0] * 7


def test_fake_impls_on_meta(fb):
    m = lambda *s, dtype=torch.int64: torch.empty(*s, dtype=dtype, device="meta")  # noqa: E731
    lengths, values, weights = torch.ops.fbgemm.permute_2D_sparse_data(m(3), m(3, 2), m(7, dtype=torch.float32),
                                                                      m(7, dtype=torch.float32))
    assert lengths.shape == (3, 2) and values.dim() == 1 and weights.dim() == 1
    assert torch.ops.fbgemm.permute_2D_sparse_data(m(3), m(3, 2), m(7), None, 7)[1].shape == (7,)
    with pytest.raises(RuntimeError, match="expected lengths.dim\\(\\) == 2, got 1"):
        torch.ops.fbgemm.permute_2D_sparse_data(m(3), m(6), m(7))
    masked_values, masked_lengths = torch.ops.fbgemm.masked_select_jagged_1d(m(7, dtype=torch.float32), m(3),
                                                                             m(7, dtype=torch.bool))
    assert masked_values.dim() == 1 and masked_lengths.shape == (3,)


def test_setup_is_idempotent_and_its_guards_see_the_registrations(fb):
    assert "fbgemm/permute_2D_sparse_data/Autograd" in torch.library._impls
    fb._setup.done = False  # a second import of the module in another package, say
    fb._setup()  # every registration is skipped by its guard: no "already registered" error
    assert fb._setup.done


def test_opcheck(fb):
    permute, lengths, values, weights = _sample(requires_grad=True)
    result = torch.library.opcheck(torch.ops.fbgemm.permute_2D_sparse_data.default,
                                   (permute, lengths, values, weights))
    assert set(result.values()) == {"SUCCESS"}
    mask = torch.tensor([True, False, True, True, False, False, True])
    result = torch.library.opcheck(torch.ops.fbgemm.masked_select_jagged_1d.default,
                                   (torch.arange(7.0), torch.tensor([3, 4]), mask))
    assert set(result.values()) == {"SUCCESS"}
