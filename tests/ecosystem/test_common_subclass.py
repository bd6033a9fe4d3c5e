"""Port of PyTorch's torch/testing/_internal/common_subclass.py (the
WrapperTensor base, WrapperTensorWithCustomSizes and NonWrapperTensor).
The ported code is in ported/common_subclass.py; each value below is what
the same program gave on PyTorch 2.13 (its reprs print no default dtype)."""
from __future__ import annotations

import copy

import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def cs():
    with loaded("common_subclass") as module:
        yield module


def test_non_wrapper_tensor_records_the_last_function_and_deep_copies(cs):
    n = cs.NonWrapperTensor(torch.arange(3.0))
    assert n.extra_state == {"last_func_called": None}
    n2 = n + 1
    assert type(n2) is cs.NonWrapperTensor and n2.tolist() == [1.0, 2.0, 3.0]
    assert n2.extra_state == {"last_func_called": "add"}
    n3 = n2.sin()
    assert n3.extra_state == {"last_func_called": "sin"}
    n4 = copy.deepcopy(n3)  # made by its new_empty, the state copied from the original
    assert type(n4) is cs.NonWrapperTensor and n4.extra_state == {"last_func_called": "sin"}
    assert n4.tolist() == n3.tolist() and not n4._shares_memory(n3)


def test_plain_subclass_without_new_empty_cannot_be_deep_copied(cs):
    # PyTorch 2.13 refuses it too: new_empty, run with the function layer off, gives a plain Tensor.
    class Plain(torch.Tensor):
        pass

    with pytest.raises(RuntimeError, match="only works for subclass types that implement new_empty"):
        copy.deepcopy(torch.arange(3.0).as_subclass(Plain))


def test_wrapper_tensor_with_custom_sizes(cs):
    w = cs.WrapperTensorWithCustomSizes(torch.ones(2, 3))
    out = w + w
    assert type(out) is cs.WrapperTensorWithCustomSizes and out.t.tolist() == [[2.0] * 3] * 2
    assert repr(w) == ("WrapperTensorWithCustomSizes(t=tensor([[1., 1., 1.],\n        [1., 1., 1.]], "
                       "dtype=opdispatch.float32), dtype=opdispatch.float32)")

    class Overriding(cs.WrapperTensorWithCustomSizes):
        dtype = torch.float64

    with pytest.raises(RuntimeError, match="Subclass Overriding is overwriting the property dtype"):
        Overriding(torch.ones(2))
