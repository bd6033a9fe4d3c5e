"""Where registrations say they were made (Note [Registration sites] in
opdispatch/library.py): the user's define and impl lines, each built-in
operator's declaring statement, and C++ sites relative to the project."""
from __future__ import annotations

import inspect
import linecache
import re
from pathlib import Path

import pytest

import opdispatch  # noqa: F401  (registers the built-in operators)
from opdispatch import _C
from opdispatch._introspection import table_entries

REPO = Path(__file__).resolve().parent.parent


def sites_of(qualname: str) -> set[str]:
    """'file:line' of the definition and of every kernel of ``qualname``."""
    dump = _C._dispatch_dump(qualname)
    return set(re.findall(r"registered at (\S+:\d+)", dump))


def test_each_builtin_operator_is_attributed_to_the_statement_declaring_it():
    ops = [n for n in _C._dispatch_get_all_op_names() if n.startswith("od::")]
    assert len(ops) > 50
    for qualname in ops:
        base = qualname.split("::")[1].split(".")[0]
        sites = sites_of(qualname)
        assert sites, qualname
        for site in sites:
            file, line = site.rsplit(":", 1)
            assert "/opdispatch/_builtins/" in file and not file.endswith("_registry.py"), (qualname, site)
            assert base in linecache.getline(file, int(line)), (qualname, site)  # e.g. `exp = _unary("exp(...)"`


def test_builtin_definitions_are_not_attributed_to_the_import_machinery():
    debug = _C._dispatch_find_schema_or_throw("od::add", "Tensor").debug()
    assert "frozen" not in debug and debug.startswith("registered at ") and "elementwise.py:" in debug


def test_a_duplicate_define_names_both_define_lines(lib, ns):
    first_line = inspect.currentframe().f_lineno + 1
    lib.define("foo(Tensor x) -> Tensor")
    second_line = inspect.currentframe().f_lineno + 2
    with pytest.raises(RuntimeError) as info:
        lib.define("foo(Tensor x) -> Tensor")
    message = str(info.value)
    assert f"Duplicate registration: registered at {__file__}:{second_line}." in message
    assert f"Original registration: registered at {__file__}:{first_line}" in message
    assert _C._dispatch_find_schema_or_throw(f"{ns}::foo", "").debug() == f"registered at {__file__}:{first_line}"


def test_kernels_record_their_impl_lines(lib, ns):
    lib.define("foo(Tensor x) -> Tensor")
    line = inspect.currentframe().f_lineno + 1
    lib.impl("foo", lambda x: x, "CPU")
    assert table_entries(f"{ns}::foo")["CPU"].site == f"{__file__}:{line}"


def test_cpp_sites_name_the_file_within_the_project():
    # The core's fallthrough fallbacks, registered in C++ at static initialisation.
    entry = table_entries("od::add.Tensor")["ADInplaceOrView"]
    assert entry.fallthrough and entry.rule == "backend fallback"
    match = re.fullmatch(r"opdispatch/(csrc/opdispatch/(?:\w+/)?\w+\.cpp):(\d+)", entry.site)
    assert match, entry.site
    assert "makeFallthrough()" in (REPO / match.group(1)).read_text().splitlines()[int(match.group(2)) - 1]
    assert entry.origin == f"C++ {entry.site}"
