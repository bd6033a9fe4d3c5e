"""`python -m opdispatch ops|table`, run in a subprocess with --load of the
example extension (built with CMake) and --import of a module that registers
Python kernels."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import opdispatch

from _extension_build import EXAMPLE, cmake_build

PY_MODULE = textwrap.dedent("""\
    # Registers Python kernels for the command-line tests.
    from opdispatch import _C

    _defs = _C._dispatch_library("DEF", "clipyops", "", __file__, 4)
    _defs.define("twice(Tensor x) -> Tensor")
    _defs.impl("twice", "CPU", lambda x: x)
    _impls = _C._dispatch_library("IMPL", "myext", "PrivateUse1")
    _impls.impl("fma", "", lambda a, b, c: a)
""")
TWICE_LINE = 6  # the lines of the impl calls above
FMA_LINE = 8


@pytest.fixture(scope="module")
def lib() -> Path:
    return cmake_build()


@pytest.fixture(scope="module")
def pymodule(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli_modules")
    (d / "cli_pyops.py").write_text(PY_MODULE)
    return d / "cli_pyops.py"


def run(*args: str, pymodule: Path | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if pymodule is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pymodule.parent), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "opdispatch", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_ops_lists_sorted_schemas_of_a_namespace(lib):
    r = run("ops", "myext", "--load", str(lib))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == sorted(lines)
    assert "myext::fma(Tensor a, Tensor b, Tensor c) -> Tensor" in lines
    assert "myext::relu_(Tensor(a!) x) -> Tensor(a!)" in lines
    assert "myext::call_op(Tensor x, str name) -> Tensor" in lines
    assert all(line.startswith("myext::") for line in lines)


def test_ops_lists_every_namespace_and_preloads_in_order(lib, pymodule):
    r = run("ops", "--load", str(lib), "--import", "cli_pyops", pymodule=pymodule)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == sorted(lines)
    assert "clipyops::twice(Tensor x) -> Tensor" in lines and "myext::rowsum(Tensor x) -> Tensor" in lines


def test_table_shows_cpp_and_python_origins(lib, pymodule):
    r = run("table", "myext::fma", "--load", str(lib), "--import", "cli_pyops", pymodule=pymodule)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("myext::fma(Tensor a, Tensor b, Tensor c) -> Tensor\n")
    assert f"defined: C++ {EXAMPLE / 'ops.cpp'}:" in out
    kernels, _, table = out.partition("Computed dispatch table")
    cpu = f"CPU: C++ {EXAMPLE / 'cpu_kernels.cpp'}:"
    meta = f"Meta: C++ {EXAMPLE / 'meta_kernels.cpp'}:"
    python = f"PrivateUse1: Python {pymodule}:{FMA_LINE}"
    for section in (kernels, table):
        assert cpu in section and meta in section and python in section, section
    assert "[ boxed unboxed ]" in kernels  # the C++ kernels
    assert "CPU: C++" in table and "[kernel]" in table
    # the autograd fallback opdispatch's Python layer installs (Note [Default fallbacks])
    autograd = next(line for line in table.splitlines() if "AutogradCPU" in line)
    assert ": Python " in autograd and "_library/autograd.py" in autograd and "[backend fallback]" in autograd


def test_table_of_a_python_operator_with_overload_default(pymodule):
    r = run("table", "clipyops::twice.default", "--import", "cli_pyops", pymodule=pymodule)
    assert r.returncode == 0, r.stderr
    assert f"defined: Python {pymodule}:4" in r.stdout  # the file and line given to _dispatch_library
    assert f"CPU: Python {pymodule}:{TWICE_LINE}" in r.stdout


def test_unknown_operator_exits_2_and_points_to_ops(lib):
    r = run("table", "myext::fmaa", "--load", str(lib))
    assert r.returncode == 2
    assert "'myext::fmaa' is not registered" in r.stderr
    assert "Did you mean myext::fma" in r.stderr
    assert "python -m opdispatch ops" in r.stderr
    assert r.stdout == ""


def test_usage_errors_exit_2():
    r = run("table", "not an op")
    assert r.returncode == 2 and "not an operator name" in r.stderr
    r = run("ops", "no_such_namespace")
    assert r.returncode == 2 and "no operators in namespace 'no_such_namespace'" in r.stderr
    r = run()
    assert r.returncode == 2 and "usage:" in r.stderr


def test_failed_load_or_import_exits_1(tmp_path):
    r = run("ops", "--load", str(tmp_path / "missing.so"))
    assert r.returncode == 1 and f"--load {tmp_path / 'missing.so'} failed: OSError" in r.stderr
    r = run("ops", "--import", "no_such_module_xyz")
    assert r.returncode == 1 and "--import no_such_module_xyz failed: ModuleNotFoundError" in r.stderr


def test_table_of_an_operator_without_its_overload_lists_the_overloads():
    r = run("table", "od::add")
    assert r.returncode == 2 and r.stdout == ""
    assert "'od::add' has no default overload" in r.stderr
    assert "  od::add.Tensor  od::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in r.stderr
    assert "  od::add.Scalar  " in r.stderr and "od::rand" not in r.stderr


def test_table_of_a_builtin_operator_shows_where_it_is_declared():
    r = run("table", "od::exp")
    assert r.returncode == 0, r.stderr
    assert "frozen" not in r.stdout
    defined = next(line for line in r.stdout.splitlines() if "defined: Python " in line)
    file, line = defined.split("defined: Python ")[1].rsplit(":", 1)
    # The package's own files read opdispatch/..., wherever it is installed (no machine paths).
    assert file.startswith("opdispatch/") and "/work/" not in r.stdout and "/home/" not in r.stdout
    package = Path(opdispatch.__file__).parent
    assert '"exp(' in (package / file.removeprefix("opdispatch/")).read_text().splitlines()[int(line) - 1]
    assert "BackendSelect: fallthrough C++ opdispatch/csrc/opdispatch/DefaultFallbacks.cpp:" in r.stdout


def test_explain_a_cpp_extension_op_with_python_kernels_too(lib, pymodule):
    r = run("explain", "myext::fma", "randn(2, requires_grad=True)", "randn(2)", "c=randn(1)", "--load", str(lib),
            "--import", "cli_pyops", pymodule=pymodule)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("myext::fma(Tensor a, Tensor b, Tensor c) -> Tensor\n")
    assert "AutogradCPU          from a\n" in out and "CPU                  from a, b, c\n" in out
    assert "Hop 1: AutogradCPU" in out and "Hop 2: CPU  (the highest of [CPU])" in out
    assert f"kernel: C++ {EXAMPLE / 'cpu_kernels.cpp'}:" in out
    r = run("explain", "myext::fma", "randn(1)", "randn(1)", "randn(1)", "--include", "PrivateUse1", "--load",
            str(lib), "--import", "cli_pyops", pymodule=pymodule)
    assert r.returncode == 0, r.stderr
    assert "PrivateUse1          from TLS include set" in r.stdout
    assert f"kernel: Python {pymodule}:{FMA_LINE}" in r.stdout


def test_explain_a_call_that_would_fail():
    r = run("explain", "od::mm", "empty(2, 2, device='meta')", "empty(2, 2, device='meta')", "--exclude", "Meta")
    assert r.returncode == 0, r.stderr
    assert "Meta                 from self, mat2  -- excluded by the TLS exclude set" in r.stdout
    assert "Fails: no kernel of od::mm serves Undefined" in r.stdout and "Fix: register a CompositeExplicitAutograd" \
        in r.stdout


def test_explain_usage_errors():
    r = run("explain", "od::mm", "randn(2, 2)", "bad(")
    assert r.returncode == 2 and "argument 'bad(' is not a Python expression" in r.stderr
    r = run("explain", "od::mm", "randn(2, 2)", "'text'")
    assert r.returncode == 2 and "od::mm" in r.stderr and "mat2" in r.stderr  # the call's own TypeError
    r = run("explain", "od::mmm", "randn(2, 2)")
    assert r.returncode == 2 and "Did you mean od::mm" in r.stderr
    r = run("explain", "od::full", "[2]", "float('inf')", "dtype=opdispatch.bool")  # builtins stay builtins
    assert r.returncode == 0 and "Hop 1: BackendSelect" in r.stdout, r.stderr
    r = run("explain", "od::mm", "--exclude", "Autograd")
    assert r.returncode == 2 and "'Autograd' is not a runtime dispatch key" in r.stderr


def test_coverage_text_and_html(lib, tmp_path):
    r = run("coverage", "myext", "--load", str(lib))
    assert r.returncode == 0, r.stderr
    assert any(line.startswith("myext::fma ") for line in r.stdout.splitlines())
    page = tmp_path / "coverage.html"
    r = run("coverage", "myext", "--html", str(page), "--load", str(lib))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {page}: 7 operators x ")
    text = page.read_text()
    assert "<th title=\"myext::fma(Tensor a, Tensor b, Tensor c) -&gt; Tensor\">myext::fma</th>" in text
    assert str(EXAMPLE / "cpu_kernels.cpp") in text
    r = run("coverage", "no_such_namespace")
    assert r.returncode == 2 and "no operators in namespace 'no_such_namespace'" in r.stderr


def test_help_lists_the_commands():
    r = run("--help")
    assert r.returncode == 0
    assert all(c in r.stdout for c in ("ops", "table", "explain", "coverage", "demo"))
    r = run("table", "--help")
    assert r.returncode == 0 and "--load" in r.stdout and "--import" in r.stdout


def test_version_is_the_package_version():
    import opdispatch

    done = run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"opdispatch {opdispatch.__version__}"


@pytest.mark.parametrize("option,value,expected", [
    ("--lr", "abc", "argument --lr: expected a positive number, got 'abc'"),
    ("--lr", "-1", "argument --lr: expected a positive number, got '-1'"),
    ("--lr", "inf", "argument --lr: expected a positive number, got 'inf'"),
    ("--epochs", "x", "argument --epochs: expected a positive integer, got 'x'"),
    ("--batch-size", "0", "argument --batch-size: expected a positive integer, got '0'"),
])
def test_demo_option_errors_say_what_was_expected(option, value, expected):
    done = run("demo", option, value)
    assert done.returncode == 2 and expected in done.stderr
    assert "_positive" not in done.stderr


def test_coverage_html_into_a_missing_folder_is_a_usage_error(tmp_path):
    target = tmp_path / "missing" / "page.html"
    done = run("coverage", "od", "--html", str(target))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"cannot write --html {target}" in done.stderr and "existing, writable folder" in done.stderr
    assert not target.exists()


def test_unknown_operator_suggests_its_namespaces_close_names_first():
    done = run("table", "od::ad")
    # od::add and od::pad are equally close (one letter added); difflib lists ties in reverse name order
    assert done.returncode == 2 and "Did you mean od::pad, od::add," in done.stderr


def test_table_joins_keys_served_alike_into_one_line():
    r = run("table", "od::exp")
    table = r.stdout.partition("Computed dispatch table")[2].splitlines()[1:]
    autograd = [line for line in table if "AutogradCPU" in line]
    assert len(autograd) == 1 and autograd[0].startswith("  AutogradOther, AutogradCPU, AutogradCUDA, ")
    assert autograd[0].endswith("[autograd kernel]")
    keys = [key for line in table for key in line.strip().partition(": ")[0].split(", ")]
    assert len(keys) == len(set(keys)) and {"CPU", "Meta", "AutogradMeta", "PythonDispatcher"} <= set(keys)
