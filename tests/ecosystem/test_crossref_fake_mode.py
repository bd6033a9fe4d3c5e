"""Port of PyTorch's CrossRefFakeMode (pytorch/pytorch
torch/_subclasses/fake_utils.py): every operator runs on FakeTensors of its
inputs (a fresh FakeTensorMode, from_tensor(static_shapes=True)) and on the
real ones, and a fake impl that disagrees with the kernel is a
MetadataMismatchError. The ported code is in ported/crossref_fake_mode.py;
the expected results are what the original gives on PyTorch 2.13 for the
same program ("... found mismatched tensor metadata: Shapes
torch.Size([4]) and torch.Size([3, 4]) are not equal!")."""
from __future__ import annotations

import pytest

import opdispatch as torch
from opdispatch._subclasses.fake_tensor import MetadataMismatchError
from _port import loaded


@pytest.fixture(scope="module")
def cr():
    with loaded("crossref_fake_mode") as module:
        yield module


@pytest.fixture
def ops(ns):
    @torch.library.custom_op(f"{ns}::good", mutates_args=())
    def good(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @good.register_fake
    def _(x):
        return torch.empty_like(x)

    @torch.library.custom_op(f"{ns}::bad", mutates_args=())
    def bad(x: torch.Tensor) -> torch.Tensor:
        return x.sum(0)

    @bad.register_fake
    def _(x):
        return x.new_empty(x.shape)  # wrong: keeps dim 0

    return good, bad


def test_matching_kernels_pass(cr, ops):
    good, _ = ops
    x = torch.randn(3, 4)
    with cr.CrossRefFakeMode():
        y = (x + 1).relu().sum()
        z = good(x)
    assert tuple(y.shape) == () and tuple(z.shape) == (3, 4)


def test_a_wrong_fake_impl_is_a_metadata_mismatch(cr, ops, ns):
    _, bad = ops
    with pytest.raises(MetadataMismatchError, match=rf"When comparing the output of {ns}.bad.default on FakeTensor "
                                                    rf"and concrete Tensors, found mismatched tensor metadata: "
                                                    rf"Shapes \(4,\) and \(3, 4\) are not equal!"):
        with cr.CrossRefFakeMode():
            bad(torch.randn(3, 4))
    with cr.CrossRefFakeMode(ignore_op_fn=lambda f: f == getattr(torch.ops, ns).bad.default):
        assert tuple(bad(torch.randn(3, 4)).shape) == (4,)


def test_requires_grad_flows_through(cr):
    x = torch.randn(3, requires_grad=True)
    with cr.CrossRefFakeMode():
        assert (x * 2).requires_grad
