"""Operators that return Python scalars (python/opdispatch/_builtins/scalar_queries.py) and the Tensor
conversions that use them: item(), bool(), float(), int() and operator.index() of a subclass or under a
dispatch mode call od::_local_scalar_dense as PyTorch 2.13 calls aten::_local_scalar_dense (checked with a
logging TorchDispatchMode there); tolist() dispatches nothing and refuses subclasses that handle dispatch.
The values and the sym_* results are compared with PyTorch by tests/test_opinfo.py (tests/op_db.py)."""
from __future__ import annotations

import operator

import pytest

import opdispatch
from opdispatch import Tensor, ops
from opdispatch.utils._python_dispatch import TorchDispatchMode
from opdispatch.utils._pytree import tree_map_only


class Logging(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


class Wrapper(Tensor):
    @staticmethod
    def __new__(cls, elem):
        r = Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
        r.elem = elem
        return r

    seen: list = []

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(str(func))
        out = func(*tree_map_only(Wrapper, lambda t: t.elem, args), **tree_map_only(Wrapper, lambda t: t.elem,
                                                                                      kwargs or {}))
        return tree_map_only(Tensor, Wrapper, out)


LOCAL_SCALAR_DENSE = str(ops.od._local_scalar_dense.default)


@pytest.mark.parametrize("convert, value", [(Tensor.item, 1.5), (bool, True), (float, 1.5), (int, 1)],
                         ids=["item", "bool", "float", "int"])
def test_conversions_dispatch_local_scalar_dense_under_a_mode(convert, value):
    x = opdispatch.tensor([1.5])
    with Logging() as mode:
        got = convert(x)
    assert got == value and type(got) is type(value)
    assert mode.seen == [LOCAL_SCALAR_DENSE]


def test_index_of_an_integer_tensor_dispatches_local_scalar_dense():
    x = opdispatch.tensor(3)
    with Logging() as mode:
        assert operator.index(x) == 3
    assert mode.seen == [LOCAL_SCALAR_DENSE]


def test_tolist_under_a_mode_dispatches_nothing():
    x = opdispatch.tensor([[1, 2], [3, 4]])
    with Logging() as mode:
        assert x.tolist() == [[1, 2], [3, 4]]
    assert mode.seen == []


def test_a_wrapper_subclass_converts_through_its_torch_dispatch():
    w = Wrapper(opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    s = w[1, 0]
    Wrapper.seen = []
    assert s.item() == 3.0 and bool(s) is True and float(s) == 3.0 and int(s) == 3
    assert Wrapper.seen == [LOCAL_SCALAR_DENSE] * 4
    with pytest.raises(RuntimeError, match="a Tensor with 4 elements cannot be converted to Scalar"):
        w.item()
    with pytest.raises(RuntimeError, match=r"^\.tolist\(\) is not supported for tensor subclasses, got Wrapper$"):
        w.tolist()


def test_a_subclass_without_torch_dispatch_keeps_tolist():
    class Plain(Tensor):
        pass

    assert opdispatch.tensor([1.0, 2.0]).as_subclass(Plain).tolist() == [1.0, 2.0]


def test_local_scalar_dense_reads_the_first_element_and_rejects_empty_and_meta():
    # PyTorch 2.13: the operator itself does not check for one element (item() does).
    assert ops.od._local_scalar_dense(opdispatch.tensor([[7, 8], [9, 10]])) == 7
    with pytest.raises(RuntimeError, match="^_local_scalar_dense: Empty tensor not supported$"):
        ops.od._local_scalar_dense(opdispatch.empty(0))
    with pytest.raises(RuntimeError, match=r"^Tensor.item\(\) cannot be called on meta tensors$"):
        opdispatch.empty(1, device="meta").item()


def test_local_scalar_dense_of_a_tensor_that_requires_grad_is_a_plain_number():
    x = opdispatch.tensor([2.5], requires_grad=True)
    assert ops.od._local_scalar_dense(x) == 2.5 and x.item() == 2.5


def test_sym_queries_are_plain_python_values():
    y = opdispatch.ones(2, 3)
    got = (ops.od.sym_size.int(y, -1), ops.od.sym_stride.int(y, 0), ops.od.sym_numel(y),
           ops.od.sym_storage_offset(y), ops.od.sym_is_contiguous(y))
    assert got == (3, 3, 6, 0, True) and [type(v) for v in got] == [int, int, int, int, bool]
    assert ops.od.sym_storage_offset(y[1]) == 3 and ops.od.sym_is_contiguous(y.t()) is False
    with pytest.raises(IndexError):
        ops.od.sym_size.int(y, 2)
