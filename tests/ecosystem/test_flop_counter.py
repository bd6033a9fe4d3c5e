"""Port of PyTorch's FLOP counter (pytorch/pytorch torch/utils/flop_counter.py):
a formula registry over OpOverloads and a TorchDispatchMode that counts
per overload packet, on real tensors, on FakeTensors (a mode inside a
FakeTensorMode) and with a custom mapping. The ported code is in
ported/flop_counter.py; the expected counts are what its PyTorch 2.13 form
gives (480 = 240 for mm + 240 for bmm; 524288; 7)."""
from __future__ import annotations

import pytest

import opdispatch as torch
from opdispatch._subclasses.fake_tensor import FakeTensorMode
from _port import loaded


@pytest.fixture(scope="module")
def fc():
    with loaded("flop_counter") as module:
        yield module


def test_counts_mm_and_bmm_per_packet(fc):
    with fc.FlopCounterMode() as mode:
        x = torch.mm(torch.randn(4, 5), torch.randn(5, 6))
        torch.bmm(torch.randn(3, 4, 5), torch.randn(3, 5, 2))
        (x.relu() * 2).sum()
    assert mode.get_total_flops() == 480
    assert mode.get_flop_counts() == {"Global": {torch.ops.od.mm: 240, torch.ops.od.bmm: 240}}


def test_counts_on_fake_tensors(fc):
    with FakeTensorMode() as fake:
        a, b = fake.from_tensor(torch.randn(128, 64)), fake.from_tensor(torch.randn(64, 32))
        with fc.FlopCounterMode() as mode:
            torch.mm(a, b)
    assert mode.get_total_flops() == 524288


def test_custom_mapping(fc):
    with fc.FlopCounterMode(custom_mapping={torch.ops.od.relu.default: lambda s, out_shape=None: s[0]}) as mode:
        torch.randn(7).relu()
    assert mode.get_total_flops() == 7
