"""The _C stub (python/opdispatch/_C.pyi) declares every name the extension
defines. mypy.stubtest (.ci/lint.sh) checks the declared names against the
module but skips private names missing from the stub, and most of _C is
private: a binding added without its stub line would go unnoticed, and code
using it would type-check against nothing."""
from __future__ import annotations

import ast
import pathlib

import opdispatch
from opdispatch import _C

STUB = pathlib.Path(opdispatch.__file__).parent / "_C.pyi"
# Attributes pybind11 gives every class it makes (not part of opdispatch's API).
PYBIND11_INTERNALS = {"_pybind11_conduit_v1_", "__entries"}


def _declared(body: list[ast.stmt]) -> set[str]:
    """The names a module or class body of the stub declares."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def _undeclared(runtime_names: list[str], declared: set[str]) -> list[str]:
    return sorted(name for name in runtime_names
                  if not (name.startswith("__") and name.endswith("__")) and name not in PYBIND11_INTERNALS
                  and name not in declared)


def _stub() -> ast.Module:
    return ast.parse(STUB.read_text())


def test_every_module_level_name_of_C_is_in_the_stub():
    assert _undeclared(dir(_C), _declared(_stub().body)) == []


def test_every_attribute_of_each_C_class_is_in_the_stub():
    classes = [node for node in _stub().body if isinstance(node, ast.ClassDef) and hasattr(_C, node.name)]
    assert len(classes) > 30
    missing = {node.name: _undeclared(list(vars(getattr(_C, node.name))), _declared(node.body)) for node in classes}
    assert {name: names for name, names in missing.items() if names} == {}


def test_an_undeclared_binding_is_reported():
    declared = _declared(ast.parse("def f() -> None: ...\nclass C: ...\nx: int\n").body)
    assert _undeclared(["f", "C", "x", "_new_binding", "__doc__", "_pybind11_conduit_v1_"], declared) == ["_new_binding"]
