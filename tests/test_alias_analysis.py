"""The alias-analysis kind a definition gives is stored with the operator
and shown by _dispatch_dump, as PyTorch shows it (PyTorch 2.13:
OperatorEntry::dumpState, parseAliasAnalysisKind in python_dispatch.cpp)."""
from __future__ import annotations

import pytest

from opdispatch import _C
from opdispatch.library import Library


def kind_of(name: str) -> str:
    line = next(line for line in _C._dispatch_dump(name).splitlines() if line.startswith("alias analysis kind:"))
    return line.split(": ", 1)[1]


@pytest.mark.parametrize("given, shown", [("", "FROM_SCHEMA"), ("FROM_SCHEMA", "FROM_SCHEMA"),
                                          ("CONSERVATIVE", "CONSERVATIVE")])
def test_library_define_stores_the_kind(ns, given, shown):
    lib = Library(ns, "FRAGMENT")
    try:
        lib.define("f(Tensor x) -> Tensor", alias_analysis=given)
        assert kind_of(f"{ns}::f") == shown
    finally:
        lib._destroy()


def test_the_c_helpers_store_what_pytorch_shows(ns):
    m = _C._dispatch_library("FRAGMENT", ns, "")
    try:
        m.def_("a(Tensor x) -> Tensor", "PURE_FUNCTION")
        m.def_legacy("b(Tensor x) -> Tensor")
        m.def_schema_t_t("c(Tensor x) -> Tensor", "CPU", "CONSERVATIVE", "dbg")
        m.def_name_t_t("d", "CPU", "dbg")
        assert [kind_of(f"{ns}::{n}") for n in "abcd"] == [
            "PURE_FUNCTION", "CONSERVATIVE (default)", "CONSERVATIVE", "CONSERVATIVE"]
        with pytest.raises(ValueError, match="could not parse alias analysis kind 'BOGUS'"):
            m.def_("e(Tensor x) -> Tensor", "BOGUS")
        assert not _C._dispatch_has_kernel(f"{ns}::e")
    finally:
        m.reset()


def test_the_kind_goes_with_the_definition(ns):
    m = _C._dispatch_library("FRAGMENT", ns, "")
    m.def_("a(Tensor x) -> Tensor", "CONSERVATIVE")
    m.reset()
    m = _C._dispatch_library("FRAGMENT", ns, "")
    try:
        m.def_("a(Tensor x) -> Tensor")
        assert kind_of(f"{ns}::a") == "FROM_SCHEMA"
    finally:
        m.reset()
