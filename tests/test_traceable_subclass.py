"""The traceable wrapper subclass protocol (``__tensor_flatten__`` /
``__tensor_unflatten__``) and its helpers in
opdispatch.utils._python_dispatch (issue 28, item 1). The expected values
are PyTorch 2.13's for the same program under torch's names."""
from __future__ import annotations

import pytest

import opdispatch
from opdispatch import Tensor
from opdispatch.utils._python_dispatch import (
    is_traceable_wrapper_subclass,
    is_traceable_wrapper_subclass_type,
    transform_subclass,
)
from opdispatch.utils._pytree import tree_map_only


class Pair(Tensor):
    """Two tensors of one shape behind one wrapper, each operator applied to both (the pattern of PyTorch's
    TwoTensor test subclass)."""

    @staticmethod
    def __new__(cls, a, b, outer_size=None, outer_stride=None):
        size = a.shape if outer_size is None else outer_size
        stride = a.stride() if outer_stride is None else outer_stride
        return Tensor._make_wrapper_subclass(cls, size, strides=stride, dtype=a.dtype)

    def __init__(self, a, b, outer_size=None, outer_stride=None):
        self.a, self.b = a, b

    def __tensor_flatten__(self):
        return ["a", "b"], {"tag": 1}

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        assert ctx == {"tag": 1}
        return Pair(inner["a"], inner["b"], outer_size, outer_stride)

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        a = func(*tree_map_only(Pair, lambda p: p.a, args), **(kwargs or {}))
        b = func(*tree_map_only(Pair, lambda p: p.b, args), **(kwargs or {}))
        return Pair(a, b)


class Unshaped(Pair):
    """Rebuilds itself with its inner shape whatever outer size it is given."""

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        return Unshaped(inner["a"], inner["b"])


def test_which_objects_and_classes_follow_the_protocol():
    p = Pair(opdispatch.ones(2, 3), opdispatch.zeros(2, 3))
    assert is_traceable_wrapper_subclass(p) and is_traceable_wrapper_subclass_type(Pair)
    assert not is_traceable_wrapper_subclass(opdispatch.ones(1))
    assert not is_traceable_wrapper_subclass_type(Tensor)
    assert not is_traceable_wrapper_subclass(opdispatch.ones(1).as_subclass(type("Plain", (Tensor,), {})))


def test_transform_subclass_maps_each_inner_tensor_in_flatten_order():
    p = Pair(opdispatch.ones(2, 3), opdispatch.zeros(2, 3))
    seen = []
    q = transform_subclass(p, lambda name, t: (seen.append(name), t * 2)[1])
    assert type(q) is Pair and seen == ["a", "b"]
    assert q.a.tolist() == [[2.0] * 3] * 2 and q.b.tolist() == [[0.0] * 3] * 2
    assert tuple(q.shape) == (2, 3) and tuple(q.stride()) == (3, 1)
    assert (q + 1).a.tolist() == [[3.0] * 3] * 2  # the new instance dispatches as the old one


def test_transform_subclass_checks_the_outer_size_and_stride():
    u = Unshaped(opdispatch.ones(2, 3), opdispatch.ones(2, 3))
    with pytest.raises(AssertionError, match=r"to have shape equal to \(6,\), but got"):
        transform_subclass(u, lambda name, t: t, outer_size=(6,), outer_stride=(1,))
    with pytest.raises(AssertionError, match=r"to have stride equal to \(1, 2\), but got"):
        transform_subclass(u, lambda name, t: t, outer_stride=(1, 2))
