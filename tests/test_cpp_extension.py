"""The example C++ extension (examples/extension), built both ways — CMake
against the installed package, and opdispatch.cpp_extension.load — and
called from Python; plus load()'s cache and error reporting.

Both builds are loaded into this process, so the cpp_extension build uses
another operator namespace (-DOPDISPATCH_EXAMPLE_NS=myext_jit): a namespace
can have one DEF library per process.
"""
from __future__ import annotations

import ctypes
import dataclasses
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

import opdispatch
import opdispatch.cpp_extension as cpp_extension
from opdispatch import _C
from opdispatch.utils._python_dispatch import TorchDispatchMode

from _extension_build import EXAMPLE, cmake_build


@dataclasses.dataclass
class Built:
    """One build of the example, loaded: its operator namespace and library path."""

    ns: str
    path: Path

    def op(self, name: str, overload: str = "") -> _C._DispatchOperator:
        return _C._DispatchOperator(f"{self.ns}::{name}", overload)


@pytest.fixture(scope="module", params=["cmake", "cpp_extension"])
def ext(request, tmp_path_factory) -> Built:
    if request.param == "cmake":
        path = cmake_build()
        opdispatch.ops.load_library(path)  # loading the same file again is a no-op
        return Built("myext", path)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("extensions")))
        loaded = cpp_extension.load(
            "myext_jit", sorted(EXAMPLE.glob("*.cpp")), extra_cflags=["-DOPDISPATCH_EXAMPLE_NS=myext_jit"]
        )
    assert not loaded.cached and loaded.name == "myext_jit" and loaded.path.is_file()
    return Built("myext_jit", loaded.path)


def t(a: np.ndarray) -> opdispatch.Tensor:
    return opdispatch.from_numpy(a)


