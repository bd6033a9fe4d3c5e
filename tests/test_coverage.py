"""The coverage matrix (operators x dispatch keys) behind `python -m
opdispatch coverage`: each kind of cell, the text grid and the HTML page."""
from __future__ import annotations

import html.parser
import inspect

import pytest

import opdispatch
from opdispatch import _coverage
from opdispatch._core_aten import CORE_ATEN
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
    # The keys are numbered in a list above the grid, and the numbers head their columns in two lines.
    lines = text.splitlines()
    at = lines.index(row)
    tens, units = lines[at - 2], lines[at - 1]
    number = cov.keys.index("CPU") + 1
    column = len(row) - len(" ".join(codes)) + 2 * (number - 1)
    assert (tens[column] + units[column]).strip() == str(number)
    assert f" {number} CPU " in " ".join(lines[:at]) + " "
    assert all(len(line) <= 120 for line in lines[:at - 2] if line.startswith(("Keys:", "    ")))


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


def test_py_impl_kernels_are_marked_where_the_python_dispatcher_would_run_them(lib, ns):
    from opdispatch import _C
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    op = getattr(opdispatch.ops, ns).f.default
    line = inspect.currentframe().f_lineno + 1
    @op.py_impl(_C.DispatchKey.CompositeExplicitAutograd)
    def f_py(x):
        return x

    class Mode(TorchDispatchMode):
        pass

    op.py_impl(Mode)(lambda mode, x: x)
    cov = _coverage.coverage(ns)
    name = f"{ns}::f"
    py = cov.py_cells
    # resolve_key's precedence: the C++ kernel at CPU wins; the py_impl CEA kernel serves the other backends.
    assert (name, "CPU") not in py and py[name, "Meta"].source == "CompositeExplicitAutograd"
    assert py[name, "Meta"].site == f"{__file__}:{line}" and py[name, "Meta"].kernel.endswith("f_py")
    assert py[name, "Undefined"].rule == "default backend kernel" and (name, "AutogradCPU") not in py
    assert "Mode" in py[name, "Python"].kernel
    assert "Meta" in cov.keys and "Python" in cov.keys  # columns a py_impl kernel serves are shown
    assert _coverage.cell_kind(cov.cells[name, "Meta"]) == "missing"  # the C++ table is unchanged
    row = next(line for line in _coverage.render_text(cov).splitlines() if line.startswith(f"{name} "))
    codes = dict(zip(cov.keys, row.split()[1:]))
    assert codes["CPU"] == "K" and codes["Meta"] == codes["Python"] == "P"
    parser = _Cells()
    parser.feed(_coverage.render_html(cov, "t"))
    cells = dict(zip(cov.keys, dict(parser.rows[1:])[name]))
    assert cells["Meta"][0] == "missing pyimpl" and cells["CPU"][0] == "kernel"
    assert "py_impl(CompositeExplicitAutograd) kernel" in cells["Meta"][2] and f"{__file__}:{line}" in cells["Meta"][2]


def test_a_section_for_higher_order_operators():
    from opdispatch import _C
    from opdispatch._ops import HigherOrderOperator, _higher_order_ops

    hop = HigherOrderOperator("coverage_hop")
    try:
        line = inspect.currentframe().f_lineno + 1
        @hop.py_impl(_C.DispatchKey.CPU)
        def on_cpu(x):
            return x

        hop.fallthrough(_C.DispatchKey.AutogradCPU)
        cov = _coverage.coverage("higher_order")
        assert cov.ops == [] and {"cond", "map_impl", "coverage_hop"} <= set(cov.hops)
        mine = {k: _coverage.cell_kind(cov.hop_cells["coverage_hop", k]) for k in cov.hop_keys}
        assert mine["CPU"] == "kernel" and cov.hop_cells["coverage_hop", "CPU"].site == f"{__file__}:{line}"
        assert mine["AutogradCPU"] == mine["PythonDispatcher"] == mine["ADInplaceOrView"] == "fallthrough"
        assert mine["Meta"] == "missing" and mine["Python"] == "modes"
        cond = {k: _coverage.cell_kind(cov.hop_cells["cond", k]) for k in cov.hop_keys}
        assert cond["CPU"] == cond["Undefined"] == "CompositeExplicitAutograd" and cond["AutogradCPU"] == "Autograd"
        assert "ProxyTorchDispatchMode, FakeTensorMode" in cov.hop_cells["cond", "Python"].kernel
        text = _coverage.render_text(cov)
        assert "Higher-order operators (opdispatch.ops.higher_order" in text
        row = next(line for line in text.splitlines() if line.startswith("coverage_hop "))
        assert dict(zip(cov.hop_keys, row.split()[1:]))["CPU"] == "K"
        page = _coverage.render_html(cov, "t")
        parser = _Cells()
        parser.feed(page)
        rows = dict(parser.rows)
        assert [c[1] for c in rows["higher-order operator"]][:1] == ["Undefined"]
        cells = dict(zip(cov.hop_keys, rows["cond"]))
        assert cells["Python"][:2] == ("modes", "modes") and "FakeTensorMode" in cells["Python"][2]
        assert cells["AutogradCPU"][0] == "Autograd" and "cond.py:" in cells["AutogradCPU"][2]
        assert '<h2 id="higher-order">' in page
        assert "cond" in _coverage.coverage().hops and _coverage.coverage("od").hops == []
    finally:
        del _higher_order_ops["coverage_hop"]


