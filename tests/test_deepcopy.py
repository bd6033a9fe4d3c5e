"""copy.deepcopy of tensors (issue 28, item 1): leaves, gradients, memo
sharing, wrapper subclasses through their __torch_dispatch__, and PyTorch
2.13's refusals. Each expectation is what PyTorch 2.13 gives for the same
program under torch's names."""
from __future__ import annotations

import copy

import pytest

import opdispatch
from opdispatch import Tensor
from opdispatch.utils._pytree import tree_map_only


class Wrapper(Tensor):
    @staticmethod
    def __new__(cls, elem):
        return Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

    def __init__(self, elem):
        self.elem = elem

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        out = func(*tree_map_only(Wrapper, lambda w: w.elem, args), **(kwargs or {}))
        return tree_map_only(Tensor, Wrapper, out)


def test_a_leaf_is_copied_with_its_grad_and_requires_grad():
    t = opdispatch.ones(2, requires_grad=True)
    t.grad = opdispatch.full([2], 3.0)
    d = copy.deepcopy(t)
    assert d.requires_grad and d.is_leaf and d.tolist() == [1.0, 1.0]
    assert d.grad.tolist() == [3.0, 3.0] and d.grad is not t.grad
    with opdispatch.no_grad():
        d.add_(1)
    assert t.tolist() == [1.0, 1.0]  # its own memory


def test_one_tensor_reached_twice_is_copied_once():
    t = opdispatch.ones(2)
    c = copy.deepcopy({"a": t, "b": t, "t": t})
    assert c["a"] is c["b"] is c["t"] and c["a"] is not t


def test_a_wrapper_subclass_is_copied_through_its_handler_with_its_attributes():
    w = Wrapper(opdispatch.ones(2))
    w.tag = {"k": [1]}
    d = copy.deepcopy(w)
    assert type(d) is Wrapper and d.elem.tolist() == [1.0, 1.0] and d.elem is not w.elem
    assert d.tag == {"k": [1]} and d.tag is not w.tag


def test_meta_tensors_copy_to_meta():
    assert copy.deepcopy(opdispatch.empty(2, device="meta")).device.type == "meta"


def test_refusals():
    with pytest.raises(RuntimeError, match=r"Only Tensors created explicitly by the user \(graph leaves\)"):
        copy.deepcopy(opdispatch.ones(2, requires_grad=True) * 2)
    # A subclass whose copy comes back as another class (here: the default __torch_function__ runs clone()
    # with subclasses disabled) is refused, as PyTorch 2.13 refuses it.
    sub = opdispatch.ones(2).as_subclass(type("Sub", (Tensor,), {}))
    with pytest.raises(RuntimeError, match="__deepcopy__"):
        copy.deepcopy(sub)
