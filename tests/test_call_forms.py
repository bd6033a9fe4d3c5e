"""Every way of calling an operator shows the same effects (docs/architecture.rst "One call
path", Note [One call path] in csrc/opdispatch/dispatch/CallUnit.h): the same
result, the same version bumps of `Tensor(a!)` arguments, and the same error
for a wrong result type or count, an output that aliases an input, a kernel
that raises and a missing kernel. The forms: an OpOverload called with
positional or keyword arguments, the packet, OpOverload.redispatch,
_OperatorHandle.call_boxed / redispatch_boxed, and C++ callers (a typed
handle's call and redispatch, and a boxed call) in a small extension built here."""
from __future__ import annotations

import re

import pytest

import opdispatch
from opdispatch import _C
from _helpers import tensor

DK = _C.DispatchKey

EXTENSION = r"""
// Kernels that call the operator named by `op` from C++: typed, typed
// redispatch (to the key set of x) and boxed. Their own schemas declare no
// mutation and they check nothing, so every effect seen is the inner call's.
#include <opdispatch/library.h>

using opdispatch::Dispatcher;
using opdispatch::DispatchKeySet;
using opdispatch::Stack;
using opdispatch::Tensor;

namespace {
opdispatch::OperatorHandle find(const std::string& op) { return Dispatcher::singleton().findSchemaOrThrow(op, ""); }

Tensor typed(const Tensor& x, int64_t n, std::string op) {
  return find(op).typed<Tensor(const Tensor&, int64_t)>().call(x, n);
}
Tensor typedRedispatch(const Tensor& x, int64_t n, std::string op) {
  return find(op).typed<Tensor(const Tensor&, int64_t)>().redispatch(x.key_set(), x, n);
}
Tensor boxed(const Tensor& x, int64_t n, std::string op) {
  Stack stack{x, n};
  find(op).callBoxed(&stack);
  return stack.at(0).toTensor();
}
std::tuple<Tensor, Tensor> typedPair(const Tensor& x, int64_t n, std::string op) {
  return find(op).typed<std::tuple<Tensor, Tensor>(const Tensor&, int64_t)>().call(x, n);
}
std::tuple<Tensor, Tensor> boxedPair(const Tensor& x, int64_t n, std::string op) {
  Stack stack{x, n};
  find(op).callBoxed(&stack);
  return {stack.at(0).toTensor(), stack.at(1).toTensor()};
}
}  // namespace

OPDISPATCH_LIBRARY(callforms_ext, m) {
  m.def("typed(Tensor x, int n, str op) -> Tensor");
  m.def("typed_redispatch(Tensor x, int n, str op) -> Tensor");
  m.def("boxed(Tensor x, int n, str op) -> Tensor");
  m.def("typed_pair(Tensor x, int n, str op) -> (Tensor, Tensor)");
  m.def("boxed_pair(Tensor x, int n, str op) -> (Tensor, Tensor)");
}
OPDISPATCH_LIBRARY_IMPL(callforms_ext, CompositeImplicitAutograd, m) {
  m.impl("typed", OPDISPATCH_FN(typed));
  m.impl("typed_redispatch", OPDISPATCH_FN(typedRedispatch));
  m.impl("boxed", OPDISPATCH_FN(boxed));
  m.impl("typed_pair", OPDISPATCH_FN(typedPair));
  m.impl("boxed_pair", OPDISPATCH_FN(boxedPair));
}
"""


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    """The callforms_ext operators (built with cpp_extension.load, once per process)."""
    import opdispatch.cpp_extension as cpp_extension

    if not _C._dispatch_has_kernel("callforms_ext::typed"):
        src = tmp_path_factory.mktemp("callforms") / "callforms.cpp"
        src.write_text(EXTENSION)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("extensions")))
            cpp_extension.load("callforms_ext", [src])
    return opdispatch.ops.callforms_ext