# --- per operator: CPU, Meta, autograd, decomposition, Core ATen ---------------------------------------------------


def test_what_each_operator_has(lib, ns):
    lib.define("full_set(Tensor x) -> Tensor")
    lib.impl("full_set", lambda x: x, "CPU")
    lib.impl("full_set", lambda x: x, "Meta")
    lib.impl("full_set", lambda x: x, "Autograd")
    lib.define("decomposed(Tensor x) -> Tensor")
    lib.impl("decomposed", lambda x: x, "CompositeImplicitAutograd")
    lib.define("py_decomposed(Tensor x) -> Tensor")
    lib.impl("py_decomposed", lambda x: x, "CPU")
    getattr(opdispatch.ops, ns).py_decomposed.default.py_impl(opdispatch._C.DispatchKey.CompositeImplicitAutograd)(
        lambda x: x)
    cov = _coverage.coverage(ns)
    assert _coverage.support(cov, f"{ns}::full_set") == _coverage.Support("kernel", "kernel", "Autograd", False, False)
    assert _coverage.support(cov, f"{ns}::decomposed") == _coverage.Support(
        "CompositeImplicitAutograd", "CompositeImplicitAutograd", "CompositeImplicitAutograd", True, False)
    py = _coverage.support(cov, f"{ns}::py_decomposed")
    assert py.decomposition and py.cpu == "kernel" and py.meta == "py_impl" and py.autograd == "fallback"
    text = _coverage.render_text(cov)
    rows = [line.split() for line in text.splitlines() if line.startswith(f"{ns}::full_set ")]
    assert rows[1] == [f"{ns}::full_set", "K", "K", "A", ".", "."]  # rows[0] is the keys' grid
    assert [line.split() for line in text.splitlines() if line.startswith(f"{ns}::decomposed ")][1][1:] == [
        "I", "I", "I", "D", "."]
    assert _coverage.core_aten_missing(cov) is None and "Core ATen opset of" not in text


def test_core_aten_membership_and_summary():
    cov = _coverage.coverage("od")
    assert _coverage.support(cov, "od::add.Tensor").core and not _coverage.support(cov, "od::add_.Tensor").core
    assert _coverage.support(cov, "od::to.dtype").decomposition and not _coverage.support(cov, "od::mm").decomposition
    # Every od operator named like a core overload carries PyTorch's core tag (tests/test_core_aten.py).
    tagged = {op for op in cov.ops
              if opdispatch.Tag.core in getattr(getattr(opdispatch.ops.od, op[4:].partition(".")[0]),
                                                op[4:].partition(".")[2] or "default").tags}
    assert {op for op in cov.ops if _coverage.support(cov, op).core} == tagged
    missing = _coverage.core_aten_missing(cov)
    assert len(tagged) + len(missing) == len(CORE_ATEN) == 193 and not {"od::" + m for m in missing} & set(cov.ops)
    text = _coverage.render_text(cov)
    assert missing == [] and len(tagged) == 193
    assert text.rstrip().endswith("Core ATen opset of PyTorch 2.13.0+cpu: 193 of 193 overloads are od operators")
    assert all(len(line) <= 120 for line in text.splitlines()[-10:])
    add = [line.split() for line in text.splitlines() if line.startswith("od::add.Tensor ")][1]
    assert add == ["od::add.Tensor", "K", "K", "A", ".", "C"]

    page = _coverage.render_html(cov, "od coverage")
    parser = _Cells()
    parser.feed(page)
    header, *rows = parser.rows
    assert [c[1] for c in header[1]][-2:] == ["Decomposition", "Core ATen"]
    body = dict(rows)
    assert [c[:2] for c in body["od::add.Tensor"][-2:]] == [("missing extra extra-1", ""),
                                                            ("core extra extra-0", "core")]
    assert body["od::to.dtype"][-2][:2] == ("CompositeImplicitAutograd extra extra-1", "yes")
    assert "aten::add.Tensor core" in body["od::add.Tensor"][-1][2]
    assert f'<p id="core-aten">Core ATen opset of PyTorch 2.13.0+cpu: {len(tagged)} of 193' in page


def test_the_command_counts_the_core_aten_overloads(tmp_path, capsys):
    from opdispatch.__main__ import main

    assert main(["coverage", "od", "--html", str(tmp_path / "od.html")]) == 0
    missing = _coverage.core_aten_missing(_coverage.coverage("od"))
    assert capsys.readouterr().out.endswith(f"; Core ATen: {193 - len(missing)} of 193 overloads in od\n")
    assert main(["coverage", "od"]) == 0
    assert "Core ATen opset of PyTorch 2.13.0+cpu:" in capsys.readouterr().out
