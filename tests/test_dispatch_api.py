"""The opdispatch._C dispatch API (PyTorch: torch/csrc/utils/python_dispatch.cpp):
libraries and their C++ test helpers, Python kernels and fallbacks, registry
inspection, TLS guards, boxed calls, error behaviour and threads.

The commutativity tests follow the idea of PyTorch's test/test_dispatch.py:
every order of a set of registrations gives the same dispatcher state, and
undoing them in any order gives back the state before. Expected tables are
written for opdispatch's flat keys and the backend fallbacks its core
registers (csrc/opdispatch/DefaultFallbacks.cpp: an autograd
fallback for every Autograd* key, fallthroughs for BackendSelect,
Functionalize, ADInplaceOrView, Autocast*, ...)."""
from __future__ import annotations

import gc
import itertools
import re
import subprocess
import sys
import textwrap
import threading
import traceback
import weakref
from collections import namedtuple

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from _helpers import keys

K = _C.DispatchKey
HERE = __file__
_counter = itertools.count()


def cpu(*shape: int) -> opdispatch.Tensor:
    return opdispatch.from_numpy(np.zeros(shape or (2,), dtype=np.float32))


def grad(*shape: int) -> opdispatch.Tensor:
    t = cpu(*shape)
    t.requires_grad = True
    return t


def meta(*shape: int) -> opdispatch.Tensor:
    return _C.empty(shape or (2,), device="meta")


def fresh_ns(prefix: str = "dapi") -> str:
    return f"{prefix}_{next(_counter)}"


@pytest.fixture
def ns():
    """A fresh namespace; every library made through `make_lib` is reset at teardown."""
    return fresh_ns()


@pytest.fixture
def make_lib(ns):
    libs = []

    def make(kind: str = "FRAGMENT", dispatch: str = "", namespace: str | None = None, file: str = "/dev/null",
             line: int = 0):
        lib = _C._dispatch_library(kind, namespace or ns, dispatch, file, line)
        libs.append(lib)
        return lib

    yield make
    for lib in reversed(libs):
        lib.reset()


@pytest.fixture
def resolver():
    """Installs an OpOverload resolver (until opdispatch.ops exists): the op argument of
    Python fallbacks becomes ("op", name, overload)."""
    previous = _C._set_opoverload_resolver(lambda name, overload: ("op", name, overload))
    yield
    _C._set_opoverload_resolver(previous)


@pytest.fixture
def fallthrough():
    """A sentinel that means 'fallthrough' when passed to impl() (library.py's fallthrough_kernel)."""
    sentinel = object()
    previous = _C._set_fallthrough_kernel(sentinel)
    yield sentinel
    _C._set_fallthrough_kernel(previous)


def op(qualname: str, overload: str = "") -> _C._DispatchOperator:
    return _C._DispatchOperator(qualname, overload)


# =====================================================================================
# Commutativity and invertibility of registrations (PyTorch: test/test_dispatch.py)
# =====================================================================================

Result = namedtuple("Result", "state table provenance")

KEYS_TO_CHECK = ("Undefined", "CPU", "CUDA", "XLA", "Meta", "QuantizedCPU",
                 "AutogradOther", "AutogradCPU", "AutogradCUDA", "AutogradXLA")
# The default fallbacks opdispatch installs (Note [Default fallbacks]): the core's, and the Python
# layer's autograd fallback.
_DEFAULT_FALLBACK_SITE = re.compile(r"registered at \S*(DefaultFallbacks\.cpp|_library/autograd\.py):\d+")


def _normalize(text: str, namespace: str) -> str:
    return _DEFAULT_FALLBACK_SITE.sub("registered by opdispatch", text.replace(namespace, "test"))


def extract_table(table: str, wanted=KEYS_TO_CHECK) -> str:
    rows = {line.split(":", 1)[0]: line for line in table.splitlines()}
    return "".join(rows[k] + "\n" for k in wanted if k in rows)


def run_ops(name, ops, namespace, ctor_order, dtor_order, results, expect_raises=False):
    """Registers ops[i] (each in its own FRAGMENT library) in ctor_order, then destroys
    the libraries in dtor_order, checking after every step that the dump and table
    equal those seen for the same set of live registrations on any other path."""
    qualname = f"{namespace}::{name}"
    refs = [None] * len(ops)
    active = set()

    def check(provenance):
        _C._dispatch_check_invariants(qualname)
        state = _normalize(_C._dispatch_dump(qualname), namespace)
        table = _normalize(_C._dispatch_dump_table(qualname), namespace)
        expected = results.setdefault(frozenset(active), Result(state, table, provenance))
        assert state == expected.state, f"expected from {expected.provenance}; actual from {provenance}"
        assert table == expected.table, f"expected from {expected.provenance}; actual from {provenance}"

    results.setdefault(frozenset(), Result("", "", "hardcoded initial state"))
    check("initial state")
    report = frozenset(range(len(ops)))
    for i, ix in enumerate(ctor_order):
        refs[ix] = _C._dispatch_library("FRAGMENT", namespace, "")
        active.add(ix)
        try:
            ops[ix](refs[ix])
            check(f"running ctors {ctor_order[:i + 1]}")
        except RuntimeError as e:
            if not expect_raises:
                raise
            message = str(e).replace(namespace, "test")
            expected = results.setdefault(frozenset(active),
                                          Result(message, "", f"error after running ctors {ctor_order[:i + 1]}"))
            assert message == expected.state, expected.provenance
            report = frozenset(active)
            active.remove(ix)
            # A failed registration leaves the dispatcher as it was before.
            check(f"running ctors {ctor_order[:i]} and then failing to run ctor {ix}")
            break
    if expect_raises:
        assert len(active) < len(ops), f"expected an exception after running ctors {ctor_order}"
    for i, ix in enumerate(dtor_order):
        refs[ix] = None  # destroys the library: its registrations are undone
        active.discard(ix)
        check(f"running ctors {ctor_order}, then dtors {dtor_order[:i + 1]}")
    assert qualname not in _C._dispatch_get_all_op_names()
    assert not _C._dispatch_has_kernel(qualname)
    return results[report]


def commute(name, ops, ctor_order=None, expect_raises=False):
    """Runs every order of registration and of destruction (for five or more ops: every
    registration order destroyed newest- and oldest-first, plus every destruction order
    after one registration order, which keeps the test fast) and returns the Result for
    the full set (or the error, with expect_raises)."""
    namespace = fresh_ns("commute")
    results = {}
    n = len(ops)
    perms = list(itertools.permutations(range(n)))
    ctor_orders = [tuple(ctor_order)] if ctor_order is not None else perms
    last = None
    for c in ctor_orders:
        if n <= 4 or ctor_order is not None:
            dtor_orders = perms
        else:
            dtor_orders = [tuple(reversed(c)), c]
        for d in dtor_orders:
            last = run_ops(name, ops, namespace, c, d, results, expect_raises)
    if n > 4 and ctor_order is None:
        for d in perms:
            run_ops(name, ops, namespace, ctor_orders[0], d, results, expect_raises)
    if expect_raises:
        return last
    return results[frozenset(range(n))]


def test_all_invariants():
    _C._dispatch_check_all_invariants()


def test_def():
    state = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo"),
        lambda m: m.impl_t_t("foo", dispatch="CPU"),
        lambda m: m.impl_t_t("foo", dispatch="Autograd"),
        lambda m: m.impl_t_t("foo", dispatch="AutogradCPU"),
    ]).state
    assert state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""


def test_def_impl_schema_mismatch():
    # The same error whichever of def and impl comes second, and nothing registered.
    state = commute("foo", [
        lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor"),
        lambda m: m.impl_t_t("foo"),
    ], expect_raises=True).state
    assert state == """\
Inferred operator schema for a C++ kernel function doesn't match the expected function schema.
  operator: test::foo
  expected schema: test::foo(Tensor x, Tensor y) -> Tensor
    registered at /dev/null:0
  inferred schema: (Tensor _0) -> Tensor _0
    impl_t_t
  dispatch key: CompositeImplicitAutograd
  reason: The number of arguments is different. 2 vs 1.
Fix the C++ kernel's signature or the schema so that they agree."""


def test_def_with_inference():
    state = commute("foo", [
        lambda m: m.def_name_t_t("foo"),
        lambda m: m.impl_t_t("foo", "CPU"),
        lambda m: m.impl_t_t("foo", "Autograd"),
        lambda m: m.impl_t_t("foo", "AutogradCPU"),
    ]).state
    assert state == """\
name: test::foo
schema: test::foo(Tensor _0) -> Tensor _0
debug: registered at /dev/null:0
alias analysis kind: CONSERVATIVE
CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: default_def_name_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""


def test_def_only():
    result = commute("foo", [lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor")])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x, Tensor y) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
"""
    # No kernels: only the core's backend fallbacks serve it.
    assert extract_table(result.table) == """\
AutogradOther: registered by opdispatch [backend fallback]
AutogradCPU: registered by opdispatch [backend fallback]
AutogradCUDA: registered by opdispatch [backend fallback]
AutogradXLA: registered by opdispatch [backend fallback]
"""
    assert "ADInplaceOrView: fallthrough registered by opdispatch [backend fallback]" in result.table