def _forms(ns: str, name: str, ext, pair: bool):
    """(form name, call(x, n)) for each way of calling ns::name."""
    qualified = f"{ns}::{name}"
    packet = getattr(getattr(opdispatch.ops, ns), name)
    overload = packet.default
    handle = _C._dispatch_find_schema_or_throw(qualified, "")
    cpu = _C.DispatchKeySet(DK.CPU)
    forms = {
        "positional": lambda x, n: overload(x, n),
        "keyword": lambda x, n: overload(x, n=n),
        "all keywords": lambda x, n: overload(n=n, x=x),
        "packet": lambda x, n: packet(x, n),
        "packet keyword": lambda x, n: packet(x, n=n),
        "redispatch": lambda x, n: overload.redispatch(cpu, x, n),
        "call_boxed": lambda x, n: handle.call_boxed(x, n),
        "redispatch_boxed": lambda x, n: handle.redispatch_boxed(cpu, x, n=n),
    }
    if pair:
        forms["C++ typed"] = lambda x, n: ext.typed_pair(x, n, qualified)
        forms["C++ boxed"] = lambda x, n: ext.boxed_pair(x, n, qualified)
    else:
        forms["C++ typed"] = lambda x, n: ext.typed(x, n, qualified)
        forms["C++ typed redispatch"] = lambda x, n: ext.typed_redispatch(x, n, qualified)
        forms["C++ boxed"] = lambda x, n: ext.boxed(x, n, qualified)
    return forms


def _define(ns: str, schema: str, kernel=None, check_aliasing: bool = False):
    """Defines ns::<schema> with `kernel` (if any) at CPU; returns the library (keep it alive)."""
    lib = _C._dispatch_library("FRAGMENT", ns, "")
    lib.define(schema)
    if kernel is not None:
        lib.impl(schema.split("(", 1)[0], "CPU", kernel, False, check_aliasing)
    return lib


def _effects(call, x):
    """What a call did: ("ok", result, version bump) or (exception type, message, version bump)."""
    before = x._version
    try:
        result = call(x, 1)
    except Exception as e:  # noqa: BLE001  (the exception is the effect under test)
        return type(e), str(e), x._version - before
    return "ok", result, x._version - before


def _check_all_forms(forms, expect):
    x = tensor([1.0, 2.0])
    seen = {}
    for form, call in forms.items():
        seen[form] = _effects(call, x)
        expect(form, *seen[form])
    return seen


@pytest.mark.parametrize("schema", ["f(Tensor(a!) x, int n) -> Tensor", "f(Tensor(a!) x, int n=1) -> Tensor"])
def test_a_successful_call_returns_the_same_result_and_bumps_once_in_every_form(ext, ns, schema):
    # With `n=1`, every form drops the trailing argument equal to its default
    # (PyTorch's convention for calling a Python kernel), C++ callers included.
    out = tensor([0.0])
    received = []

    def kernel(*args, **kwargs):
        received.append((args, kwargs))
        return out

    keep = _define(ns, schema, kernel)
    x_seen = []

    def expect(form, kind, result, bumped):
        assert (kind, bumped) == ("ok", 1), form
        assert result is out, form  # the kernel's own tensor object, whatever the route
        args, kwargs = received.pop()
        assert kwargs == {} and args[1:] == (() if "=1" in schema else (1,)), (form, args)
        x_seen.append(args[0])

    _check_all_forms(_forms(ns, "f", ext, pair=False), expect)
    # The kernel got the caller's tensor object itself in every form, from C++ too.
    assert len(x_seen) == len(_forms(ns, "f", ext, pair=False)) and len({id(x) for x in x_seen}) == 1
    del keep


@pytest.mark.parametrize("returned, error", [
    (3, r"the Python kernel registered at CPU returned int for return 0 but the schema declares Tensor"),
    (None, r"returned None for return 0 but the schema declares Tensor"),
])
def test_a_wrong_result_type_raises_the_same_error_and_bumps_nothing(ext, ns, returned, error):
    # The drift of issue 10: f(x, 1) used to bump x._version and f(x, n=1) not.
    keep = _define(ns, "f(Tensor(a!) x, int n) -> Tensor", lambda x, n: returned)

    def expect(form, kind, message, bumped):
        assert kind is TypeError and re.search(error, message) and message.startswith(f"{ns}::f: "), (form, message)
        assert bumped == 0, form

    seen = _check_all_forms(_forms(ns, "f", ext, pair=False), expect)
    assert len({message for _, message, _ in seen.values()}) == 1
    del keep


