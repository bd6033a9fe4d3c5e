"""return_and_correct_aliasing and the schema facts it reads
(get_alias_info), called directly on plain tensors and on a small wrapper
subclass (issue 28, item 1; the TwoTensor port in tests/ecosystem runs it
from a real subclass). Expected values are PyTorch 2.13's for the same
program under torch's names (torch._C._is_alias_of for _shares_memory)."""
from __future__ import annotations

import pytest

import opdispatch
from opdispatch import Tensor, _C
from opdispatch.library import Library
from opdispatch.utils._python_dispatch import AliasInfo, get_alias_info, return_and_correct_aliasing

od = opdispatch.ops.od


class Wrapper(Tensor):
    """A traceable wrapper subclass with no data of its own."""

    @staticmethod
    def __new__(cls, inner):
        return Tensor._make_wrapper_subclass(cls, inner.shape, strides=inner.stride(), dtype=inner.dtype)

    def __init__(self, inner):
        self.inner = inner

    def __tensor_flatten__(self):
        return ["inner"], None

    @staticmethod
    def __tensor_unflatten__(inner, ctx, outer_size, outer_stride):
        return Wrapper(inner["inner"])

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise AssertionError(f"{func} should not be dispatched")


def test_alias_info_of_an_in_place_a_view_and_an_out_operator():
    add_ = get_alias_info(od.add_.Tensor)
    assert add_.args[0] == AliasInfo(alias_set={"a"}, is_write=True, name="self")
    assert add_.outs == [AliasInfo(alias_set={"a"}, is_write=True, name=None)]
    assert add_.outs_write_aliases == ["a"] and add_.read_only_alias_match_indexes == []
    assert not add_.is_inplace_view_op
    out = get_alias_info(od.atan2.out)
    assert out.args[2] == AliasInfo(alias_set={"a"}, is_write=True, name="out") and out.outs_write_aliases == ["a"]
    view = get_alias_info(od.view.default)
    assert view.outs_write_aliases is None and view.read_only_alias_match_indexes == [(0, 0)]


def test_a_list_return_takes_its_elements_alias():
    # torchgen reads "Tensor(a)[]" as alias a, as PyTorch's get_alias_info does for aten ops.
    info = get_alias_info(od.split_with_sizes.default)
    assert info.outs[0].alias_set == {"a"} and info.read_only_alias_match_indexes == [(0, 0)]


def test_a_schema_mixing_written_and_fresh_returns_is_refused(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("mixed(Tensor(a!) x, Tensor(b) y) -> (Tensor(a!), Tensor)")
    with pytest.raises(RuntimeError, match=r"Unsupported schema: .*mixed"):
        get_alias_info(getattr(opdispatch.ops, ns).mixed.default)


def test_plain_tensors_view_in_place_and_fresh_results():
    base = opdispatch.ones(3)
    fresh = base.clone()
    assert return_and_correct_aliasing(od.view.default, (base, [3]), {}, fresh) is fresh
    assert fresh._shares_memory(base) and fresh._shares_storage(base)
    assert return_and_correct_aliasing(od.add_.Tensor, (base, base), {}, opdispatch.zeros(1)) is base
    other = base.clone()
    assert return_and_correct_aliasing(od.add.Tensor, (base, base), {}, other) is other
    assert not other._shares_memory(base)
    pieces = list(od.split_with_sizes.default(base.clone(), [1, 2]))
    assert return_and_correct_aliasing(od.split_with_sizes.default, (base, [1, 2]), {}, pieces) is pieces
    assert [p._shares_memory(base) for p in pieces] == [True, True]


def test_a_view_keeps_its_own_geometry_and_reads_the_base():
    base = opdispatch.arange(6.0)
    view = opdispatch.zeros(2, 2)
    return_and_correct_aliasing(od.as_strided.default, (base, [2, 2], [2, 1], 1), {}, view)
    assert tuple(view.shape) == (2, 2) and view.stride() == (2, 1)
    assert view.tolist() == [[0.0, 1.0], [2.0, 3.0]]  # its own offset 0, now in base's memory
    base.add_(1)
    assert view.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_written_arguments_are_found_by_keyword_too(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("two(Tensor(a!) x, Tensor(b!) y) -> (Tensor(a!), Tensor(b!))")
    x, y = opdispatch.ones(1), opdispatch.ones(1)
    op = getattr(opdispatch.ops, ns).two.default
    res = return_and_correct_aliasing(op, (x,), {"y": y}, (opdispatch.zeros(1), opdispatch.zeros(1)))
    assert type(res) is tuple and res[0] is x and res[1] is y
    o = opdispatch.zeros(1)
    assert return_and_correct_aliasing(od.atan2.out, (x, x), {"out": o}, opdispatch.zeros(1)) is o


def test_wrapper_views_alias_and_type_mismatches_are_refused():
    base = Wrapper(opdispatch.ones(2, 3))
    view = Wrapper(opdispatch.ones(3, 2))
    assert return_and_correct_aliasing(od.view.default, (base, [3, 2]), {}, view) is view
    assert view._shares_memory(base) and not view._has_storage()
    with pytest.raises(AssertionError, match="But expected types to match"):
        return_and_correct_aliasing(od.view.default, (base, [6]), {}, opdispatch.zeros(6))


def test_not_an_operator_overload():
    with pytest.raises(AttributeError):
        return_and_correct_aliasing(opdispatch.add, (opdispatch.ones(1),), {}, opdispatch.ones(1))


def test_functionalize_unsafe_set_refuses_a_storage_too_small():
    # PyTorch 2.13 lets the larger tensor read past the storage; opdispatch refuses (no crash on bad input).
    dst, src = opdispatch.zeros(5), opdispatch.ones(2)
    with pytest.raises(IndexError, match="reaches byte 20 of the new storage, which has 8 bytes"):
        _C._functionalize_unsafe_set(dst, src)
    assert dst.tolist() == [0.0] * 5 and not dst._shares_memory(src)
    with pytest.raises(TypeError, match=r"_functionalize_unsafe_set\(dst: Tensor, src: Tensor\)"):
        _C._functionalize_unsafe_set(dst, 1)


def test_an_inplace_view_operator_must_write_one_argument(ns):
    # PyTorch's return_and_correct_aliasing asserts that an inplace_view operator writes exactly one argument
    # (the one whose metadata it updates); the built-in ones are checked with TwoTensor (tests/ecosystem).
    lib = Library(ns, "FRAGMENT")
    lib.define("swap_inplace(Tensor(a!) x, Tensor(b!) y) -> (Tensor(a!), Tensor(b!))", tags=opdispatch.Tag.inplace_view)
    op = getattr(opdispatch.ops, ns).swap_inplace.default
    assert get_alias_info(op).is_inplace_view_op
    x, y = opdispatch.ones(1, 2), opdispatch.ones(1, 2)
    with pytest.raises(AssertionError, match="exactly one mutated argument"):
        return_and_correct_aliasing(op, (x, y), {}, (x, y))