def test_impl_only():
    state = commute("foo", [
        lambda m: m.impl_t_t("foo"),
        lambda m: m.impl_t_t("foo", "CPU"),
        lambda m: m.impl_t_t("foo", "Autograd"),
        lambda m: m.impl_t_t("foo", "AutogradCPU"),
    ]).state
    assert state == """\
name: test::foo
schema: (none)
CPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""


def test_computed_table():
    result = commute("foo", [
        lambda m: m.def_name_t_t("foo"),
        lambda m: m.impl_t_t("foo", "CPU", debug="fn_cpu"),
        lambda m: m.impl_t_t("foo", "XLA", debug="fn_xla"),
        lambda m: m.impl_t_t("foo", "Autograd", debug="fn_autograd"),
        lambda m: m.impl_t_t("foo", "AutogradCPU", debug="fn_autogradcpu"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor _0) -> Tensor _0
debug: registered at /dev/null:0
alias analysis kind: CONSERVATIVE
CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
XLA: fn_xla :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
AutogradCPU: fn_autogradcpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: fn_autograd :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: default_def_name_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    # AutogradXLA: XLA has a backend kernel, so the math kernel is not used and the
    # Autograd alias kernel is; AutogradCUDA: no CUDA kernel, so the math kernel.
    assert extract_table(result.table) == """\
Undefined: default_def_name_t_t [math kernel]
CPU: fn_cpu [kernel]
CUDA: default_def_name_t_t [math kernel]
XLA: fn_xla [kernel]
Meta: default_def_name_t_t [math kernel]
QuantizedCPU: default_def_name_t_t [math kernel]
AutogradOther: default_def_name_t_t [math kernel]
AutogradCPU: fn_autogradcpu [kernel]
AutogradCUDA: default_def_name_t_t [math kernel]
AutogradXLA: fn_autograd [autograd kernel]
"""


def test_computed_table_with_math():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CompositeImplicitAutograd"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    assert extract_table(result.table) == "".join(f"{k}: impl_t_t [math kernel]\n" for k in KEYS_TO_CHECK)


def test_computed_table_with_cpu_math():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CPU", debug="fn_cpu"),
        lambda m: m.impl_t_t("foo", "CompositeImplicitAutograd", debug="fn_math"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: fn_math :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    # AutogradCPU: CPU has its own kernel, so the math kernel does not serve AutogradCPU;
    # the core's autograd fallback does (it redispatches below autograd, to fn_cpu).
    assert extract_table(result.table) == """\
Undefined: fn_math [math kernel]
CPU: fn_cpu [kernel]
CUDA: fn_math [math kernel]
XLA: fn_math [math kernel]
Meta: fn_math [math kernel]
QuantizedCPU: fn_math [math kernel]
AutogradOther: fn_math [math kernel]
AutogradCPU: registered by opdispatch [backend fallback]
AutogradCUDA: fn_math [math kernel]
AutogradXLA: fn_math [math kernel]
"""


def test_computed_table_with_autograd():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "Autograd"),
    ])
    assert result.state.endswith("Autograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n")
    assert extract_table(result.table) == """\
AutogradOther: impl_t_t [autograd kernel]
AutogradCPU: impl_t_t [autograd kernel]
AutogradCUDA: impl_t_t [autograd kernel]
AutogradXLA: impl_t_t [autograd kernel]
"""


def test_computed_table_with_cpu_autograd_math():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CPU", debug="fn_cpu"),
        lambda m: m.impl_t_t("foo", "Autograd", debug="fn_autograd"),
        lambda m: m.impl_t_t("foo", "CompositeImplicitAutograd", debug="fn_math"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: fn_autograd :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: fn_math :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    assert extract_table(result.table) == """\
Undefined: fn_math [math kernel]
CPU: fn_cpu [kernel]
CUDA: fn_math [math kernel]
XLA: fn_math [math kernel]
Meta: fn_math [math kernel]
QuantizedCPU: fn_math [math kernel]
AutogradOther: fn_math [math kernel]
AutogradCPU: fn_autograd [autograd kernel]
AutogradCUDA: fn_math [math kernel]
AutogradXLA: fn_math [math kernel]
"""


def test_computed_table_with_ambiguous_autogradother():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CompositeImplicitAutograd", debug="fn_math"),
        lambda m: m.impl_t_t("foo", "QuantizedCPU", debug="fn_quantizedcpu"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
QuantizedCPU: fn_quantizedcpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: fn_math :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    assert extract_table(result.table) == """\
Undefined: fn_math [math kernel]
CPU: fn_math [math kernel]
CUDA: fn_math [math kernel]
XLA: fn_math [math kernel]
Meta: fn_math [math kernel]
QuantizedCPU: fn_quantizedcpu [kernel]
AutogradOther: ambiguous_autogradother [ambiguous autogradother]
AutogradCPU: fn_math [math kernel]
AutogradCUDA: fn_math [math kernel]
AutogradXLA: fn_math [math kernel]
"""


def test_calling_the_ambiguous_autogradother_entry_explains_the_fix(make_lib, ns):
    lib = make_lib()
    lib.def_("foo(Tensor x) -> Tensor")
    lib.impl_t_t("foo", "CompositeImplicitAutograd", debug="fn_math")
    lib.impl_t_t("foo", "QuantizedCPU", debug="fn_quantizedcpu")
    t = cpu()
    with _C._IncludeDispatchKeyGuard(keys("QuantizedCPU")):
        assert op(f"{ns}::foo")(t) is t  # the QuantizedCPU kernel
        with _C._IncludeDispatchKeyGuard(keys("AutogradOther")):
            with pytest.raises(NotImplementedError, match=f"{ns}::foo has kernels registered to both "
                                                          "CompositeImplicitAutograd and a backend mapped to "
                                                          "AutogradOther.*register a kernel for AutogradOther"):
                op(f"{ns}::foo")(t)


def test_computed_table_with_cpu_defaultbackend():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CPU", debug="fn_cpu"),
        lambda m: m.impl_t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeExplicitAutograd[alias]: fn_defaultbackend :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    assert extract_table(result.table) == """\
Undefined: fn_defaultbackend [default backend kernel]
CPU: fn_cpu [kernel]
CUDA: fn_defaultbackend [default backend kernel]
XLA: fn_defaultbackend [default backend kernel]
Meta: fn_defaultbackend [default backend kernel]
QuantizedCPU: fn_defaultbackend [default backend kernel]
AutogradOther: registered by opdispatch [backend fallback]
AutogradCPU: registered by opdispatch [backend fallback]
AutogradCUDA: registered by opdispatch [backend fallback]
AutogradXLA: registered by opdispatch [backend fallback]
"""


def test_computed_table_with_cpu_autograd_defaultbackend():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CPU", debug="fn_cpu"),
        lambda m: m.impl_t_t("foo", "Autograd", debug="fn_autograd"),
        lambda m: m.impl_t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend"),
    ])
    assert extract_table(result.table) == """\
Undefined: fn_defaultbackend [default backend kernel]
CPU: fn_cpu [kernel]
CUDA: fn_defaultbackend [default backend kernel]
XLA: fn_defaultbackend [default backend kernel]
Meta: fn_defaultbackend [default backend kernel]
QuantizedCPU: fn_defaultbackend [default backend kernel]
AutogradOther: fn_autograd [autograd kernel]
AutogradCPU: fn_autograd [autograd kernel]
AutogradCUDA: fn_autograd [autograd kernel]
AutogradXLA: fn_autograd [autograd kernel]
"""


def test_computed_table_with_cpu_autograd_math_defaultbackend():
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl_t_t("foo", "CPU", debug="fn_cpu"),
        lambda m: m.impl_t_t("foo", "Autograd", debug="fn_autograd"),
        lambda m: m.impl_t_t("foo", "CompositeImplicitAutograd", debug="fn_math"),
        lambda m: m.impl_t_t("foo", "CompositeExplicitAutograd", debug="fn_defaultbackend"),
    ])
    assert result.state == """\
name: test::foo
schema: test::foo(Tensor x) -> Tensor
debug: registered at /dev/null:0
alias analysis kind: FROM_SCHEMA
CPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
Autograd[alias]: fn_autograd :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias]: fn_math :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeExplicitAutograd[alias]: fn_defaultbackend :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""
    # CompositeExplicitAutograd beats CompositeImplicitAutograd for backends, and its
    # presence keeps the math kernel off the autograd keys.
    assert extract_table(result.table) == """\
Undefined: fn_defaultbackend [default backend kernel]
CPU: fn_cpu [kernel]
CUDA: fn_defaultbackend [default backend kernel]
XLA: fn_defaultbackend [default backend kernel]
Meta: fn_defaultbackend [default backend kernel]
QuantizedCPU: fn_defaultbackend [default backend kernel]
AutogradOther: fn_autograd [autograd kernel]
AutogradCPU: fn_autograd [autograd kernel]
AutogradCUDA: fn_autograd [autograd kernel]
AutogradXLA: fn_autograd [autograd kernel]
"""


def test_computed_table_with_python_kernels():
    # Python kernels take part in the same precedence; their debug is the call site.
    result = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor"),
        lambda m: m.impl("foo", "Meta", lambda x: x),
        lambda m: m.impl("foo", "CompositeExplicitAutograd", lambda x: x),
    ])
    table = extract_table(result.table)
    assert re.fullmatch(
        r"Undefined: registered at \S+test_dispatch_api\.py:\d+ \[default backend kernel\]\n"
        r"CPU: registered at \S+:\d+ \[default backend kernel\]\n"
        r"CUDA: registered at \S+:\d+ \[default backend kernel\]\n"
        r"XLA: registered at \S+:\d+ \[default backend kernel\]\n"
        r"Meta: registered at \S+test_dispatch_api\.py:\d+ \[kernel\]\n"
        r"QuantizedCPU: registered at \S+:\d+ \[default backend kernel\]\n"
        r"(Autograd\w+: registered by opdispatch \[backend fallback\]\n){4}", table), table
    assert re.search(r"^Meta: registered at \S+test_dispatch_api\.py:\d+ :: \(none\) \[ boxed \]$",
                     result.state, re.M), result.state


