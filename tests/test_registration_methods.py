"""Library.define and Library.impl as _C._RegistrationMethod descriptors
(Note [Registration methods] in csrc/python/RegistrationMethod.cpp): plain
calls are made from C, every other call runs the Python method, and both
register alike."""
from __future__ import annotations

import contextvars
import functools
import inspect
import sys
from typing import Any, Callable, Iterator

import pytest

import opdispatch
from opdispatch import _C
from opdispatch._introspection import table_entries
from opdispatch.library import Library, _registration_site


@pytest.fixture
def python_bodies() -> Iterator[list[str]]:
    """The names of Library.define / .impl whose Python bodies ran (a profile hook)."""
    codes = {Library.define.__wrapped__.__code__: "define", Library.impl.__wrapped__.__code__: "impl"}
    ran: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code in codes:
            ran.append(codes[frame.f_code])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield ran
    finally:
        sys.setprofile(previous)


def line_below() -> int:
    """The line after the caller's."""
    frame = inspect.currentframe()
    assert frame is not None and frame.f_back is not None
    return frame.f_back.f_lineno + 1


def test_the_methods_keep_the_python_functions_signatures_names_and_docstrings():
    for method in (Library.define, Library.impl):
        assert isinstance(method, _C._RegistrationMethod)
        func = method.__wrapped__
        assert inspect.signature(method) == inspect.signature(func)
        assert (method.__name__, method.__qualname__, method.__doc__) == (func.__name__, func.__qualname__, func.__doc__)
    assert list(inspect.signature(Library("od", "IMPL").impl).parameters) == [
        "op_name", "fn", "dispatch_key", "with_keyset", "allow_override"]


def test_plain_calls_run_no_python_body(lib, ns, python_bodies):
    assert lib.define("foo(Tensor x) -> Tensor") == f"{ns}::foo"
    lib.impl("foo", lambda x: x, "CPU")
    lib.impl("foo", lambda x: x * 2, "Meta")
    assert python_bodies == []
    assert table_entries(f"{ns}::foo")["CPU"].rule == "kernel"


def test_every_other_call_runs_the_python_body(lib, ns, python_bodies):
    lib.define("foo(Tensor x) -> Tensor", alias_analysis="")
    lib.define("bar(Tensor x) -> Tensor", tags=opdispatch.Tag.pointwise)
    lib.impl("foo", lambda x: x, dispatch_key="CPU")
    lib.impl(getattr(opdispatch.ops, ns).bar.default, lambda x: x, "CPU")  # an OpOverload
    lib.impl("bar", lambda k, x: x, "Meta", with_keyset=True)
    with _registration_site("somewhere.py", 7):
        lib.define("baz(Tensor x) -> Tensor")
    assert python_bodies == ["define", "define", "impl", "impl", "impl", "define"]
    assert _C._dispatch_find_schema_or_throw(f"{ns}::baz", "").debug() == "registered at somewhere.py:7"


def test_plain_and_keyword_calls_register_alike(lib, ns):
    plain_define = line_below()
    lib.define("foo(Tensor x) -> Tensor")
    keyword_define = line_below()
    lib.define("bar(Tensor x) -> Tensor", alias_analysis="")
    plain_impl = line_below()
    lib.impl("foo", lambda x: x, "CPU")
    keyword_impl = line_below()
    lib.impl("bar", lambda x: x, dispatch_key="CPU")
    assert lib._op_defs == {f"{ns}::foo", f"{ns}::bar"}
    assert lib._op_impls == {f"{ns}/foo/CPU", f"{ns}/bar/CPU"}
    for name, define_line, impl_line in (("foo", plain_define, plain_impl), ("bar", keyword_define, keyword_impl)):
        assert _C._dispatch_find_schema_or_throw(f"{ns}::{name}", "").debug() == f"registered at {__file__}:{define_line}"
        assert table_entries(f"{ns}::{name}")["CPU"].site == f"{__file__}:{impl_line}"
    x = opdispatch.ones(2)
    assert getattr(opdispatch.ops, ns).foo(x).tolist() == [1.0, 1.0]


def test_a_plain_impl_without_a_key_takes_the_librarys_key(ns):
    lib = Library(ns, "FRAGMENT", "Meta")
    try:
        lib.define("foo(Tensor x) -> Tensor")
        lib.impl("foo", lambda x: x)
        lib.define("bar(Tensor x) -> Tensor")
        lib.impl("bar", lambda x: x, "")
        assert lib._op_impls == {f"{ns}/foo/Meta", f"{ns}/bar/Meta"}
        assert table_entries(f"{ns}::foo")["Meta"].rule == "kernel"
        assert table_entries(f"{ns}::bar")["Meta"].rule == "kernel"
    finally:
        lib._destroy()


def test_the_bound_unbound_and_partial_forms_are_plain_calls(lib, ns, python_bodies):
    Library.define(lib, "foo(Tensor x) -> Tensor")
    define = lib.define
    define("bar(Tensor x) -> Tensor")
    functools.partial(lib.impl, "foo")(lambda x: x, "CPU")
    Library.impl(lib, "bar", lambda x: x, "CPU")
    assert python_bodies == []
    assert lib._op_impls == {f"{ns}/foo/CPU", f"{ns}/bar/CPU"}


def test_a_subclass_reaches_the_methods_through_super(ns):
    class Logged(Library):
        def define(self, schema: str, *args: Any, **kwargs: Any) -> str:
            self.log.append(schema)
            return super().define(schema, *args, **kwargs)

    lib = Logged(ns, "FRAGMENT")
    lib.log = []
    try:
        assert lib.define("foo(Tensor x) -> Tensor") == f"{ns}::foo"
        assert lib.log == ["foo(Tensor x) -> Tensor"]
        assert f"{ns}::foo" in lib._op_defs
    finally:
        lib._destroy()


def test_errors_of_plain_calls_leave_the_library_as_it_was(lib, ns):
    with pytest.raises(ValueError, match="foo"):
        lib.define("foo(Tensor x -> Tensor")
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="NotAKey"):
        lib.impl("foo", lambda x: x, "NotAKey")
    assert lib._op_defs == {f"{ns}::foo"} and lib._op_impls == set()
    assert table_entries(f"{ns}::foo")["CPU"].rule != "kernel"


def test_a_destroyed_library_or_a_non_callable_kernel_raise_as_the_python_methods_do(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="callable"):
        lib.impl("foo", 3, "CPU")
    lib._destroy()
    with pytest.raises(RuntimeError, match="was destroyed"):
        lib.define("bar(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="was destroyed"):
        lib.impl("foo", lambda x: x, "CPU")


@pytest.mark.parametrize(
    "args, error",
    [
        ((3, "define", contextvars.ContextVar("v", default=None)), TypeError),
        ((print, "fallback", contextvars.ContextVar("v", default=None)), ValueError),
        ((print, "define", None), TypeError),
        ((print,), TypeError),
    ],
)
def test_the_descriptor_checks_what_it_is_made_of(args: tuple[Any, ...], error: type[Exception]):
    with pytest.raises(error):
        _C._RegistrationMethod(*args)


def test_the_descriptor_on_another_class_runs_its_function_for_other_instances():
    calls: list[tuple[Any, ...]] = []

    def record(self: Any, *args: Any) -> str:
        calls.append(args)
        return "ran"

    method: Callable[..., str] = _C._RegistrationMethod(record, "define", contextvars.ContextVar("v", default=None))

    class Other:
        m = None
        define = method

    assert Other().define("foo(Tensor x) -> Tensor") == "ran"  # m None: not a plain call
    assert calls == [("foo(Tensor x) -> Tensor",)]
