"""OPDISPATCH_WARN / OPDISPATCH_WARN_ONCE (issue 30) seen from Python through an
extension built with cpp_extension.load: a C++ warning surfaces as a Python
UserWarning "<msg> (Triggered internally at <file>:<line>.)" when the call
returns, also when the kernel warned with the GIL released; the "error" filter
turns it into an exception without crashing; WARN_ONCE warns once per call
site. PyTorch 2.13 does the same for calls through its HANDLE_TH_ERRORS
bindings (torch.* functions, e.g. torch.cross without dim; its torch.ops path
prints C++ warnings to stderr instead)."""
from __future__ import annotations

import sysconfig
import warnings

import pytest

import opdispatch
from opdispatch import cpp_extension

SOURCE = r"""
#include <Python.h>

#include <opdispatch/library.h>

using namespace opdispatch;

Tensor warn_twice(const Tensor& x) {
  OPDISPATCH_WARN("x has ", x.dim(), " dims");
  OPDISPATCH_WARN_DEPRECATION("second");
  return x.clone();
}

Tensor warn_once(const Tensor& x) {
  OPDISPATCH_WARN_ONCE("once ", 1);
  return x.clone();
}

// Warns while the GIL is released, as long-running kernels run.
Tensor warn_without_gil(const Tensor& x) {
  PyThreadState* state = PyEval_SaveThread();
  OPDISPATCH_WARN("without the GIL");
  PyEval_RestoreThread(state);
  return x.clone();
}

Tensor warn_then_throw(const Tensor& x) {
  OPDISPATCH_WARN("before the error");
  OPDISPATCH_CHECK(false, "the kernel's error");
  return x;
}

OPDISPATCH_LIBRARY(cwarn, m) {
  m.def("warn_twice(Tensor x) -> Tensor");
  m.def("warn_once(Tensor x) -> Tensor");
  m.def("warn_without_gil(Tensor x) -> Tensor");
  m.def("warn_then_throw(Tensor x) -> Tensor");
}

OPDISPATCH_LIBRARY_IMPL(cwarn, CPU, m) {
  m.impl("warn_twice", warn_twice);
  m.impl("warn_once", warn_once);
  m.impl("warn_without_gil", warn_without_gil);
  m.impl("warn_then_throw", warn_then_throw);
}
"""


@pytest.fixture(scope="module")
def source_path(tmp_path_factory):
    source = tmp_path_factory.mktemp("cwarn") / "cwarn.cpp"
    source.write_text(SOURCE)
    # Python.h for the kernel that releases the GIL.
    cpp_extension.load("cwarn", [source], extra_cflags=[f"-I{sysconfig.get_paths()['include']}"])
    return source


@pytest.fixture(scope="module")
def cwarn(source_path):
    return opdispatch.ops.cwarn


def line_of(text: str) -> int:
    """The 1-based line of SOURCE holding `text`."""
    return next(i for i, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def test_warnings_surface_as_python_warnings_with_the_cpp_location(cwarn, source_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = cwarn.warn_twice(opdispatch.ones(2, 3))
    assert out.shape == (2, 3)
    assert [w.category for w in caught] == [UserWarning, DeprecationWarning]
    assert str(caught[0].message) == f"x has 2 dims (Triggered internally at {source_path}:{line_of('x has ')}.)"
    assert str(caught[1].message).startswith("second (Triggered internally at ")
    assert caught[0].filename == __file__  # attributed to the Python line that called the operator's chain


def test_warnings_issued_without_the_gil_are_buffered(cwarn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cwarn.warn_without_gil(opdispatch.ones(1))
    assert [str(w.message).split(" (Triggered")[0] for w in caught] == ["without the GIL"]


def test_error_filter_raises_the_warning_as_an_exception(cwarn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match=r"^x has 1 dims \(Triggered internally at "):
            cwarn.warn_twice(opdispatch.ones(4))
        with pytest.raises(UserWarning, match="without the GIL"):
            cwarn.warn_without_gil(opdispatch.ones(1))
        # The kernel's own error wins; the warning's exception is printed.
        with pytest.raises(RuntimeError, match="the kernel's error"):
            cwarn.warn_then_throw(opdispatch.ones(1))
    with warnings.catch_warnings(record=True):  # the process and the operator still work
        assert cwarn.warn_twice(opdispatch.ones(1)).shape == (1,)


def test_warning_before_an_error_is_still_issued(cwarn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="the kernel's error"):
            cwarn.warn_then_throw(opdispatch.ones(1))
    assert [str(w.message).split(" (Triggered")[0] for w in caught] == ["before the error"]


def test_warn_once_warns_once_per_process(cwarn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            cwarn.warn_once(opdispatch.ones(1))
    assert [str(w.message).split(" (Triggered")[0] for w in caught] == ["once 1"]
