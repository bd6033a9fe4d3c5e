"""Port of PyTorch's torch/testing/_internal/custom_tensor.py
(ConstantExtraMetadataTensor, CustomTensorPlainOut), traceable wrapper
subclasses with flatten metadata, return_and_correct_aliasing and
func.is_view. The ported code is in ported/custom_tensor.py; each value
below is what the same program printed on PyTorch 2.13 (its reprs print no
default dtype; opdispatch's always do)."""
from __future__ import annotations

import pytest

import opdispatch as torch
from opdispatch.utils._python_dispatch import is_traceable_wrapper_subclass, transform_subclass
from _port import loaded


@pytest.fixture(scope="module")
def ct():
    with loaded("custom_tensor") as module:
        yield module


def show(ct, t):
    if isinstance(t, ct.ConstantExtraMetadataTensor):
        return ("CEMT", t.elem.tolist(), t.constant_attribute, tuple(t.shape), t.stride())
    if isinstance(t, ct.CustomTensorPlainOut):
        return ("CTPO", t.elem1.tolist(), t.elem2.tolist(), tuple(t.shape))
    return ("plain", t.tolist())


def test_constant_extra_metadata_tensor(ct):
    a = ct.ConstantExtraMetadataTensor(torch.arange(6.0).view(2, 3))
    assert is_traceable_wrapper_subclass(a) and a.get_complicated_metadata() == (4, 4)
    a.add_constant(3)
    doubled = ("CEMT", [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]], 4, (2, 3), (3, 1))
    assert show(ct, a + a) == doubled and show(ct, a * 2.0) == doubled
    assert show(ct, a.sum()) == ("CEMT", 15.0, 4, (), ())
    assert show(ct, a.t()) == ("CEMT", [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]], 4, (3, 2), (1, 3))
    assert show(ct, a.view(3, 2)) == ("CEMT", [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]], 4, (3, 2), (2, 1))
    v = a.t()
    assert (v._version, a._version) == (0, 0)
    a.add_(1.0)  # in place on the wrapper: the inner tensor and the view see it, the metadata stays
    assert show(ct, a) == ("CEMT", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 7, (2, 3), (3, 1)) and a._version == 1
    assert show(ct, v) == ("CEMT", [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]], 4, (3, 2), (1, 3))
    assert show(ct, transform_subclass(a, lambda name, t: t * 10)) == \
        ("CEMT", [[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]], 7, (2, 3), (3, 1))
    inner, meta = a.__tensor_flatten__()
    assert (inner, meta) == (["elem"], 7)
    b = ct.ConstantExtraMetadataTensor.__tensor_unflatten__({"elem": a.elem.clone()}, meta, a.shape, a.stride())
    assert show(ct, b) == ("CEMT", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 7, (2, 3), (3, 1))
    assert repr(ct.ConstantExtraMetadataTensor(torch.tensor([1.0, 2.0]))) == \
        "CustomTensor(tensor([1., 2.], dtype=opdispatch.float32))"


def test_custom_tensor_plain_out(ct):
    p = ct.CustomTensorPlainOut(torch.arange(4.0), torch.ones(4))
    assert show(ct, p + p) == ("plain", [2.0, 4.0, 6.0, 8.0])
    assert show(ct, p * 3.0) == ("plain", [3.0, 6.0, 9.0, 12.0])
    assert show(ct, p.view(2, 2)) == ("CTPO", [[0.0, 1.0], [2.0, 3.0]], [[1.0, 1.0], [1.0, 1.0]], (2, 2))
    assert show(ct, p.sum()) == ("plain", 10.0) and show(ct, p.get_elem()) == ("plain", [0.0, 1.0, 2.0, 3.0])
    assert is_traceable_wrapper_subclass(p) and p.__tensor_flatten__() == (["elem1", "elem2"], None)
    assert repr(ct.CustomTensorPlainOut(torch.tensor([1.0]), torch.tensor([2.0]))) == \
        "CustomTensorPlainOut(tensor([1.], dtype=opdispatch.float32), tensor([2.], dtype=opdispatch.float32))"
