"""Version counters of in-place calls that a dispatch mode or a tensor
subclass intercepts: the call bumps each written argument once, when its
Python-key handler returns, and the calls the handler makes bump nothing
(PyTorch's ADInplaceOrView runs above the Python key and is excluded
below it). Every expected value is what the same program gives on PyTorch
2.13 (torch.testing._internal's TwoTensor there; its LoggingTensor gives 1
and 0 as TwoTensor does)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import opdispatch as torch
from opdispatch._subclasses.fake_tensor import FakeTensorMode
from opdispatch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).parent / "ecosystem"))
from _port import loaded  # noqa: E402


class PassThrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_a_mode_on_plain_tensors_bumps_once_per_call():
    x = torch.ones(3)
    with PassThrough():
        x.add_(1)
        x.mul_(2)
    assert x._version == 2


@pytest.fixture(scope="module")
def TwoTensor():
    with loaded("two_tensor") as module:
        yield module.TwoTensor


def test_a_wrapper_subclass_counts_its_own_writes_not_its_elements(TwoTensor):
    u = TwoTensor(torch.ones(2, 3), torch.ones(2, 3))
    u.add_(1)
    assert (u._version, u.a._version, u.b._version) == (1, 0, 0)
    w = u.view(3, 2)
    w.mul_(2)
    assert (u._version, w._version) == (2, 2)
    v = u._version
    u.transpose_(0, 1)  # return_and_correct_aliasing's metadata update adds no second bump
    assert u._version == v + 1


def test_fake_tensors_count_as_pytorchs():
    with FakeTensorMode():
        f = torch.ones(2)
        f.add_(1)
        f.transpose_(0, 0)
        assert f._version == 2


def test_autograd_and_direct_calls_still_bump_once():
    x = torch.ones(3, requires_grad=True) * 1
    x.add_(1)
    assert x._version == 1
    f = torch.ones(2)
    torch.ops.od.add_.Tensor(f, f)
    f.add_(1.0)
    assert f._version == 2
