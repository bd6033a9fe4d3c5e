"""Port of the maximum-memory tracker of albanD/subclass_zoo
(max_mem_tracker.py): a TorchDispatchMode stacked on a FakeTensorMode
tracks each output tensor in a WeakIdKeyDictionary and records the peak of
the live total. The ported code is in ported/max_mem_tracker.py (it tracks
tensors where the original tracks their storages, until Tensor has
untyped_storage); the original gives 1536 and 2048 on PyTorch 2.13."""
from __future__ import annotations

import pytest

import opdispatch as torch
from opdispatch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from _port import loaded


@pytest.fixture
def mt():
    with loaded("max_mem_tracker") as module:
        yield module


def test_peak_memory_of_a_function_on_fake_tensors(mt):
    seen = []
    with FakeTensorMode(), mt.MemoryTrackingMode():
        def f(a):
            b = a * 10
            d = b + 3
            seen.append(type(d))
            return d

        a = torch.rand(100)
        f(a)
        f(a)
        just_f = mt.MEMORY_MAX
        c = f(a)
        c = f(a)  # noqa: F841 (kept alive, as in the original)
        with_return = mt.MEMORY_MAX
    assert (just_f, with_return) == (1536, 2048)
    assert set(seen) == {FakeTensor}