def rand(shape, dtype, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- fma -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_matches_numpy(ext, dtype):
    a, b, c = rand((3, 4), dtype, 1), rand((3, 4), dtype, 2), rand((3, 4), dtype, 3)
    out = ext.op("fma")(t(a), t(b), t(c))
    assert isinstance(out, opdispatch.Tensor)
    assert out.shape == (3, 4) and out.dtype == opdispatch.from_numpy(a).dtype
    np.testing.assert_allclose(out.numpy(), a * b + c, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("single_shape", [(), (1,), (1, 1)])
@pytest.mark.parametrize("position", [0, 1, 2])
def test_fma_broadcasts_a_single_element_operand(ext, dtype, single_shape, position):
    operands = [rand((2, 3), dtype, i) for i in range(3)]
    operands[position] = np.full(single_shape, 1.5, dtype)
    out = ext.op("fma")(*map(t, operands))
    expected = operands[0] * operands[1] + operands[2]
    assert out.shape == expected.shape == (2, 3)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_fma_all_single_elements_gives_numpys_shape(ext):
    a, b, c = np.full((), 2.0), np.full((1,), 3.0), np.full((1, 1), 1.0)
    out = ext.op("fma")(t(a), t(b), t(c))
    assert out.shape == (1, 1)
    np.testing.assert_array_equal(out.numpy(), a * b + c)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_reads_non_contiguous_inputs(ext, dtype):
    base = rand((4, 6), dtype, 7)
    a = base.T  # transposed: strides (1, 6)
    b = rand((6, 8), dtype, 8)[:, ::2]  # every other column
    c = rand((12, 4), dtype, 9)[::2]  # every other row
    ta, tb, tc = t(a), t(b), t(c)
    assert not ta.is_contiguous() and not tb.is_contiguous() and not tc.is_contiguous()
    out = ext.op("fma")(ta, tb, tc)
    assert out.is_contiguous()
    np.testing.assert_allclose(out.numpy(), a * b + c, rtol=1e-6)


def test_fma_errors_name_the_operator_and_the_problem(ext):
    fma = ext.op("fma")
    x23, x32 = np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32)
    with pytest.raises(ValueError, match=rf"{ext.ns}::fma: shape mismatch: a \[2, 3\], b \[3, 2\], c \[2, 3\]"):
        fma(t(x23), t(x32), t(x23))
    with pytest.raises(TypeError, match=rf"{ext.ns}::fma: a, b and c must have the same dtype, got float32, float64"):
        fma(t(x23), t(x23.astype(np.float64)), t(x23))
    with pytest.raises(TypeError, match=rf"{ext.ns}::fma: unsupported dtype int64 \(supported: float32, float64\)"):
        ints = np.zeros((2, 3), np.int64)
        fma(t(ints), t(ints), t(ints))
    with pytest.raises(ValueError, match=r"single-element operand c of shape \[1, 1, 1\] has more dimensions"):
        fma(t(x23), t(x23), t(np.zeros((1, 1, 1), np.float32)))
    with pytest.raises(RuntimeError, match=r"must be on the same device, got cpu, meta and cpu"):
        fma(t(x23), opdispatch.empty((2, 3), device="meta"), t(x23))


# --- relu, relu_, rowsum ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_and_inplace_relu(ext, dtype):
    x = rand((3, 5), dtype, 4)
    out = ext.op("relu")(t(x))
    np.testing.assert_array_equal(out.numpy(), np.maximum(x, 0))
    assert (x < 0).any()  # relu left its input alone

    y = x.T.copy().T  # non-contiguous
    ty = t(y)
    result = ext.op("relu_")(ty)
    assert result is ty  # the same tensor, as Tensor(a!) -> Tensor(a!) says
    np.testing.assert_array_equal(y, np.maximum(x, 0))
    with pytest.raises(TypeError, match=rf"{ext.ns}::relu_: unsupported dtype int32"):
        ext.op("relu_")(t(np.zeros(3, np.int32)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rowsum(ext, dtype):
    x = rand((4, 7), dtype, 5)
    out = ext.op("rowsum")(t(x))
    assert out.shape == (4,)
    np.testing.assert_allclose(out.numpy(), x.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(ext.op("rowsum")(t(x.T)).numpy(), x.T.sum(axis=1), rtol=1e-5)
    np.testing.assert_array_equal(ext.op("rowsum")(t(np.zeros((2, 0), dtype))).numpy(), np.zeros(2, dtype))
    with pytest.raises(ValueError, match=rf"{ext.ns}::rowsum: expected a 2-D tensor \(N, M\), got shape \[7\]"):
        ext.op("rowsum")(t(x[0]))


# --- normalize_rows: the ATen-style API ------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normalize_rows(ext, dtype):
    x = np.abs(rand((3, 5), dtype, 7)) + 0.1
    out = ext.op("normalize_rows")(t(x))
    assert out.dtype == t(x).dtype and out.shape == (3, 5)  # x.options(): x's dtype and device
    np.testing.assert_allclose(out.numpy(), x / x.sum(axis=1, keepdims=True), rtol=1e-6)


def test_normalize_rows_calls_rowsum_and_the_builtin_operators_through_the_dispatcher(ext):
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    # Requiring grad runs the CompositeImplicitAutograd kernel above the Python key, so the mode sees its calls.
    x = opdispatch.ones(2, 3, requires_grad=True)
    with Record():
        ext.op("normalize_rows")(x)
    for name in (f"{ext.ns}.rowsum.default", "od._to_copy.default", "od.unsqueeze.default", "od.empty.memory_format",
                 "od.div.Tensor", "od.copy_.default"):
        assert name in seen, (name, seen)


def test_normalize_rows_checks_and_warnings(ext):
    with pytest.raises(RuntimeError, match=r"Expected 2-dimensional tensor, but got 1-dimensional tensor for argument "
                                           r"#1 'x' \(while checking arguments for normalize_rows\)"):
        ext.op("normalize_rows")(t(np.ones(3, np.float32)))
    with pytest.raises(RuntimeError, match=r"Expected tensor for argument #1 'x' to have one of the following scalar "
                                           r"types: Float, Double; but got opdispatch.IntTensor instead"):  # PyTorch: torch.IntTensor
        ext.op("normalize_rows")(t(np.ones((2, 2), np.int32)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = ext.op("normalize_rows")(t(np.array([[1.0, -1.0], [1.0, 3.0]], np.float32)))
    assert [str(w.message).split(" (Triggered")[0] for w in caught] == [
        "normalize_rows: 1 of 2 rows sum to zero; they become inf or nan"]
    np.testing.assert_allclose(out.numpy()[1], [0.25, 0.75])


# --- meta kernels -------------------------------------------------------------------------------


def test_meta_kernels_give_shapes_without_data(ext):
    def meta(*shape, dtype=opdispatch.float32):
        return opdispatch.empty(shape, dtype=dtype, device="meta")

    out = ext.op("fma")(meta(5, 3, dtype=opdispatch.float64), meta(dtype=opdispatch.float64),
                        meta(5, 3, dtype=opdispatch.float64))
    assert out.is_meta and out.shape == (5, 3) and out.dtype == opdispatch.float64
    assert str(out.device) == "meta"
    assert ext.op("relu")(meta(2, 4)).shape == (2, 4)
    x = meta(6, 2)
    assert ext.op("relu_")(x) is x
    r = ext.op("rowsum")(meta(6, 2))
    assert r.is_meta and r.shape == (6,)
    # The same checks as on cpu.
    with pytest.raises(ValueError, match=rf"{ext.ns}::fma: shape mismatch"):
        ext.op("fma")(meta(2, 3), meta(3, 2), meta(2, 3))
    with pytest.raises(ValueError, match="expected a 2-D tensor"):
        ext.op("rowsum")(meta(3))


# --- the redispatching ADInplaceOrView kernel -------------------------------------------------------


def test_relu_inplace_redispatches_and_the_dispatcher_bumps_the_version(ext):
    name = f"{ext.ns}::relu_"
    assert _C._dispatch_has_kernel_for_dispatch_key(name, "ADInplaceOrView")
    relu_ = ext.op("relu_")

    # Plain tensors skip ADInplaceOrView (docs/architecture.rst, "Dispatch keys");
    # the dispatcher bumps the version of the mutated argument either way.
    a = np.array([-1.0, 2.0, -3.0])
    plain = t(a)
    relu_(plain)
    assert plain._version == 1 and a.tolist() == [0.0, 2.0, 0.0]

    # A tensor that requires grad: the autograd fallback redispatches to
    # ADInplaceOrView, which redispatches to CPU; one bump per call.
    b = np.array([-1.0, 2.0, -3.0])
    tracked = t(b)
    tracked.requires_grad = True
    assert relu_(tracked) is tracked
    assert tracked._version == 1 and b.tolist() == [0.0, 2.0, 0.0]
    relu_(tracked)
    assert tracked._version == 2

    # Or with the key included for the block.
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(_C.DispatchKey.ADInplaceOrView)):
        relu_(plain)
    assert plain._version == 2


# --- calling operators by name from C++ -------------------------------------------------------------


class KernelError(Exception):
    pass


@pytest.fixture(scope="module")
def pyops():
    """Namespace pyops_ext: operators with Python CPU kernels; records the threads they ran on."""
    threads: list[int] = []

    def scale2(x):
        threads.append(threading.get_ident())
        return opdispatch.from_numpy(x.numpy() * 2)

    def fail(x):
        raise KernelError("raised in a Python kernel")

    lib = _C._dispatch_library("DEF", "pyops_ext", "")
    lib.define("scale2(Tensor x) -> Tensor")
    lib.define("fail(Tensor x) -> Tensor")
    lib.impl("scale2", "CPU", scale2)
    lib.impl("fail", "CPU", fail)
    yield threads
    lib.reset()


def test_call_op_calls_a_python_kernel_through_the_dispatcher(ext, pyops):
    x = rand((2, 3), np.float64, 6)
    pyops.clear()
    out = ext.op("call_op")(t(x), "pyops_ext::scale2")
    np.testing.assert_array_equal(out.numpy(), x * 2)
    assert pyops == [threading.get_ident()]
    # C++ kernels by name too.
    np.testing.assert_array_equal(ext.op("call_op")(t(x), f"{ext.ns}::relu").numpy(), np.maximum(x, 0))
    with pytest.raises(KernelError, match="raised in a Python kernel"):
        ext.op("call_op")(t(x), "pyops_ext::fail")


def test_call_op_errors(ext, pyops):
    x = t(np.zeros(2))
    with pytest.raises(RuntimeError, match="Could not find schema for pyops_ext::nope"):
        ext.op("call_op")(x, "pyops_ext::nope")
    with pytest.raises(TypeError, match=rf"{ext.ns}::call_op: operator {ext.ns}::fma must take one Tensor"):
        ext.op("call_op")(x, f"{ext.ns}::fma")


def test_call_op_in_thread_runs_the_python_kernel_on_another_thread(ext, pyops):
    x = rand((3,), np.float32, 3)
    pyops.clear()
    out = ext.op("call_op_in_thread")(t(x), "pyops_ext::scale2")
    np.testing.assert_array_equal(out.numpy(), x * 2)
    assert len(pyops) == 1 and pyops[0] != threading.get_ident()
    # A Python exception raised on the worker thread reaches the caller unchanged.
    with pytest.raises(KernelError, match="raised in a Python kernel"):
        ext.op("call_op_in_thread")(t(x), "pyops_ext::fail")


def test_call_op_in_thread_from_several_python_threads(ext, pyops):
    results, errors = {}, []

    def work(i):
        try:
            x = np.full((4,), float(i))
            results[i] = ext.op("call_op_in_thread")(t(x), "pyops_ext::scale2").numpy()
        except BaseException as e:  # reported below
            errors.append(e)

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert not errors and sorted(results) == [0, 1, 2, 3]
    for i, r in results.items():
        np.testing.assert_array_equal(r, np.full((4,), 2.0 * i))


def test_missing_kernel_errors_race_registrations_without_crashing(ext):
    """Issue 9 item 1: a call that finds no kernel builds its error message
    from the operator's registrations. C++ threads (call_op_in_thread, which
    calls without the GIL) call an operator with no kernel for their key while
    this thread registers and removes kernels at other keys of the same
    operator, for a few seconds: every call raises the missing-kernel error,
    and nothing crashes (before, the message was read without the
    registration lock: a segfault within seconds)."""
    from opdispatch.library import Library

    lib = Library("race_ext", "DEF")
    lib.define("nok(Tensor x) -> Tensor")
    deadline = time.monotonic() + 3.0
    outcomes: list[str] = []

    def call() -> None:
        x = t(np.zeros(2))
        while time.monotonic() < deadline:
            try:
                ext.op("call_op_in_thread")(x, "race_ext::nok")
                outcomes.append("returned")
            except NotImplementedError as e:
                outcomes.append("missing" if "race_ext::nok" in str(e) and "'CPU'" in str(e) else str(e))
            except BaseException as e:  # reported below
                outcomes.append(repr(e))

    callers = [threading.Thread(target=call, daemon=True) for _ in range(2)]
    for c in callers:
        c.start()
    registrations = 0
    while time.monotonic() < deadline:
        for key in ("Meta", "XLA", "PrivateUse1", "AutogradXLA"):
            fragment = Library("race_ext", "FRAGMENT")
            fragment.impl("nok", lambda x: x, key)
            fragment._destroy()
            registrations += 1
    for c in callers:
        c.join(timeout=60)
    lib._destroy()
    assert registrations > 0 and outcomes and set(outcomes) == {"missing"}, set(outcomes)


def test_kernels_record_where_they_were_registered(ext):
    dump = _C._dispatch_dump(f"{ext.ns}::fma")
    assert f"schema: {ext.ns}::fma(Tensor a, Tensor b, Tensor c) -> Tensor" in dump
    assert "debug: registered at " + str(EXAMPLE / "ops.cpp") in dump
    assert "CPU: registered at " + str(EXAMPLE / "cpu_kernels.cpp") in dump
    assert "Meta: registered at " + str(EXAMPLE / "meta_kernels.cpp") in dump
    assert "CompositeImplicitAutograd[alias]: registered at " + str(EXAMPLE / "call_op.cpp") in _C._dispatch_dump(
        f"{ext.ns}::call_op"
    )


# --- cpp_extension.load: cache and errors (small sources, no operators) --------------------------------

COUNTING_CXX = """#!/bin/sh
echo run >> "{counter}"
exec c++ "$@"
"""


@pytest.fixture
def counting_compiler(tmp_path, monkeypatch):
    """Sets CXX to a wrapper of c++ that counts its runs; returns a function giving the count."""
    counter = tmp_path / "compiler-runs"
    script = tmp_path / "counting-c++"
    script.write_text(COUNTING_CXX.format(counter=counter))
    script.chmod(0o755)
    monkeypatch.setenv("CXX", str(script))
    monkeypatch.setenv("OPDISPATCH_EXTENSIONS_DIR", str(tmp_path / "cache"))
    return lambda: len(counter.read_text().splitlines()) if counter.exists() else 0


def answer(path: Path) -> int:
    return ctypes.CDLL(str(path)).answer()


def test_load_caches_and_rebuilds_when_a_source_header_or_flag_changes(tmp_path, counting_compiler):
    src, header = tmp_path / "answer.cpp", tmp_path / "value.h"
    header.write_text("#define VALUE 1\n")
    src.write_text('#include "value.h"\nextern "C" int answer() { return VALUE; }\n')

    first = cpp_extension.load("answer", [src])
    assert not first.cached and answer(first.path) == 1
    assert first.path.parent == tmp_path / "cache" / "answer"
    runs, mtime = counting_compiler(), first.path.stat().st_mtime_ns
    assert runs == 2  # one compile, one link

    again = cpp_extension.load("answer", src)
    assert again.cached and again.path == first.path
    assert counting_compiler() == runs and first.path.stat().st_mtime_ns == mtime  # no compiler run

    src.write_text('#include "value.h"\nextern "C" int answer() { return VALUE + 1; }\n')
    changed = cpp_extension.load("answer", [src])
    assert not changed.cached and changed.path != first.path and answer(changed.path) == 2

    header.write_text("#define VALUE 5\n")  # an included header is tracked too
    changed_header = cpp_extension.load("answer", [src])
    assert not changed_header.cached and answer(changed_header.path) == 6

    flagged = cpp_extension.load("answer", [src], extra_cflags=["-DUNUSED_FLAG=1"])
    assert not flagged.cached and flagged.path != changed_header.path

    runs = counting_compiler()
    back = cpp_extension.load("answer", [src])  # the earlier build for these inputs is still there
    assert back.cached and back.path == changed_header.path and counting_compiler() == runs


def test_load_cache_key_ignores_the_order_of_the_sources(tmp_path, counting_compiler):
    a, b = tmp_path / "a.cpp", tmp_path / "b.cpp"
    a.write_text('int b_value();\nextern "C" int answer() { return b_value() + 1; }\n')
    b.write_text("int b_value() { return 41; }\n")
    first = cpp_extension.load("two_files", [b, a])
    assert not first.cached and answer(first.path) == 42
    runs = counting_compiler()
    assert runs == 3  # two compiles, one link
    again = cpp_extension.load("two_files", [a, b])  # the same files in the other order: the same binary
    assert again.cached and again.path == first.path and counting_compiler() == runs
    with pytest.raises(ValueError, match="given twice"):
        cpp_extension.load("two_files", [a, b, tmp_path / "." / "a.cpp"])


def test_load_verbose_prints_the_commands(tmp_path, counting_compiler, capsys):
    src = tmp_path / "v.cpp"
    src.write_text('extern "C" int answer() { return 3; }\n')
    cpp_extension.load("verbose_ext", [src], verbose=True)
    out = capsys.readouterr().out
    assert "-std=c++17" in out and "-O2" in out and "-fPIC" in out and str(src) in out
    assert "-shared" in out and "-lopdispatch" in out and "-Wl,-rpath," in out
    cpp_extension.load("verbose_ext", [src], verbose=True)
    assert "using cached" in capsys.readouterr().out


def test_load_compile_error_shows_the_command_and_compiler_output(tmp_path, counting_compiler):
    src = tmp_path / "broken.cpp"
    src.write_text("int f() { return undeclared_identifier_xyz; }\n")
    with pytest.raises(cpp_extension.CompileError) as info:
        cpp_extension.load("broken", [src])
    assert isinstance(info.value, RuntimeError)
    msg = str(info.value)
    assert "building the opdispatch extension 'broken' failed" in msg
    assert "command: " in msg and str(src) in msg and "-std=c++17" in msg
    assert "undeclared_identifier_xyz" in msg and "error" in msg  # the compiler's own diagnostics
    assert "undeclared_identifier_xyz" in info.value.output
    assert not list((tmp_path / "cache" / "broken").glob("*.so"))  # nothing cached


def test_load_link_error_is_a_compile_error(tmp_path, counting_compiler):
    src = tmp_path / "unresolved.cpp"
    src.write_text("int missing_function_abc();\nint main() { return missing_function_abc(); }\n")
    with pytest.raises(cpp_extension.CompileError, match="missing_function_abc"):
        # -Wl,-z,defs makes an unresolved symbol a link error in a shared library
        cpp_extension.load("unresolved", [src], extra_ldflags=["-Wl,-z,defs"])


def test_load_argument_errors(tmp_path, counting_compiler, monkeypatch):
    with pytest.raises(ValueError, match="C identifier"):
        cpp_extension.load("bad name", [tmp_path / "x.cpp"])
    with pytest.raises(ValueError, match="no sources"):
        cpp_extension.load("empty", [])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        cpp_extension.load("missing", [tmp_path / "missing.cpp"])
    src = tmp_path / "ok.cpp"
    src.write_text("int x;\n")
    monkeypatch.setenv("CXX", "no-such-compiler-xyz")
    with pytest.raises(FileNotFoundError, match="no-such-compiler-xyz"):
        cpp_extension.load("nocompiler", [src])


def test_two_processes_loading_the_same_extension_both_succeed(tmp_path):
    src = tmp_path / "shared.cpp"
    src.write_text('extern "C" int answer() { return 42; }\n')
    script = textwrap.dedent(f"""
        import opdispatch.cpp_extension as c
        e = c.load("shared_ext", [{str(src)!r}])
        print(e.path)
    """)
    env = {**os.environ, "OPDISPATCH_EXTENSIONS_DIR": str(tmp_path / "cache")}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    paths = {out.strip() for out, _ in outs}
    assert len(paths) == 1 and answer(Path(paths.pop())) == 42
    leftovers = [p.name for p in (tmp_path / "cache" / "shared_ext").iterdir() if p.name.startswith(".")]
    assert leftovers == []  # the temporary build directories are gone


def test_load_deletes_the_builds_a_new_build_replaces_and_keeps_other_variants(tmp_path, counting_compiler, capfd):
    src, header = tmp_path / "answer.cpp", tmp_path / "value.h"
    header.write_text("#define VALUE 1\n")
    src.write_text('#include "value.h"\nextern "C" int answer() { return VALUE; }\n')
    first = cpp_extension.load("replaced", [src])
    assert "replaced: compiling 1 source file" in capfd.readouterr().err  # said before the compiler runs
    flagged = cpp_extension.load("replaced", [src], extra_cflags=["-DUNUSED_FLAG=1"])  # another variant
    src.write_text('#include "value.h"\nextern "C" int answer() { return VALUE + 1; }\n')
    changed = cpp_extension.load("replaced", [src])
    assert not first.path.exists() and changed.path.exists() and flagged.path.exists()
    header.write_text("#define VALUE 5\n")
    changed_header = cpp_extension.load("replaced", [src])
    assert not changed.path.exists() and answer(changed_header.path) == 6
    libraries = sorted(p.name for p in (tmp_path / "cache" / "replaced").glob("*.so"))
    assert libraries == sorted([changed_header.path.name, flagged.path.name])
    assert len(list((tmp_path / "cache" / "replaced").glob("*.deps.json"))) == 2
    capfd.readouterr()
    assert cpp_extension.load("replaced", [src]).cached and capfd.readouterr().err == ""  # a hit says nothing


def test_a_reinstall_of_the_same_build_keeps_the_cache():
    library = next(Path(cpp_extension.library_paths()[0]).glob("libopdispatch*"))
    before = cpp_extension._installation_fingerprint.__wrapped__()
    stat = library.stat()
    os.utime(library, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**10))  # as a reinstall rewrites the file
    try:
        assert cpp_extension._installation_fingerprint.__wrapped__() == before
    finally:
        os.utime(library, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_cache_command_lists_and_clears(tmp_path, counting_compiler):
    src = tmp_path / "c.cpp"
    src.write_text('extern "C" int answer() { return 7; }\n')
    built = cpp_extension.load("listed", [src])
    env = {**os.environ}
    listing = subprocess.run([sys.executable, "-m", "opdispatch", "cache"], capture_output=True, text=True, env=env)
    assert listing.returncode == 0 and "listed  " in listing.stdout and built.path.name in listing.stdout
    missing = subprocess.run([sys.executable, "-m", "opdispatch", "cache", "clear", "nope"], capture_output=True,
                             text=True, env=env)
    assert missing.returncode == 2 and "no extension 'nope' in the cache" in missing.stderr
    cleared = subprocess.run([sys.executable, "-m", "opdispatch", "cache", "clear", "listed"], capture_output=True,
                             text=True, env=env)
    assert cleared.returncode == 0 and not built.path.exists()
    assert [e.name for e in cpp_extension.cached_extensions()] == []