def test_multiple_def_error():
    state = commute("foo", [
        lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor"),
        lambda m: m.def_("foo(Tensor x, Tensor y) -> Tensor"),
    ], expect_raises=True).state
    assert state == (
        "Tried to register an operator (test::foo(Tensor x, Tensor y) -> Tensor) with the same name and overload "
        "name multiple times. Each overload's schema should only be registered with a single call to def(). "
        "Duplicate registration: registered at /dev/null:0. Original registration: registered at /dev/null:0")


def test_multiple_def_legacy_error():
    state = commute("foo", [
        lambda m: m.def_("foo(Tensor x) -> Tensor", alias="PURE_FUNCTION"),
        lambda m: m.def_legacy("foo(Tensor x) -> Tensor"),
    ], expect_raises=True).state
    assert state.startswith("Tried to register an operator (test::foo(Tensor x) -> Tensor) with the same name")


def test_overwrite_math():
    # Two kernels at one key do not commute (the newest wins), but each undo restores
    # exactly the state before it, in any destruction order.
    state = commute("foo", [
        lambda m: m.impl_t_t("foo", debug="fn1"),
        lambda m: m.impl_t_t("foo", debug="fn2"),
    ], ctor_order=(0, 1)).state
    assert state == """\
name: test::foo
schema: (none)
CompositeImplicitAutograd[alias]: fn2 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
CompositeImplicitAutograd[alias] (inactive): fn1 :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]
"""


def test_multiple_fallback_error(make_lib):
    fb = make_lib("IMPL", "XLA", namespace="_")
    fb.fallback_fallthrough()
    with pytest.raises(RuntimeError) as info:
        fb.fallback_fallthrough()
    assert str(info.value) == (
        "Tried to register multiple backend fallbacks for the same dispatch key XLA; previous registration "
        "registered at /dev/null:0, new registration registered at /dev/null:0. Remove the previous fallback first.")


# =====================================================================================
# Libraries
# =====================================================================================


def test_define_returns_the_name_and_defines_the_operator(make_lib, ns):
    lib = make_lib()
    assert lib.define("foo(Tensor x, int n=2) -> Tensor") == "foo"
    assert lib.define("foo.ov(Tensor x) -> Tensor", tags=["pt2_compliant_tag"]) == "foo"
    assert lib.define(f"{ns}::bar(Tensor x) -> ()") == f"{ns}::bar"
    names = _C._dispatch_get_all_op_names()
    assert {f"{ns}::foo", f"{ns}::foo.ov", f"{ns}::bar"} <= set(names)
    handle = _C._dispatch_find_schema_or_throw(f"{ns}::foo", "ov")
    assert str(handle.schema()) == f"{ns}::foo.ov(Tensor x) -> Tensor"
    assert handle.tags == ["pt2_compliant_tag"]
    assert _C._dispatch_dump(f"{ns}::foo").startswith(
        f"name: {ns}::foo\nschema: {ns}::foo(Tensor x, int n=2) -> Tensor\ndebug: registered at /dev/null:0\n")


def test_library_properties(make_lib, ns):
    lib = make_lib("IMPL", "Meta", file="lib.py", line=12)
    assert lib.ns == ns and lib.kind == "IMPL" and lib.dispatch_key == K.Meta
    assert make_lib().dispatch_key is None
    assert make_lib("FRAGMENT").kind == "FRAGMENT"


def test_define_records_the_library_site(make_lib, ns):
    make_lib("DEF", file="my_ops.py", line=42).define("foo(Tensor x) -> Tensor")
    assert "debug: registered at my_ops.py:42\n" in _C._dispatch_dump(f"{ns}::foo")
    assert _C._dispatch_find_schema_or_throw(f"{ns}::foo", "").debug() == "registered at my_ops.py:42"


