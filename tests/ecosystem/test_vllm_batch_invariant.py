"""Port of vLLM's batch-invariant mode (vllm-project/vllm
vllm/model_executor/layers/batch_invariant.py): overriding built-in kernels
from Python with Library("aten", "IMPL").impl("aten::mm", fn, key), with
PyTorch's override warning, and restoring them with Library._destroy(). The
ported code is in ported/vllm_batch_invariant.py; each result below is what
its PyTorch 2.13 form gives (warned True, the overrides called in order
mm, mm, log_softmax, mean, bmm, none after disabling, and _impls without
the mm entry again)."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from opdispatch import library
from _port import loaded


@pytest.fixture
def bi():
    with loaded("vllm_batch_invariant") as module:
        yield module
        module.disable_batch_invariant_mode()


def test_enable_overrides_the_built_in_kernels_and_disable_restores_them(bi):
    x, w = torch.randn(8, 5), torch.randn(5, 3)
    ref = torch.mm(x, w)
    with pytest.warns(UserWarning, match="Overriding a previously registered kernel for the same operator"):
        bi.enable_batch_invariant_mode()
    bi.enable_batch_invariant_mode()  # idempotent: no second Library
    out = torch.mm(x, w)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-6)
    assert np.array_equal(torch.mm(x[:1], w).numpy(), out[:1].numpy())  # batch invariant
    np.testing.assert_allclose(torch.log_softmax(x, dim=-1).exp().sum(-1).numpy(), np.ones(8), rtol=1e-6)
    np.testing.assert_allclose(x.mean(dim=[1]).numpy(), x.numpy().sum(1) / 5, rtol=1e-6)
    assert tuple(torch.bmm(torch.ones(2, 3, 4), torch.ones(2, 4, 5)).shape) == (2, 3, 5)
    assert bi.calls == ["mm", "mm", "log_softmax", "mean", "bmm"]
    assert {"od/mm/CPU", "od/mean.dim/CPU", "od/bmm/CPU", "od/log_softmax.int/CPU"} <= library._impls
    bi.disable_batch_invariant_mode()
    bi.calls.clear()
    torch.mm(x, w)
    torch.bmm(torch.ones(2, 3, 4), torch.ones(2, 4, 5))
    assert bi.calls == [] and not [k for k in library._impls if k.startswith("od/")]
