"""The coverage matrix (operators x dispatch keys) behind `python -m
opdispatch coverage`: each kind of cell, the text grid and the HTML page."""
from __future__ import annotations

import html.parser
import inspect

import pytest

import opdispatch
from opdispatch import _coverage
from opdispatch.library import fallthrough_kernel

from _extension_build import EXAMPLE, cmake_build


def kinds(cov, op: str) -> dict[str, str]:
    return {k: _coverage.cell_kind(cov.cells[op, k]) for k in cov.keys}


def test_each_kind_of_cell(lib, ns):
    lib.define("direct(Tensor x) -> Tensor")
    line = inspect.currentframe().f_lineno + 1
    lib.impl("direct", lambda x: x, "CPU")
    lib.impl("direct", fallthrough_kernel, "PrivateUse1")
    lib.define("explicit(Tensor x) -> Tensor")
    lib.impl("explicit", lambda x: x, "CompositeExplicitAutograd")
    lib.define("implicit(Tensor x) -> Tensor")
    lib.impl("implicit", lambda x: x, "CompositeImplicitAutograd")
    lib.define("grad(Tensor x) -> Tensor")
    lib.impl("grad", lambda x: x, "Autograd")
    cov = _coverage.coverage(ns)
    assert cov.ops == [f"{ns}::{n}" for n in ("direct", "explicit", "grad", "implicit")]
    assert cov.keys.index("CPU") < cov.keys.index("AutogradCPU")  # by priority
    direct = kinds(cov, f"{ns}::direct")
    assert direct["CPU"] == "kernel" and direct["Meta"] == "missing" and direct["PrivateUse1"] == "fallthrough"
    assert direct["AutogradCPU"] == "fallback" and direct["ADInplaceOrView"] == "fallthrough"
    assert cov.cells[f"{ns}::direct", "CPU"].site == f"{__file__}:{line}"
    explicit = kinds(cov, f"{ns}::explicit")
    assert explicit["CPU"] == explicit["Meta"] == explicit["Undefined"] == "CompositeExplicitAutograd"
    implicit = kinds(cov, f"{ns}::implicit")
    assert implicit["CPU"] == implicit["AutogradCPU"] == "CompositeImplicitAutograd"
    assert kinds(cov, f"{ns}::grad")["AutogradCPU"] == "Autograd"
    assert cov.schemas[f"{ns}::grad"] == f"{ns}::grad(Tensor x) -> Tensor"


def test_columns_are_the_keys_that_serve_some_operator(lib, ns):
    lib.define("only_cpu(Tensor x) -> Tensor")
    lib.impl("only_cpu", lambda x: x, "CPU")
    cov = _coverage.coverage(ns)
    assert "CPU" in cov.keys and "Meta" not in cov.keys and "Undefined" not in cov.keys


def test_text_grid(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    text = _coverage.render_text(_coverage.coverage(ns))
    row = next(line for line in text.splitlines() if line.startswith(f"{ns}::f "))
    cov = _coverage.coverage(ns)
    codes = row.split()[1:]
    assert len(codes) == len(cov.keys) and codes[cov.keys.index("CPU")] == "K"
    assert "K  a kernel registered at this key" in text


class _Cells(html.parser.HTMLParser):
    """Collects the rows of the page's table: [(operator, [(class, text, title)])]."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[tuple[str, str, str]]]] = []
        self._cell = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr":
            self.rows.append(("", []))
        elif tag in ("td", "th") and self.rows:
            self._cell = [tag, a.get("class", ""), "", a.get("title", "")]

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[2] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            kind, cls, text, title = self._cell
            op, cells = self.rows[-1]
            if kind == "th" and not cells and not op:
                self.rows[-1] = (text, cells)
            else:
                cells.append((cls, text, title))
            self._cell = None


def test_html_page_on_builtin_and_cpp_extension_ops():
    opdispatch.ops.load_library(cmake_build())
    cov = _coverage.coverage("myext")
    page = _coverage.render_html(cov, "myext coverage")
    parser = _Cells()
    parser.feed(page)
    body = {op: cells for op, cells in parser.rows[1:]}
    assert sorted(body) == cov.ops
    fma = dict(zip(cov.keys, body["myext::fma"]))
    cls, text, title = fma["CPU"]
    assert (cls, text) == ("kernel", "kernel")
    assert f"C++ {EXAMPLE / 'cpu_kernels.cpp'}:" in title and "myext::fma at CPU" in title
    # The autograd layer's fallback (a default registration replacing the core's, Note [Default fallbacks]).
    assert fma["AutogradCPU"][0] == "fallback" and "_library/autograd.py" in fma["AutogradCPU"][2]
    call_op = dict(zip(cov.keys, body["myext::call_op"]))
    assert call_op["CPU"][:2] == ("CompositeImplicitAutograd", "CIA")
    assert "<title>myext coverage</title>" in page

    builtin = _coverage.coverage("od")
    assert _coverage.cell_kind(builtin.cells["od::add.Tensor", "CPU"]) == "kernel"
    assert _coverage.cell_kind(builtin.cells["od::zeros", "Meta"]) == "CompositeExplicitAutograd"


def test_unknown_namespace():
    with pytest.raises(ValueError, match="no operators in namespace 'no_such_ns'"):
        _coverage.coverage("no_such_ns")