def test_reset_undoes_everything_and_the_library_can_be_reused(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", "CPU", lambda x: x)
    lib.impl_t_t("foo", "Meta")
    assert _C._dispatch_has_kernel(f"{ns}::foo")
    lib.reset()
    assert not _C._dispatch_has_kernel(f"{ns}::foo")
    assert _C._dispatch_dump(f"{ns}::foo") == "" and _C._dispatch_dump_table(f"{ns}::foo") == ""
    assert f"{ns}::foo" not in _C._dispatch_get_all_op_names()
    lib.reset()  # idempotent
    lib.define("foo(Tensor x, Tensor y) -> Tensor")  # a different schema under the same name is fine now
    assert str(_C._dispatch_find_schema_or_throw(f"{ns}::foo", "").schema()) == f"{ns}::foo(Tensor x, Tensor y) -> Tensor"


def test_a_dead_library_undoes_its_registrations(ns):
    lib = _C._dispatch_library("DEF", ns, "")
    lib.define("foo(Tensor x) -> Tensor")
    assert _C._dispatch_has_kernel(f"{ns}::foo")
    del lib
    gc.collect()
    assert not _C._dispatch_has_kernel(f"{ns}::foo")
    _C._dispatch_library("DEF", ns, "")  # the namespace is free again


def test_cpp_test_helpers_and_their_debug_names(make_lib, ns):
    lib = make_lib()
    assert lib.def_("a(Tensor x) -> Tensor") is lib  # chainable, as in PyTorch
    lib.def_legacy("b(Tensor x) -> Tensor").def_name_t_t("c", "CPU", "dbg_c")
    lib.def_schema_t_t("d(Tensor y) -> Tensor", "Meta", "", "dbg_d").impl_t_t("a", "AutogradCPU", "dbg_a")
    lib.def_name_t_t("e")
    lib.def_schema_t_t("f(Tensor y) -> Tensor")
    lib.impl_t_t("b")
    dump = {name: _C._dispatch_dump(f"{ns}::{name}") for name in "abcdef"}
    assert dump["a"].endswith("AutogradCPU: dbg_a :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n")
    assert dump["b"].endswith(
        "CompositeImplicitAutograd[alias]: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n")
    assert f"schema: {ns}::c(Tensor _0) -> Tensor _0\n" in dump["c"]  # inferred from the C++ signature
    assert dump["c"].endswith("CPU: dbg_c :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n")
    assert f"schema: {ns}::d(Tensor y) -> Tensor\n" in dump["d"]
    assert dump["d"].endswith("Meta: dbg_d :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n")
    assert "CompositeImplicitAutograd[alias]: default_def_name_t_t ::" in dump["e"]
    assert "CompositeImplicitAutograd[alias]: default_def_schema_t_t ::" in dump["f"]
    t, m = cpu(), meta()
    assert op(f"{ns}::c")(t) is t and op(f"{ns}::d")(m) is m and op(f"{ns}::e")(t) is t


def test_helper_alias_analysis_kind_must_be_known(make_lib):
    lib = make_lib()
    with pytest.raises(ValueError, match="could not parse alias analysis kind 'WHATEVER'"):
        lib.def_("a(Tensor x) -> Tensor", alias="WHATEVER")
    with pytest.raises(ValueError, match="alias analysis kind 'X'"):
        lib.define("a(Tensor x) -> Tensor", alias_analysis="X")


def test_python_kernels_at_runtime_keys(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    seen = []
    lib.impl("foo", "CPU", lambda x: seen.append("cpu") or x)
    lib.impl("foo", "Meta", lambda x: seen.append("meta") or x)
    lib.impl("foo", "AutogradCPU", lambda x: seen.append("autograd") or x)
    f = op(f"{ns}::foo")
    f(cpu())
    f(meta())
    f(grad())
    assert seen == ["cpu", "meta", "autograd"]
    with pytest.raises(NotImplementedError, match=f"Could not run '{ns}::foo' with arguments from the 'CUDA' backend"):
        f(_C.empty((1,), device="cuda"))
    line = re.search(r"^CPU: registered at (\S+):(\d+) :: \(none\) \[ boxed \]$", _C._dispatch_dump(f"{ns}::foo"), re.M)
    assert line and line.group(1) == HERE


def test_python_kernels_at_alias_keys(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor? x) -> str")
    lib.impl("foo", "CompositeImplicitAutograd", lambda x: "math")
    lib.define("bar(Tensor? x) -> str")
    lib.impl("bar", "CompositeExplicitAutograd", lambda x: "default")
    lib.impl("bar", "Autograd", lambda x: "autograd")
    foo, bar = op(f"{ns}::foo"), op(f"{ns}::bar")
    for t in (cpu(), meta(), grad(), None):  # None: no tensor arguments, the Undefined entry
        assert foo(t) == "math"
    assert [bar(t) for t in (cpu(), meta(), None, grad())] == ["default", "default", "default", "autograd"]
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::bar", "Autograd")
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::bar", "AutogradCPU")  # direct registrations only


def test_impl_key_defaults(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", "", lambda x: x)  # no key in a keyless library: CompositeImplicitAutograd
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", K.CompositeImplicitAutograd)
    make_lib("IMPL", "Meta").impl("foo", "", lambda x: x)  # the library's key
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", K.Meta)


def test_backend_fallback_in_python(make_lib, ns, resolver):
    lib = make_lib()
    lib.define("foo(Tensor x, int n=1, *, str mode='a') -> Tensor")
    lib.impl("foo", "CPU", lambda x, n=1, *, mode="a": x)
    assert not _C._dispatch_has_backend_fallback(K.PrivateUse1)
    calls = []

    def fallback(op_, *args, **kwargs):
        calls.append((op_, args, kwargs))
        return args[0]

    fb = make_lib("IMPL", "PrivateUse1", namespace="_")
    fb.fallback("", fallback)
    assert _C._dispatch_has_backend_fallback(K.PrivateUse1)
    assert re.search(r"^PrivateUse1: registered at \S+test_dispatch_api\.py:\d+ \[backend fallback\]$",
                     _C._dispatch_dump_table(f"{ns}::foo"), re.M)
    t = _C.empty((2,), device="privateuseone")
    assert op(f"{ns}::foo")(t, 3, mode="b") is t
    assert calls == [(("op", f"{ns}::foo", ""), (t, 3), {"mode": "b"})]
    c = cpu()
    assert op(f"{ns}::foo")(c) is c and len(calls) == 1  # a kernel beats the fallback
    fb.reset()
    assert not _C._dispatch_has_backend_fallback(K.PrivateUse1)
    with pytest.raises(NotImplementedError, match="'PrivateUse1' backend"):
        op(f"{ns}::foo")(t)


def test_backend_fallback_with_keyset_redispatches(make_lib, ns, resolver):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl_t_t("foo", "CPU", debug="fn_cpu")
    calls = []

    def fallback(ks, op_, x):
        calls.append((ks, op_))
        return op(op_[1], op_[2]).redispatch(ks & _C._dispatch_keyset_full_after(K.FuncTorchBatched), x)

    make_lib("IMPL", "FuncTorchBatched", namespace="_").fallback("", fallback, with_keyset=True)
    t = cpu()
    with _C._IncludeDispatchKeyGuard(keys("FuncTorchBatched")):
        assert op(f"{ns}::foo")(t) is t
    assert calls == [(keys("CPU", "FuncTorchBatched"), ("op", f"{ns}::foo", ""))]
    assert op(f"{ns}::foo")(t) is t and len(calls) == 1  # without the TLS key, no fallback


def test_python_fallback_without_resolver_says_what_to_do(make_lib, ns):
    previous = _C._set_opoverload_resolver(None)
    try:
        _check_python_fallback_without_resolver(make_lib, ns)
    finally:
        _C._set_opoverload_resolver(previous)


def _check_python_fallback_without_resolver(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    make_lib("IMPL", "PrivateUse1", namespace="_").fallback("", lambda op_, x: x)
    with pytest.raises(RuntimeError, match=f"Python fallback registered at PrivateUse1 for {ns}::foo: no "
                                           "OpOverload resolver is installed"):
        op(f"{ns}::foo")(_C.empty((1,), device="privateuseone"))
    with pytest.raises(TypeError, match="_set_opoverload_resolver needs a callable"):
        _C._set_opoverload_resolver(3)


def test_fallback_fallthrough_skips_the_key(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl_t_t("foo", "CPU", debug="fn_cpu")
    t = cpu()
    with _C._IncludeDispatchKeyGuard(keys("XLA")):
        with pytest.raises(NotImplementedError, match=f"Could not run '{ns}::foo' with arguments from the 'XLA'"):
            op(f"{ns}::foo")(t)
        fb = make_lib("IMPL", "XLA", namespace="_")
        fb.fallback_fallthrough()
        assert _C._dispatch_has_backend_fallback("XLA")
        assert "XLA: fallthrough registered at /dev/null:0 [backend fallback]" in _C._dispatch_dump_table(f"{ns}::foo")
        assert op(f"{ns}::foo")(t) is t
        fb.reset()
        with pytest.raises(NotImplementedError):
            op(f"{ns}::foo")(t)
    assert op(f"{ns}::foo")(t) is t


def test_resolver_and_fallthrough_setters_return_the_previous_value():
    first, second = (lambda n, o: 1), (lambda n, o: 2)
    previous = _C._set_opoverload_resolver(first)
    try:
        assert _C._set_opoverload_resolver(second) is first
        assert _C._set_opoverload_resolver(None) is second
        assert _C._set_opoverload_resolver(None) is None
    finally:
        _C._set_opoverload_resolver(previous)
    a = object()
    previous = _C._set_fallthrough_kernel(a)
    try:
        assert _C._set_fallthrough_kernel(None) is a
    finally:
        _C._set_fallthrough_kernel(previous)


def test_fallthrough_kernel_for_an_operator(make_lib, ns, fallthrough):
    lib = make_lib()
    lib.define("foo(Tensor x) -> str")
    lib.impl("foo", "CPU", lambda x: "cpu")
    lib.impl("foo", "Meta", fallthrough)  # skip Meta for this operator
    name = f"{ns}::foo"
    assert _C._dispatch_kernel_for_dispatch_key_is_fallthrough(name, K.Meta)
    assert not _C._dispatch_kernel_for_dispatch_key_is_fallthrough(name, K.CPU)
    assert _C._dispatch_has_kernel_for_dispatch_key(name, K.Meta)
    # Where the fallthrough was registered, as for every kernel (Note [Registration sites]).
    line = test_fallthrough_kernel_for_an_operator.__code__.co_firstlineno + 4
    assert f"Meta: fallthrough registered at {__file__}:{line} [kernel]" in _C._dispatch_dump_table(name)
    with _C._IncludeDispatchKeyGuard(keys("Meta")):
        assert op(name)(cpu()) == "cpu"  # Meta is masked out, CPU serves the call
    with pytest.raises(NotImplementedError, match="or every dispatch key of the arguments was excluded "
                                                  "\\(thread-local state\\) or skipped \\(a fallthrough kernel\\)"):
        op(name)(meta())  # a meta tensor alone has no other key left


def test_fallback_only_in_the_fallback_namespace(make_lib):
    with pytest.raises(RuntimeError, match="fallback\\(\\) is only allowed in OPDISPATCH_LIBRARY_IMPL\\(_, KEY, m\\)"):
        make_lib("IMPL", "XLA").fallback_fallthrough()


def test_core_fallbacks_exist():
    for k in ["BackendSelect", "Functionalize", "ADInplaceOrView", "AutocastCPU", "PythonTLSSnapshot",
              "AutogradOther", "AutogradCPU", "AutogradMeta", "Python"]:
        assert _C._dispatch_has_backend_fallback(k), k
    for k in ["CPU", "Meta", "FuncTorchBatched", "PrivateUse1", "XLA"]:
        assert not _C._dispatch_has_backend_fallback(k), k


# =====================================================================================
# Registry inspection
# =====================================================================================


def test_inspection_functions(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl_t_t("foo", "CPU")
    lib.impl_t_t("foo", "CompositeExplicitAutograd")
    name = f"{ns}::foo"
    assert _C._dispatch_has_kernel(name)
    assert not _C._dispatch_has_kernel(f"{ns}::nope")
    assert _C._dispatch_has_kernel_for_dispatch_key(name, K.CPU)
    assert _C._dispatch_has_kernel_for_dispatch_key(name, "CompositeExplicitAutograd")
    assert not _C._dispatch_has_kernel_for_dispatch_key(name, K.CUDA)  # computed, not registered
    assert _C._dispatch_has_computed_kernel_for_dispatch_key(name, K.CUDA)
    assert _C._dispatch_has_computed_kernel_for_dispatch_key(name, "Undefined")
    assert _C._dispatch_has_computed_kernel_for_dispatch_key(name, "ADInplaceOrView")  # a core fallback
    assert not _C._dispatch_has_computed_kernel_for_dispatch_key(name, "FuncTorchBatched")
    assert _C._dispatch_has_kernel_for_any_dispatch_key(name, keys("Meta", "CPU"))
    assert not _C._dispatch_has_kernel_for_any_dispatch_key(name, keys("Meta", "CUDA"))
    assert not _C._dispatch_kernel_for_dispatch_key_is_fallthrough(name, K.CPU)
    assert not _C._dispatch_kernel_for_dispatch_key_is_fallthrough(name, K.Meta)
    _C._dispatch_check_invariants(name)
    _C._dispatch_check_invariants(f"{ns}::nope")  # unknown: nothing to check
    assert _C._dispatch_dump(f"{ns}::nope") == "" and _C._dispatch_dump_table(f"{ns}::nope") == ""
    with pytest.raises(ValueError, match="needs a runtime key, got alias key Autograd"):
        _C._dispatch_has_computed_kernel_for_dispatch_key(name, "Autograd")


@pytest.mark.parametrize("fn, args", [
    (_C._dispatch_has_kernel_for_dispatch_key, ("CPU",)),
    (_C._dispatch_kernel_for_dispatch_key_is_fallthrough, ("CPU",)),
    (_C._dispatch_has_computed_kernel_for_dispatch_key, ("CPU",)),
])
def test_inspection_of_unknown_operator_raises(fn, args):
    with pytest.raises(RuntimeError, match="operator dapi_nowhere::foo does not exist: nothing defines or "
                                           "implements it \\(check the name"):
        fn("dapi_nowhere::foo", *args)
    with pytest.raises(RuntimeError, match="does not exist"):
        _C._dispatch_has_kernel_for_any_dispatch_key("dapi_nowhere::foo", keys("CPU"))


def test_dangling_impls(make_lib, ns):
    before = _C._dispatch_find_dangling_impls()
    impl_lib = make_lib("IMPL", "CPU")
    impl_lib.impl_t_t("foo")
    dangling = _C._dispatch_find_dangling_impls()
    assert len(dangling) == len(before) + 1
    assert f"name: {ns}::foo\nschema: (none)\nCPU: impl_t_t :: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n" in dangling
    assert f"{ns}::foo" in _C._dispatch_get_all_op_names()
    with pytest.raises(RuntimeError, match=f"Could not find schema for {ns}::foo: it has kernels registered but no "
                                           "schema; define it first"):
        _C._dispatch_find_schema_or_throw(f"{ns}::foo", "")
    def_lib = make_lib()
    def_lib.define("foo(Tensor x) -> Tensor")
    assert _C._dispatch_find_dangling_impls() == before
    t = cpu()
    assert op(f"{ns}::foo")(t) is t
    def_lib.reset()
    assert len(_C._dispatch_find_dangling_impls()) == len(before) + 1
    impl_lib.reset()
    assert _C._dispatch_find_dangling_impls() == before


def test_all_op_names_spell_overloads(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("foo.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    names = [n for n in _C._dispatch_get_all_op_names() if n.startswith(ns + "::")]
    assert sorted(names) == [f"{ns}::foo", f"{ns}::foo.out"]


def test_check_all_invariants_with_a_def_only_operator(make_lib):
    # A def-only operator's table comes from the backend fallbacks that already exist.
    make_lib().define("foo(Tensor x) -> Tensor")
    _C._dispatch_check_all_invariants()


def test_fallback_registered_before_the_operator_serves_it(make_lib, ns, resolver):
    make_lib("IMPL", "PrivateUse1", namespace="_").fallback("", lambda op_, x: x)
    make_lib().define("foo(Tensor x) -> Tensor")
    _C._dispatch_check_invariants(f"{ns}::foo")
    t = _C.empty((1,), device="privateuseone")
    assert op(f"{ns}::foo")(t) is t


# =====================================================================================
# TLS and guards
# =====================================================================================


#: The keys every thread includes until it excludes them (PyTorch: c10::default_included_set,
#: see Note [BackendSelect is included by default]).
DEFAULT_INCLUDED = _C.DispatchKeySet(K.BackendSelect)


@pytest.fixture
def clean_tls():
    assert _C._dispatch_tls_local_include_set() == DEFAULT_INCLUDED and _C._dispatch_tls_local_exclude_set().empty()
    yield
    assert _C._dispatch_tls_local_include_set() == DEFAULT_INCLUDED, "a test leaked TLS state"
    assert _C._dispatch_tls_local_exclude_set().empty(), "a test leaked TLS state"


def test_tls_set_and_query(clean_tls):
    _C._dispatch_tls_set_dispatch_key_excluded(K.CPU, True)
    _C._dispatch_tls_set_dispatch_key_included("Python", True)
    try:
        assert _C._dispatch_tls_is_dispatch_key_excluded(K.CPU)
        assert not _C._dispatch_tls_is_dispatch_key_excluded(K.Meta)
        assert _C._dispatch_tls_is_dispatch_key_included(K.Python)
        assert _C._dispatch_tls_local_exclude_set() == keys("CPU")
        assert _C._dispatch_tls_local_include_set() == keys("Python") | DEFAULT_INCLUDED
    finally:
        _C._dispatch_tls_set_dispatch_key_excluded(K.CPU, False)
        _C._dispatch_tls_set_dispatch_key_included(K.Python, False)
    assert not _C._dispatch_tls_is_dispatch_key_excluded(K.CPU)
    with pytest.raises(ValueError, match="only runtime dispatch keys can be included or excluded"):
        _C._dispatch_tls_set_dispatch_key_included(K.Autograd, True)


def test_guards_nest_and_restore(clean_tls):
    with _C._ExcludeDispatchKeyGuard(keys("CPU")):
        assert _C._dispatch_tls_local_exclude_set() == keys("CPU")
        with _C._IncludeDispatchKeyGuard(keys("Meta", "Python")):
            assert _C._dispatch_tls_local_include_set() == keys("Meta", "Python") | DEFAULT_INCLUDED
            with _C._AutoDispatchBelowAutograd():
                assert _C._dispatch_tls_local_exclude_set() == keys("CPU") | _C._dispatch_get_runtime_keyset(
                    K.Autograd)
                assert _C._dispatch_tls_local_exclude_set().has(K.AutogradXPU)
                with _C._ExcludeDispatchKeyGuard(keys("CPU", "Meta")):
                    assert _C._dispatch_tls_local_exclude_set().has(K.Meta)
                assert not _C._dispatch_tls_local_exclude_set().has(K.Meta)
                assert _C._dispatch_tls_local_exclude_set().has(K.CPU)  # the outer guard still holds
            assert _C._dispatch_tls_local_exclude_set() == keys("CPU")
        assert _C._dispatch_tls_local_include_set() == DEFAULT_INCLUDED
    assert _C._dispatch_tls_local_exclude_set().empty()


def test_guards_restore_after_an_exception(clean_tls):
    with pytest.raises(KeyError):
        with _C._ExcludeDispatchKeyGuard(keys("CPU")):
            with _C._IncludeDispatchKeyGuard(keys("Python")):
                with _C._AutoDispatchBelowAutograd():
                    raise KeyError("inside")
    # clean_tls checks both sets are empty again


def test_guard_object_can_be_reentered(clean_tls):
    g = _C._ExcludeDispatchKeyGuard(keys("CPU"))
    with g:
        with g:
            assert _C._dispatch_tls_local_exclude_set() == keys("CPU")
        assert _C._dispatch_tls_local_exclude_set() == keys("CPU")
    assert _C._dispatch_tls_local_exclude_set().empty()
    with g:  # and reused
        assert _C._dispatch_tls_local_exclude_set() == keys("CPU")
    with pytest.raises(RuntimeError, match="_ExcludeDispatchKeyGuard.__exit__ called without a matching __enter__"):
        g.__exit__(None, None, None)


def test_guard_arguments():
    # A DispatchKeySet or a DispatchKey (PyTorch's exclude guard takes the first, its include guard the second;
    # both take either here so that code written for each runs); anything else is a TypeError.
    for guard in (_C._ExcludeDispatchKeyGuard, _C._IncludeDispatchKeyGuard):
        with pytest.raises(TypeError):
            guard(2.5)
        with pytest.raises(TypeError):
            guard(1)


def test_tls_is_per_thread(clean_tls):
    seen = {}

    def worker():
        seen["exclude"] = _C._dispatch_tls_local_exclude_set()

    with _C._ExcludeDispatchKeyGuard(keys("CPU")):
        th = threading.Thread(target=worker)
        th.start()
        th.join()
    assert seen["exclude"].empty()


def test_tls_changes_dispatch(make_lib, ns, clean_tls):
    lib = make_lib()
    lib.define("which(Tensor x) -> str")
    lib.impl("which", "CPU", lambda x: "cpu")
    lib.impl("which", "Meta", lambda x: "meta")
    lib.impl("which", "CompositeExplicitAutograd", lambda x: "default")
    lib.impl("which", "AutogradCPU", lambda x: "autograd")
    which = op(f"{ns}::which")
    assert which(cpu()) == "cpu"
    with _C._ExcludeDispatchKeyGuard(keys("CPU")):
        assert which(cpu()) == "default"  # no keys left: the Undefined entry
    with _C._IncludeDispatchKeyGuard(keys("Meta")):
        assert which(cpu()) == "meta"  # Meta outranks CPU
    assert which(grad()) == "autograd"
    with _C._AutoDispatchBelowAutograd():
        assert which(grad()) == "cpu"


# =====================================================================================
# Operator handles and _DispatchOperator
# =====================================================================================


@pytest.fixture
def args_op(make_lib, ns):
    lib = make_lib()
    lib.define("f(Tensor x, int a=1, float b=2.5, *, str mode='m', int[] dims=[]) -> (Tensor, str)")
    lib.impl("f", "CPU", lambda x, a=1, b=2.5, *, mode="m", dims=(): (x, f"a={a} b={b} mode={mode} dims={list(dims)}"))
    return f"{ns}::f"


def test_find_schema_or_throw_handle(args_op, ns):
    h = _C._dispatch_find_schema_or_throw(args_op, "")
    assert str(h.schema()) == f"{ns}::f(Tensor x, int a=1, float b=2.5, *, str mode=\"m\", int[] dims=[]) -> (Tensor, str)"
    assert h.name == args_op and h.overload_name == "" and h.has_schema()
    assert repr(h) == f"<_OperatorHandle {args_op}>"
    assert h == _C._dispatch_find_schema_or_throw(args_op, "")
    assert h != args_op and h != None  # noqa: E711
    with pytest.raises(RuntimeError, match=f"Could not find schema for {ns}::f.nope; the defined overloads of "
                                           f"{ns}::f are: default"):
        _C._dispatch_find_schema_or_throw(args_op, "nope")
    with pytest.raises(RuntimeError, match=f"Could not find schema for {ns}::g; no operator of that name is defined"):
        _C._dispatch_find_schema_or_throw(f"{ns}::g", "")


@pytest.mark.parametrize("call", ["handle", "operator"])
def test_boxed_call_binds_arguments(args_op, call):
    f = _C._dispatch_find_schema_or_throw(args_op, "").call_boxed if call == "handle" else op(args_op)
    t = cpu()
    out, text = f(t)
    assert out is t and text == "a=1 b=2.5 mode=m dims=[]"
    assert f(t, 3)[1] == "a=3 b=2.5 mode=m dims=[]"
    assert f(t, 3, 4)[1] == "a=3 b=4.0 mode=m dims=[]"  # an int where a float is declared
    assert f(t, b=0.5)[1] == "a=1 b=0.5 mode=m dims=[]"
    assert f(x=t, mode="z", dims=(1, 2))[1] == "a=1 b=2.5 mode=z dims=[1, 2]"
    assert f(t, np.int64(7))[1] == "a=7 b=2.5 mode=m dims=[]"  # __index__ ints
    assert f(t, dims=range(3))[1] == "a=1 b=2.5 mode=m dims=[0, 1, 2]"  # any sequence is a list, as PyTorch
    assert f(t, dims=np.array([4, 5]))[1] == "a=1 b=2.5 mode=m dims=[4, 5]"


@pytest.mark.parametrize("args, kwargs, message", [
    ((), {}, "missing value for argument 'x'"),
    (("T", 1, 2.0, "m"), {}, "takes 3 positional arguments but 4 were given"),
    ((None,), {}, "argument 'x' (position 1) must be Tensor, not None"),
    (("T", "1"), {}, "argument 'a' (position 2) must be int, not str"),
    (("T", 1.5), {}, "argument 'a' (position 2) must be int, not float"),
    (("T",), {"b": "x"}, "argument 'b' (position 3) must be float, not str"),
    (("T",), {"mode": 3}, "argument 'mode' (position 4) must be str, not int"),
    (("T",), {"dims": [1, "2"]}, "argument 'dims' (position 5) must be int[], not list"),
    (("T",), {"dims": "12"}, "argument 'dims' (position 5) must be int[], not str"),
    (("T",), {"dims": "T"}, "argument 'dims' (position 5) must be int[], not Tensor"),
    (("T",), {"x": "T"}, "got multiple values for argument 'x'"),
    (("T",), {"colour": 1}, "got an unexpected keyword argument 'colour'"),
])
@pytest.mark.parametrize("call", ["handle", "operator"])
def test_boxed_call_argument_errors_name_the_argument(args_op, call, args, kwargs, message):
    f = _C._dispatch_find_schema_or_throw(args_op, "").call_boxed if call == "handle" else op(args_op)
    t = cpu()
    args = tuple(t if a == "T" else a for a in args)
    kwargs = {k: (t if v == "T" else v) for k, v in kwargs.items()}
    with pytest.raises(TypeError) as info:
        f(*args, **kwargs)
    assert str(info.value).startswith(f"{args_op}()")
    assert message in str(info.value)


@pytest.mark.parametrize("kwargs, message", [
    ({"a": 2**70}, "argument 'a' (position 2): the value 1180591620717411303424 does not fit in int64"),
    ({"dims": [1, 2**64]}, "argument 'dims' (position 5): the value 18446744073709551616 does not fit in int64"),
])
def test_integer_overflow_names_the_argument(args_op, kwargs, message):
    with pytest.raises(OverflowError) as info:
        op(args_op)(cpu(), **kwargs)
    assert str(info.value) == f"{args_op}(): {message} (from -2**63 to 2**63 - 1)"


def test_integer_overflow_in_a_python_kernel_result(make_lib, ns):
    lib = make_lib()
    lib.define("big(Tensor x) -> int")
    lib.impl("big", "CPU", lambda x: 2**80)
    with pytest.raises(OverflowError, match=re.escape(f"{ns}::big: return 0 of the Python kernel registered at CPU: "
                                                      "the value 1208925819614629174706176 does not fit in int64")):
        op(f"{ns}::big")(cpu())


def test_return_conversions(make_lib, ns):
    lib = make_lib()
    lib.define("r(Tensor x) -> (Tensor, int, float, bool, str, int[], Tensor?, ScalarType)")
    lib.impl("r", "CPU", lambda x: (x, 1, 2.0, True, "s", [1, 2], None, opdispatch.float64))
    lib.define("nothing(Tensor x) -> ()")
    lib.impl("nothing", "CPU", lambda x: None)
    t = cpu()
    assert op(f"{ns}::r")(t) == (t, 1, 2.0, True, "s", [1, 2], None, opdispatch.float64)
    assert op(f"{ns}::nothing")(t) is None


def test_redispatch_boxed(make_lib, ns):
    lib = make_lib()
    lib.define("which(Tensor x, int n=0) -> str")
    lib.impl("which", "CPU", lambda x, n=0: f"cpu{n}")
    lib.impl("which", "AutogradCPU", lambda x, n=0: f"autograd{n}")
    h = _C._dispatch_find_schema_or_throw(f"{ns}::which", "")
    t = grad()
    assert h.call_boxed(t, 1) == "autograd1"
    ks = _C._dispatch_keys(t)
    assert h.redispatch_boxed(ks, t, n=2) == "autograd2"
    assert h.redispatch_boxed(ks & _C._dispatch_keyset_full_after(K.AutogradCPU), t, 3) == "cpu3"
    assert op(f"{ns}::which").redispatch(ks & _C._after_autograd_keyset, t) == "cpu0"
    with pytest.raises(NotImplementedError, match="from the 'Meta' backend"):
        h.redispatch_boxed(keys("Meta"), t)


def test_dispatch_operator_object(args_op, ns):
    f = _C._DispatchOperator(args_op)  # overload defaults to ""
    assert str(f._schema) == str(_C._dispatch_find_schema_or_throw(args_op, "").schema())
    assert f._handle == _C._dispatch_find_schema_or_throw(args_op, "")
    f.extra = "instances have a __dict__"
    with pytest.raises(RuntimeError, match=f"Could not find schema for {ns}::f.other"):
        _C._DispatchOperator(args_op, "other")
    with pytest.raises(TypeError, match=f"{args_op}.redispatch: argument 'keyset' must be a DispatchKeySet"):
        f.redispatch("CPU", cpu())
    with pytest.raises(TypeError, match="needs a keyset"):
        f.redispatch()


def test_dispatch_operator_outlives_its_definition(make_lib, ns):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl_t_t("foo", "CPU")
    f = op(f"{ns}::foo")
    lib.reset()
    with pytest.raises(RuntimeError, match=f"operator {ns}::foo has no schema: its definition was removed"):
        f(cpu())
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", "CPU", lambda x: x)
    t = cpu()
    assert f(t) is t  # the same operator entry, defined again


# =====================================================================================
# The done-when check
# =====================================================================================


def test_cpp_kernel_called_from_python_shares_memory_with_numpy(make_lib, ns):
    make_lib("DEF").def_("ident(Tensor x) -> Tensor")
    make_lib("IMPL", "CPU").impl_t_t("ident")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = opdispatch.from_numpy(a)
    out = op(f"{ns}::ident")(t)
    assert out is t
    b = out.numpy()
    assert np.shares_memory(a, b)
    b[1, 2] = -1.0
    assert a[1, 2] == -1.0
    assert _C._dispatch_find_schema_or_throw(f"{ns}::ident", "").call_boxed(t) is t


# =====================================================================================
# Python kernels
# =====================================================================================


def test_python_kernel_sees_and_returns_the_same_objects(make_lib, ns):
    lib = make_lib()
    lib.define("pair(Tensor a, Tensor[] rest, Tensor? maybe) -> (Tensor, Tensor)")
    received = []

    def kernel(a, rest, maybe):
        received.append((a, rest, maybe))
        return rest[1], a

    lib.impl("pair", "CPU", kernel)
    x, y, z = cpu(), cpu(), cpu()
    r0, r1 = op(f"{ns}::pair")(x, [y, z], None)
    assert received[0][0] is x and received[0][1][0] is y and received[0][1][1] is z and received[0][2] is None
    assert r0 is z and r1 is x


def test_python_kernel_arguments_follow_pytorch_conventions(make_lib, ns):
    lib = make_lib()
    lib.define("f(Tensor x, int a=1, float b=2.0, *, bool c=False, str d='x') -> Tensor")
    seen = []

    def kernel(*args, **kwargs):
        seen.append((args[1:], kwargs))
        return args[0]

    lib.impl("f", "CPU", kernel)
    f, t = op(f"{ns}::f"), cpu()
    f(t)
    f(t, 1, 2.0)  # trailing values equal to their defaults are omitted
    f(t, 5)
    f(t, 1, 3.0)  # a non-default value keeps the positional arguments before it
    f(t, c=True)  # keyword-only arguments arrive as keywords
    f(t, d="y", a=3)
    f(t, c=False, d="x")  # keyword-only defaults are omitted too
    assert seen == [((), {}), ((), {}), ((5,), {}), ((1, 3.0), {}), ((), {"c": True}), ((3,), {"d": "y"}),
                    ((), {})]


def test_with_keyset_and_redispatch_reach_the_lower_kernel(make_lib, ns):
    lib = make_lib()
    lib.define("g(Tensor x) -> Tensor")
    lib.impl_t_t("g", "CPU", debug="g_cpu")
    calls = []

    def autograd_kernel(ks, x):
        calls.append(ks)
        return op(f"{ns}::g").redispatch(ks & _C._dispatch_keyset_full_after(K.AutogradCPU), x)

    lib.impl("g", "AutogradCPU", autograd_kernel, with_keyset=True)
    t = grad()
    assert op(f"{ns}::g")(t) is t
    # ADInplaceOrView is masked out before the kernel is chosen (its fallback is a fallthrough).
    assert calls == [keys("CPU", "AutogradCPU")]
    p = cpu()
    assert op(f"{ns}::g")(p) is p and len(calls) == 1


class KernelError(Exception):
    pass


def test_exceptions_from_python_kernels_pass_through_unchanged(make_lib, ns):
    lib = make_lib()
    lib.define("h(Tensor x) -> Tensor")
    raised = []

    def failing_kernel(x):
        e = KeyError("boom")
        raised.append(e)
        raise e

    lib.impl("h", "CPU", failing_kernel)
    with pytest.raises(KeyError) as info:
        op(f"{ns}::h")(cpu())
    assert info.value is raised[0]
    frames = [f.name for f in traceback.extract_tb(info.tb)]
    assert "failing_kernel" in frames
    assert frames.index("failing_kernel") > frames.index("test_exceptions_from_python_kernels_pass_through_unchanged")

    lib.define("h2(Tensor x) -> Tensor")
    lib.impl("h2", "CPU", lambda x: (_ for _ in ()).throw(KernelError("custom")))
    with pytest.raises(KernelError, match="custom"):
        _C._dispatch_find_schema_or_throw(f"{ns}::h2", "").call_boxed(cpu())


def test_exceptions_pass_through_nested_calls(make_lib, ns):
    lib = make_lib()
    lib.define("inner(Tensor x) -> Tensor")
    lib.define("outer(Tensor x) -> Tensor")
    lib.impl("inner", "CPU", lambda x: {}["missing"])
    lib.impl("outer", "CPU", lambda x: op(f"{ns}::inner")(x))
    with pytest.raises(KeyError, match="missing"):
        op(f"{ns}::outer")(cpu())


@pytest.mark.parametrize("schema, result, message", [
    ("r(Tensor x) -> (Tensor, Tensor)", "X", "the Python kernel registered at CPU returned Tensor but the schema "
                                             "declares 2 returns; return a tuple"),
    ("r(Tensor x) -> (Tensor, Tensor)", ("X",), "returned 1 values but the schema declares 2"),
    ("r(Tensor x) -> (Tensor, Tensor)", ("X", 3), "returned int for return 1 but the schema declares Tensor"),
    ("r(Tensor x) -> Tensor", None, "returned None for return 0 but the schema declares Tensor"),
    ("r(Tensor x) -> int", "s", "returned str for return 0 but the schema declares int"),
    ("r(Tensor x) -> ()", 1, "returned int but the schema declares no return (-> ()); return None"),
])
def test_wrong_python_kernel_results_raise_type_error(make_lib, ns, schema, result, message):
    lib = make_lib()
    lib.define(schema)
    t = cpu()

    def kernel(x):
        if isinstance(result, tuple):
            return tuple(x if r == "X" else r for r in result)
        return x if result == "X" else result

    lib.impl("r", "CPU", kernel)
    with pytest.raises(TypeError) as info:
        op(f"{ns}::r")(t)
    assert str(info.value).startswith(f"{ns}::r: ")
    assert message in str(info.value)


def test_python_and_cpp_kernels_by_input_keys(make_lib, ns):
    lib = make_lib()
    lib.define("k(Tensor x) -> Tensor")
    lib.impl_t_t("k", "CPU", debug="cpp_cpu")
    log = []

    def autograd_kernel(ks, x):
        log.append("autograd")
        with _C._AutoDispatchBelowAutograd():
            return op(f"{ns}::k")(x)

    def meta_kernel(x):
        log.append("meta")
        return _C.empty(x.shape, x.dtype, "meta")

    lib.impl("k", "Autograd", autograd_kernel, with_keyset=True)
    lib.impl("k", "Meta", meta_kernel)
    k = op(f"{ns}::k")
    p, g, m = cpu(), grad(), meta(3)
    assert k(p) is p and log == []  # the C++ kernel only
    assert k(g) is g and log == ["autograd"]  # Python autograd kernel, then the C++ CPU kernel
    out = k(m)
    assert log == ["autograd", "meta"] and out is not m and out.shape == (3,) and out.is_meta
    m.requires_grad = True
    k(m)
    assert log == ["autograd", "meta", "autograd", "meta"]


def test_second_python_kernel_for_a_key_wins_until_removed(make_lib, ns):
    lib = make_lib()
    lib.define("w(Tensor x) -> str")
    lib.impl("w", "CPU", lambda x: "first")
    newer = make_lib()
    with pytest.warns(UserWarning, match=r"(?s)Overriding a previously registered kernel.*dispatch key: CPU"):
        newer.impl("w", "CPU", lambda x: "second")  # PyTorch 2.13: the same override warning (once per process)
    assert op(f"{ns}::w")(cpu()) == "second"
    assert "CPU (inactive): registered at" in _C._dispatch_dump(f"{ns}::w")
    newer.reset()
    assert op(f"{ns}::w")(cpu()) == "first"


def test_reset_releases_python_kernels_and_fallbacks(make_lib, ns, resolver):
    class Kernel:
        def __call__(self, *args):
            return args[-1]

    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    k, fb_k, rejected = Kernel(), Kernel(), Kernel()
    refs = [weakref.ref(o) for o in (k, fb_k, rejected)]
    lib.impl("foo", "CPU", k)
    fb = make_lib("IMPL", "CompositeExplicitAutograd", namespace="_")  # one function, a slot per backend key
    fb.fallback("", fb_k)
    with pytest.raises(RuntimeError):
        make_lib("IMPL", "CPU").impl("foo", "Meta", rejected)
    del k, fb_k, rejected
    gc.collect()
    assert [r() is None for r in refs] == [False, False, True]
    lib.reset()
    fb.reset()
    gc.collect()
    assert [r() is None for r in refs] == [True, True, True]


def test_impl_needs_a_callable(make_lib):
    lib = make_lib()
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="impl\\(foo\\): the kernel must be callable, not int"):
        lib.impl("foo", "CPU", 3)
    with pytest.raises(TypeError, match="fallback\\(\\): the kernel must be callable"):
        make_lib("IMPL", "XLA", namespace="_").fallback("", None)


# =====================================================================================
# Bad input leaves the registry exactly as it was
# =====================================================================================


def registry_snapshot(*names: str):
    return ([(_C._dispatch_dump(n), _C._dispatch_dump_table(n)) for n in names],
            sorted(_C._dispatch_get_all_op_names()), sorted(_C._dispatch_find_dangling_impls()),
            [_C._dispatch_has_backend_fallback(k) for k in _C.DispatchKey.__members__.values()])


@pytest.fixture
def populated(make_lib, ns):
    """An operator foo(Tensor x, int y) -> Tensor with a CPU Python kernel and a Meta C++ kernel."""
    lib = make_lib("DEF", file="first_def.py", line=7)
    lib.define("foo(Tensor x, int y) -> Tensor")
    lib.impl("foo", "CPU", lambda x, y: x)
    return lib


def test_unknown_dispatch_key_names(populated, make_lib, ns):
    before = registry_snapshot(f"{ns}::foo")
    with pytest.raises(ValueError, match=r"could not parse dispatch key 'CPUU'. Did you mean 'CPU'\? Valid dispatch "
                                         r"keys are: Undefined, CPU, CUDA.*AutogradCPU.*CompositeImplicitAutograd"):
        populated.impl("foo", "CPUU", lambda x, y: x)
    with pytest.raises(ValueError, match="could not parse dispatch key 'cpu'. Did you mean 'CPU'\\?"):
        populated.impl_t_t("foo", "cpu")
    with pytest.raises(ValueError, match="could not parse dispatch key 'Autogradd'. Did you mean 'Autograd'\\?"):
        _C._dispatch_library("IMPL", ns, "Autogradd")
    with pytest.raises(ValueError, match="could not parse dispatch key 'Nope'. Valid") as e:
        _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "Nope")
    assert "Did you mean" not in str(e.value)
    with pytest.raises(ValueError, match="could not parse library kind 'DEFINE'"):
        _C._dispatch_library("DEFINE", ns, "")
    assert registry_snapshot(f"{ns}::foo") == before


@pytest.mark.parametrize("namespace", ["", "a::b", "has space", "1abc", "dots.in.it"])
@pytest.mark.parametrize("kind", ["DEF", "FRAGMENT", "IMPL"])
def test_invalid_namespaces(namespace, kind):
    before = registry_snapshot()
    with pytest.raises(ValueError, match=f"invalid namespace '{re.escape(namespace)}' for an OPDISPATCH_LIBRARY.* "
                                         "block: a namespace is an identifier"):
        _C._dispatch_library(kind, namespace, "")
    assert registry_snapshot() == before


@pytest.mark.parametrize("schema, message", [
    ("bar(Tensor x", "expected ')' but found end of input at position 12"),
    ("bar(Tensr x) -> Tensor", "unknown type 'Tensr'"),
    ("bar(int x=1.5) -> ()", "at position 10"),
])
def test_malformed_schemas(populated, ns, schema, message):
    before = registry_snapshot(f"{ns}::foo", f"{ns}::bar")
    with pytest.raises(ValueError, match=re.escape(message)):
        populated.define(schema)
    with pytest.raises(ValueError, match=re.escape(message)):
        populated.def_(schema)
    with pytest.raises(ValueError, match=re.escape(message)):
        populated.def_schema_t_t(schema)
    assert registry_snapshot(f"{ns}::foo", f"{ns}::bar") == before


def test_second_def_library_names_the_first(populated, ns):
    before = registry_snapshot(f"{ns}::foo")
    with pytest.raises(RuntimeError, match=f"Only a single OPDISPATCH_LIBRARY .* namespace {ns}.* Previous "
                                           f"registration of the library was registered at first_def.py:7; latest "
                                           f"registration was registered at second.py:99"):
        _C._dispatch_library("DEF", ns, "", "second.py", 99)
    assert registry_snapshot(f"{ns}::foo") == before


def test_second_define_of_an_operator(populated, make_lib, ns):
    before = registry_snapshot(f"{ns}::foo")
    other = make_lib(file="other.py", line=3)
    with pytest.raises(RuntimeError, match=re.escape(
            f"Tried to register an operator ({ns}::foo(Tensor x) -> Tensor) with the same name and overload name "
            f"multiple times. Each overload's schema should only be registered with a single call to def(). "
            f"Duplicate registration: registered at other.py:3. Original registration: registered at first_def.py:7")):
        other.define("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="same name and overload name"):
        other.def_name_t_t("foo")  # def + kernel: the def fails, no kernel is left behind
    assert registry_snapshot(f"{ns}::foo") == before


def test_cpp_kernel_whose_schema_does_not_match(make_lib, ns):
    lib = make_lib()
    lib.def_("foo(Tensor x, int y) -> Tensor")
    before = registry_snapshot(f"{ns}::foo", f"{ns}::bar")
    with pytest.raises(RuntimeError) as info:
        lib.impl_t_t("foo", "CPU")
    msg = str(info.value)
    assert msg.startswith("Inferred operator schema for a C++ kernel function doesn't match the expected function "
                          "schema.")
    assert f"  operator: {ns}::foo\n" in msg
    assert f"  expected schema: {ns}::foo(Tensor x, int y) -> Tensor\n" in msg
    assert "  inferred schema: (Tensor _0) -> Tensor _0\n" in msg
    assert "  dispatch key: CPU\n" in msg
    assert "  reason: The number of arguments is different. 2 vs 1." in msg
    # def + kernel in one call: when the kernel does not match, the def is undone too.
    with pytest.raises(RuntimeError, match="reason: The number of arguments is different"):
        lib.def_schema_t_t("bar(Tensor x, int y) -> Tensor", "CPU")
    assert registry_snapshot(f"{ns}::foo", f"{ns}::bar") == before


def test_other_rejected_registrations(populated, make_lib, ns):
    before = registry_snapshot(f"{ns}::foo")
    with pytest.raises(RuntimeError, match="Cannot define an operator inside an OPDISPATCH_LIBRARY_IMPL block"):
        make_lib("IMPL", "CPU").define("baz(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="Explicitly provided dispatch key \\(Meta\\) for .*::foo is inconsistent "
                                           "with the dispatch key of the enclosing OPDISPATCH_LIBRARY_IMPL block "
                                           "\\(CPU\\)"):
        make_lib("IMPL", "CPU").impl("foo", "Meta", lambda x, y: x)
    with pytest.raises(RuntimeError, match="Explicitly provided namespace \\(elsewhere\\) in operator name "
                                           "elsewhere::foo does not match"):
        populated.impl("elsewhere::foo", "CPU", lambda x, y: x)
    with pytest.raises(ValueError, match="cannot register a kernel for .*foo at dispatch key Undefined"):
        populated.impl("foo", "Undefined", lambda x, y: x)
    with pytest.raises(ValueError, match="the namespace '_' is reserved for fallback"):
        _C._dispatch_library("DEF", "_", "")
    assert registry_snapshot(f"{ns}::foo") == before


def test_failed_alias_fallback_registers_nothing(populated, make_lib, ns, resolver):
    blocker = make_lib("IMPL", "PrivateUse1", namespace="_")
    blocker.fallback("", lambda op_, *a, **k: None)
    before = registry_snapshot(f"{ns}::foo")
    # CompositeExplicitAutograd stands for every backend key; CPU..Meta would succeed,
    # PrivateUse1 is taken: none of them may stay registered.
    with pytest.raises(RuntimeError, match="Tried to register multiple backend fallbacks for the same dispatch key "
                                           "PrivateUse1; previous registration registered at "):
        make_lib("IMPL", "CompositeExplicitAutograd", namespace="_").fallback("", lambda op_, *a, **k: None)
    assert not _C._dispatch_has_backend_fallback(K.CPU)
    assert registry_snapshot(f"{ns}::foo") == before


def test_calling_a_key_without_kernel(populated, ns):
    populated.define("noargs(int n) -> int")
    before = registry_snapshot(f"{ns}::foo", f"{ns}::noargs")
    with pytest.raises(NotImplementedError) as info:
        op(f"{ns}::foo")(meta(), 1)
    msg = str(info.value)
    assert msg.startswith(f"Could not run '{ns}::foo' with arguments from the 'Meta' backend")
    assert f"'{ns}::foo' is only available for these keys: [CPU, BackendSelect" in msg
    assert "Register a kernel for Meta" in msg
    with pytest.raises(NotImplementedError, match=f"There were no tensor arguments to this function.*{ns}::noargs"):
        op(f"{ns}::noargs")(1)
    assert registry_snapshot(f"{ns}::foo", f"{ns}::noargs") == before


def test_bad_call_arguments_leave_the_registry(populated, ns):
    before = registry_snapshot(f"{ns}::foo")
    f = op(f"{ns}::foo")
    with pytest.raises(TypeError, match=f"{ns}::foo\\(\\): argument 'y' \\(position 2\\) must be int, not str"):
        f(cpu(), "1")
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        f(cpu(), 1, 2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        f(cpu(), 1, z=2)
    assert registry_snapshot(f"{ns}::foo") == before


# =====================================================================================
# Threads
# =====================================================================================


@pytest.fixture
def fast_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(old)


def test_python_kernels_called_from_threads(make_lib, ns, fast_switching):
    lib = make_lib()
    lib.define("tag(Tensor x, int i) -> (Tensor, int)")
    lib.impl("tag", "CPU", lambda x, i: (x, i * 2))
    errors = []

    def worker(i):
        try:
            t = cpu()
            for j in range(300):
                out, v = op(f"{ns}::tag")(t, i * 1000 + j)
                assert out is t and v == 2 * (i * 1000 + j)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []


def test_reset_while_another_thread_calls_the_op(make_lib, ns, fast_switching):
    base = make_lib()
    base.define("k(Tensor x) -> str")
    base.impl("k", "CompositeExplicitAutograd", lambda x: "default")
    for _ in range(10):
        lib = make_lib()
        started = threading.Event()
        stop = threading.Event()
        served = {"python": 0, "default": 0}
        errors = []

        def python_kernel(x):
            started.set()
            return "python"

        lib.impl("k", "CPU", python_kernel)

        def caller():
            try:
                t = cpu()
                while not stop.is_set():
                    served[op(f"{ns}::k")(t)] += 1
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
                started.set()

        th = threading.Thread(target=caller)
        th.start()
        assert started.wait(10)
        lib.reset()  # while the other thread is calling
        for _ in range(50):
            _C._dispatch_check_invariants(f"{ns}::k")
        stop.set()
        th.join()
        assert errors == []
        assert served["python"] > 0
        assert op(f"{ns}::k")(cpu()) == "default"


_ALIAS_FALLBACK_RACE = textwrap.dedent("""
    import sys, threading, time
    import numpy as np
    import opdispatch
    from opdispatch import _C

    sys.setswitchinterval(1e-5)
    _C._set_opoverload_resolver(lambda name, overload: (name, overload))
    lib = _C._dispatch_library("FRAGMENT", "alias_fallback_race", "")
    lib.define("f(Tensor x) -> Tensor")

    class Fallback:
        def __call__(self, op, x):
            return x
        def __del__(self):
            time.sleep(0.1)  # lets the caller run while the library is being reset

    fb = _C._dispatch_library("IMPL", "_", "CompositeExplicitAutograd")
    fb.fallback("", Fallback())
    stop = threading.Event()
    calls = [0]
    errors = []

    def caller():
        t = opdispatch.from_numpy(np.zeros(2))
        f = _C._DispatchOperator("alias_fallback_race::f")
        while not stop.is_set():
            try:
                assert f(t) is t
                calls[0] += 1
            except NotImplementedError:
                pass  # after the reset: no kernel, no fallback
            except BaseException as e:
                errors.append(repr(e))
                return

    th = threading.Thread(target=caller)
    th.start()
    while calls[0] == 0 and not errors:
        time.sleep(0.001)
    fb.reset()  # one slot per backend key, deregistered one by one
    time.sleep(0.02)
    stop.set()
    th.join()
    print("ok" if not errors else errors, calls[0])
    sys.exit(1 if errors else 0)
""")


def test_reset_of_an_alias_key_fallback_while_another_thread_calls():
    # In a subprocess: the failure this guards against was a stack overflow.
    proc = subprocess.run([sys.executable, "-c", _ALIAS_FALLBACK_RACE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.startswith("ok ")