@pytest.mark.parametrize("returned, error", [
    ("one", r"returned Tensor but the schema declares 2 returns; return a tuple"),
    ("three", r"returned 3 values but the schema declares 2"),
    ("wrong type", r"returned int for return 1 but the schema declares Tensor"),
])
def test_a_wrong_result_count_raises_the_same_error_and_bumps_nothing(ext, ns, returned, error):
    a, b = tensor([0.0]), tensor([1.0])
    results = {"one": a, "three": (a, b, a), "wrong type": (a, 7)}
    keep = _define(ns, "g(Tensor(a!) x, int n) -> (Tensor, Tensor)", lambda x, n: results[returned])

    def expect(form, kind, message, bumped):
        assert kind is TypeError and re.search(error, message), (form, message)
        assert bumped == 0, form

    seen = _check_all_forms(_forms(ns, "g", ext, pair=True), expect)
    assert len({message for _, message, _ in seen.values()}) == 1
    del keep


def test_a_two_result_call_converts_a_list_result_the_same_way(ext, ns):
    a, b = tensor([0.0]), tensor([1.0])
    keep = _define(ns, "g(Tensor(a!) x, int n) -> (Tensor, Tensor)", lambda x, n: [a, b])

    def expect(form, kind, result, bumped):
        assert (kind, bumped) == ("ok", 1), form
        assert type(result) is tuple and result[0] is a and result[1] is b, form

    _check_all_forms(_forms(ns, "g", ext, pair=True), expect)
    del keep


@pytest.mark.parametrize("aliased", ["argument", "view of the argument"])
def test_an_output_aliasing_an_input_raises_the_same_error_and_bumps_nothing(ext, ns, aliased):
    def kernel(x, n):
        return x if aliased == "argument" else x[0:1]

    keep = _define(ns, "f(Tensor(a!) x, int n) -> Tensor", kernel, check_aliasing=True)
    relation = "is the same tensor as" if aliased == "argument" else "shares memory with"

    def expect(form, kind, message, bumped):
        assert kind is RuntimeError, (form, kind, message)
        assert f"{ns}::f: return 0 of the Python kernel registered at CPU {relation} argument 'x'" in message, form
        assert bumped == 0, form

    _check_all_forms(_forms(ns, "f", ext, pair=False), expect)
    del keep


def test_two_outputs_aliasing_each_other_raise_the_same_error(ext, ns):
    out = tensor([0.0])
    keep = _define(ns, "g(Tensor(a!) x, int n) -> (Tensor, Tensor)", lambda x, n: (out, out), check_aliasing=True)

    def expect(form, kind, message, bumped):
        assert kind is RuntimeError and "return 1 of the Python kernel registered at CPU is the same tensor as " \
            "return 0" in message, (form, message)
        assert bumped == 0, form

    _check_all_forms(_forms(ns, "g", ext, pair=True), expect)
    del keep


def test_an_exception_of_the_kernel_passes_through_unchanged_and_bumps_nothing(ext, ns):
    class Boom(Exception):
        pass

    def kernel(x, n):
        raise Boom("from the kernel")

    keep = _define(ns, "f(Tensor(a!) x, int n) -> Tensor", kernel)

    def expect(form, kind, message, bumped):
        assert (kind, message, bumped) == (Boom, "from the kernel", 0), form

    _check_all_forms(_forms(ns, "f", ext, pair=False), expect)
    del keep


def test_a_missing_kernel_raises_the_same_error_and_bumps_nothing(ext, ns):
    keep = _define(ns, "f(Tensor(a!) x, int n) -> Tensor")

    def expect(form, kind, message, bumped):
        assert kind is NotImplementedError, (form, kind)
        assert message.startswith(f"Could not run '{ns}::f' with arguments from the 'CPU' backend"), (form, message)
        assert bumped == 0, form

    seen = _check_all_forms(_forms(ns, "f", ext, pair=False), expect)
    assert len({message for _, message, _ in seen.values()}) == 1
    del keep


def test_a_cpp_kernel_sees_the_same_effects_from_python_and_from_cpp(ext, ns):
    # The target is a C++ kernel here (_C's identity test kernel): Python
    # callers convert their arguments to IValues, C++ callers call it directly.
    lib = _C._dispatch_library("FRAGMENT", ns, "")
    lib.def_schema_t_t("h(Tensor(a!) x) -> Tensor(a!)", "CPU")
    overload = getattr(opdispatch.ops, ns).h.default
    x = tensor([1.0])
    assert overload(x) is x and x._version == 1
    assert overload(x=x) is x and x._version == 2
    assert overload.redispatch(_C.DispatchKeySet(DK.CPU), x) is x and x._version == 3
    assert _C._dispatch_find_schema_or_throw(f"{ns}::h", "").call_boxed(x) is x and x._version == 4
    del lib
