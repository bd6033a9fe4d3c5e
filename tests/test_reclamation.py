"""Reclaimed operator entries (Note [Kernel lifetime]): an OpOverload kept past
the removal of its definition raises a clear error and works again once the
operator is defined again; the name indexes forget operators whose entries
were freed. Memory per define/destroy cycle is measured by benchmarks/leak.py."""
from __future__ import annotations

import gc

import pytest

import opdispatch
from opdispatch import _C
from opdispatch.library import Library


def _define(ns: str, schema: str, kernel) -> Library:
    lib = Library(ns, "FRAGMENT")
    name = lib.define(schema)
    lib.impl(name, kernel, "CPU")
    return lib


def test_kept_overload_raises_after_destroy_and_works_after_redefinition():
    x = opdispatch.ones(2)
    lib = _define("reclaim_py", "f(Tensor x) -> Tensor", lambda t: t + 1)
    op = opdispatch.ops.reclaim_py.f.default
    assert (op(x).numpy() == 2).all()
    lib._destroy()
    with pytest.raises(RuntimeError, match="reclaim_py::f.*no schema"):
        op(x)
    lib = _define("reclaim_py", "f(Tensor x) -> Tensor", lambda t: t + 2)
    assert (op(x).numpy() == 3).all()
    lib._destroy()


def test_overload_index_forgets_freed_entries():
    libs = [_define("reclaim_idx", f"g.o{i}(Tensor x) -> Tensor", lambda t: t) for i in range(3)]
    assert _C._dispatch_find_overload_names("reclaim_idx::g") == ["o0", "o1", "o2"]
    libs[1]._destroy()
    gc.collect()
    assert _C._dispatch_find_overload_names("reclaim_idx::g") == ["o0", "o2"]
    for lib in libs:
        lib._destroy()
    gc.collect()
    assert _C._dispatch_find_overload_names("reclaim_idx::g") == []
    assert not any(n.startswith("reclaim_idx::") for n in _C._dispatch_get_all_op_names())
    lib = _define("reclaim_idx", "g.o1(Tensor x) -> Tensor", lambda t: t * 2)
    assert _C._dispatch_find_overload_names("reclaim_idx::g") == ["o1"]
    x = opdispatch.ones(2)
    assert (opdispatch.ops.reclaim_idx.g(x).numpy() == 2).all()
    lib._destroy()
