"""opdispatch.explain on built-in, custom (Library.define, custom_op) and C++
extension operators: the key set and its sources, the hops with the rule and
the registration site of each kernel, failures and their fixes; active modes,
tensor subclass arguments, register_torch_dispatch rules, the Python
dispatcher's py_impl kernels, and higher-order operators. Each explanation is
checked against the call itself where the call can run."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from opdispatch._dispatch.python import enable_python_dispatcher
from opdispatch._higher_order_ops import cond
from opdispatch._ops import HigherOrderOperator
from opdispatch._subclasses.fake_tensor import FakeTensorMode
from opdispatch.library import custom_op, register_torch_dispatch
from opdispatch.tracing import make_fx
from opdispatch.utils._python_dispatch import TorchDispatchMode

from _extension_build import EXAMPLE, cmake_build
from _helpers import keys


def hop_summary(e) -> list[tuple[str, str]]:
    return [(h.key, h.entry.rule) for h in e.hops]


def test_builtin_op_on_a_tensor_that_requires_grad():
    x = opdispatch.randn(2, requires_grad=True)
    e = opdispatch.explain(opdispatch.ops.od.add.Tensor, x, opdispatch.randn(2), alpha=2)
    assert e.op == "od::add.Tensor"
    assert e.schema == "od::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    sources = {k.key: (k.sources, k.removed) for k in e.keys}
    assert list(sources) == ["AutogradCPU", "ADInplaceOrView", "CPU"]  # highest priority first
    assert sources["CPU"] == (("self", "other"), "")
    assert sources["AutogradCPU"] == (("self",), "")
    assert sources["ADInplaceOrView"][1].startswith("skipped: a fallthrough kernel (C++ opdispatch/csrc/")
    assert hop_summary(e) == [("AutogradCPU", "autograd kernel"), ("CPU", "kernel")]
    assert e.hops[0].keyset == ("AutogradCPU", "CPU") and e.hops[1].keyset == ("CPU",)
    assert e.hops[0].entry.source == "Autograd" and e.hops[1].entry.source == "CPU"
    site = e.hops[1].entry.site
    file, line = site.rsplit(":", 1)
    assert file.endswith("opdispatch/_builtins/elementwise.py")
    assert "add.Tensor" in open(file).read().splitlines()[int(line) - 1]
    assert e.error is None and e.fix is None
    text = str(e)
    assert "Hop 1: AutogradCPU" in text and "Hop 2: CPU" in text
    assert f"kernel: Python opdispatch/_builtins/elementwise.py:{line}" in text  # the package's files as opdispatch/...
    assert "redispatches to the keys below autograd" in text and "computes the result" in text


def test_a_packet_resolves_the_overload_as_a_call_does():
    x = opdispatch.randn(2)
    assert opdispatch.explain(opdispatch.ops.od.add, x, 2.0).op == "od::add.Scalar"
    assert opdispatch.explain(opdispatch.ops.od.add, x, x).op == "od::add.Tensor"
    assert opdispatch.explain("od::add", x, x).op == "od::add.Tensor"
    assert opdispatch.explain("od::add.Scalar", x, 3).op == "od::add.Scalar"


def test_meta_tensors_and_thread_local_exclusion():
    m = opdispatch.empty(2, 3, device="meta")
    e = opdispatch.explain(opdispatch.ops.od.mm, m, opdispatch.empty(3, 4, device="meta"))
    assert hop_summary(e) == [("Meta", "kernel")]
    with _C._ExcludeDispatchKeyGuard(keys("Meta")):
        e = opdispatch.explain(opdispatch.ops.od.mm, m, opdispatch.empty(3, 4, device="meta"))
    assert e.tls_excluded == ("Meta",)
    assert [(k.key, k.removed) for k in e.keys] == [("Meta", "excluded by the TLS exclude set")]
    assert hop_summary(e) == [("Undefined", "missing")]
    assert "no kernel of od::mm serves Undefined" in e.error and "CompositeExplicitAutograd" in e.fix


def test_included_keys_are_listed_with_their_source(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "CPU")
    lib.impl("f", lambda x: x, "PrivateUse1")
    with _C._IncludeDispatchKeyGuard(keys("PrivateUse1")):
        e = opdispatch.explain(f"{ns}::f", opdispatch.randn(1))
    assert e.tls_included == ("PrivateUse1",)
    assert [(k.key, k.sources) for k in e.keys] == [("PrivateUse1", ("TLS include set",)), ("CPU", ("x",))]
    assert hop_summary(e) == [("PrivateUse1", "kernel")]


def test_a_call_without_tensors_uses_the_undefined_entry(lib, ns):
    lib.define("nothing(int n) -> Tensor")
    lib.impl("nothing", lambda n: opdispatch.zeros(n), "CompositeExplicitAutograd")
    e = opdispatch.explain(f"{ns}::nothing", 2)
    assert e.keys == () and hop_summary(e) == [("Undefined", "default backend kernel")]
    assert e.hops[0].entry.source == "CompositeExplicitAutograd"
    assert "Hop 1: Undefined  (no key left: the Undefined entry)" in str(e)


def test_a_factory_goes_through_its_backend_select_kernel():
    # BackendSelect is in every call's key set (Note [BackendSelect is included by default]); only a
    # factory has a kernel there, which picks the backend from the device argument.
    e = opdispatch.explain(opdispatch.ops.od.zeros, [2, 3])
    assert [(k.key, k.sources) for k in e.keys] == [("BackendSelect", ("default include set",))]
    assert hop_summary(e)[0] == ("BackendSelect", "kernel") and e.tls_included == ()


def test_a_failing_call_says_why_and_what_registration_would_serve_it(lib, ns):
    lib.define("g(Tensor x) -> Tensor")
    line = inspect.currentframe().f_lineno + 1
    lib.impl("g", lambda x: x, "CPU")
    m = opdispatch.empty(2, device="meta")
    e = opdispatch.explain(f"{ns}::g", m)
    assert hop_summary(e) == [("Meta", "missing")]
    assert e.hops[0].then == "the call raises NotImplementedError"
    assert e.error == (f"no kernel of {ns}::g serves Meta: none is registered at Meta, no alias-key kernel covers it "
                       f"and Meta has no backend fallback.")
    assert f"lib.impl('{ns}::g', fn, 'Meta')" in e.fix and "Its kernels are registered at: CPU." in e.fix
    with pytest.raises(NotImplementedError, match=f"'{ns}::g' with arguments from the 'Meta' backend"):
        opdispatch.ops.__getattr__(ns).g(m)  # the call fails as explained
    assert e.hops == opdispatch.explain(f"{ns}::g", m).hops  # explaining changed nothing
    assert opdispatch.explain(f"{ns}::g", opdispatch.randn(2)).hops[0].entry.site == f"{__file__}:{line}"


def test_alias_kernels_name_their_alias_key(lib, ns):
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("h", lambda x: x, "CompositeExplicitAutograd")
    lib.define("d(Tensor x) -> Tensor")
    lib.impl("d", lambda x: x, "CompositeImplicitAutograd")
    x = opdispatch.randn(1, requires_grad=True)
    e = opdispatch.explain(f"{ns}::h", x)
    assert hop_summary(e) == [("AutogradCPU", "backend fallback"), ("CPU", "default backend kernel")]
    assert "the CompositeExplicitAutograd kernel, which serves every backend key" in str(e)
    e = opdispatch.explain(f"{ns}::d", x)
    assert hop_summary(e) == [("AutogradCPU", "math kernel")]  # decomposes: no second hop
    assert e.hops[0].entry.source == "CompositeImplicitAutograd" and "decomposes" in e.hops[0].then


def test_ambiguous_autogradother_is_a_failure_with_a_fix(lib, ns):
    lib.define("amb(Tensor x) -> Tensor")
    lib.impl("amb", lambda x: x, "CompositeImplicitAutograd")
    lib.impl("amb", lambda x: x, "SparseCPU")
    entry = opdispatch._introspection.table_entries(f"{ns}::amb")["AutogradOther"]
    assert entry.rule == "ambiguous autogradother"
    t = _C.empty((1,), device="cpu")
    with _C._IncludeDispatchKeyGuard(keys("AutogradOther")):
        e = opdispatch.explain(f"{ns}::amb", t)
    assert hop_summary(e) == [("AutogradOther", "ambiguous autogradother")]
    assert e.error and "register a kernel at AutogradOther or at Autograd" in e.fix


def test_custom_op_with_fake_kernel_and_autograd(ns):
    @custom_op(f"{ns}::twice", mutates_args=())
    def twice(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return opdispatch.from_numpy(x.numpy() * 2)

    @twice.register_fake
    def _(x):
        return opdispatch.empty_like(x)

    twice.register_autograd(lambda ctx, grad: grad * 2)
    x = opdispatch.randn(2, requires_grad=True)
    e = opdispatch.explain(twice, x)
    assert e.op == f"{ns}::twice"
    assert [h.key for h in e.hops] == ["AutogradCPU", "CPU"]
    assert e.hops[0].entry.source == "Autograd"
    assert e.hops[1].entry.source in ("CPU", "CompositeExplicitAutograd")  # custom_op's device-agnostic kernel
    assert hop_summary(opdispatch.explain(twice, opdispatch.empty(2, device="meta")))[0][0] == "Meta"
    np.testing.assert_allclose(twice(x).detach().numpy(), x.detach().numpy() * 2)


def test_cpp_extension_ops_show_their_cpp_kernels():
    opdispatch.ops.load_library(cmake_build())
    x = opdispatch.randn(3, requires_grad=True)
    e = opdispatch.explain(opdispatch.ops.myext.relu_, x)
    assert hop_summary(e) == [("AutogradCPU", "backend fallback"), ("ADInplaceOrView", "kernel"), ("CPU", "kernel")]
    assert e.hops[1].entry.origin.startswith(f"C++ {EXAMPLE / 'inplace_or_view.cpp'}:")
    assert e.hops[1].then == "redispatches to the keys below ADInplaceOrView"
    assert e.hops[2].entry.origin.startswith(f"C++ {EXAMPLE / 'cpu_kernels.cpp'}:")
    # The autograd layer's fallback (a default registration replacing the core's, Note [Default fallbacks]).
    assert e.hops[0].entry.site.rpartition(":")[0] == opdispatch._library.autograd.__file__
    e = opdispatch.explain(opdispatch.ops.myext.call_op, x, "od::neg")
    assert hop_summary(e) == [("AutogradCPU", "math kernel")]
    assert e.hops[0].entry.origin.startswith(f"C++ {EXAMPLE / 'call_op.cpp'}:")


def test_bad_arguments_raise_what_the_call_would():
    x = opdispatch.randn(2)
    with pytest.raises(TypeError) as explained:
        opdispatch.explain(opdispatch.ops.od.mm, x, "not a tensor")
    with pytest.raises(TypeError) as called:
        opdispatch.ops.od.mm(x, "not a tensor")
    assert str(explained.value) == str(called.value)
    with pytest.raises(TypeError, match="explain: expected an operator"):
        opdispatch.explain(42, x)
    with pytest.raises(RuntimeError):
        opdispatch.explain("od::no_such_op.default", x)


# --- the Python key: modes, subclasses, register_torch_dispatch ---------------------------------------------------

K = _C.DispatchKey


def site_of(fn) -> str:
    fn = getattr(fn, "__func__", fn)
    return f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"


class Recording(TorchDispatchMode):
    """Forwards every call, recording (its name, func) in ``log``."""

    def __init__(self, name: str, log: list) -> None:
        super().__init__()
        self.name, self.log = name, log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, str(func)))
        return func(*args, **(kwargs or {}))


class Wrapper(opdispatch.Tensor):
    """A wrapper subclass: metadata only; unwraps, calls func, wraps."""

    log: list = []

    @staticmethod
    def __new__(cls, elem):
        r = opdispatch.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.log.append((cls.__name__, str(func)))
        out = func(*[a.elem if isinstance(a, Wrapper) else a for a in args], **(kwargs or {}))
        return Wrapper(out)


class Shared(opdispatch.Tensor):
    """A _make_subclass subclass (shares the data) that lets the next handler try."""

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        Wrapper.log.append((cls.__name__, str(func)))
        return NotImplemented


class SharedChild(Shared):
    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        Wrapper.log.append((cls.__name__, str(func)))
        with _C._DisableTorchDispatch():
            return func(*[opdispatch.Tensor._make_subclass(opdispatch.Tensor, a) if isinstance(a, Shared) else a
                          for a in args])


def python_hop(e):
    (hop,) = [h for h in e.hops if h.key == "Python"]
    return hop


def test_an_active_mode_its_handler_and_the_hops_around_it():
    log: list = []
    x = opdispatch.randn(2, requires_grad=True)
    with Recording("outer", log):
        e = opdispatch.explain(opdispatch.ops.od.mul.Tensor, x, x)
        x * x
    sources = {k.key: k.sources for k in e.keys}
    assert sources["Python"] == ("TLS include set: the dispatch mode stack (Recording)",)
    assert sources["PythonTLSSnapshot"] == sources["Python"] and sources["AutogradCPU"] == ("self", "other")
    # The snapshot first, then autograd above the Python key, then the mode, then the kernel below it.
    assert hop_summary(e) == [("PythonTLSSnapshot", "backend fallback"), ("AutogradCPU", "autograd kernel"),
                              ("Python", "backend fallback"), ("CPU", "kernel")]
    (handler,) = python_hop(e).handlers
    assert (handler.kind, handler.name) == ("mode", "Recording.__torch_dispatch__")
    assert handler.site == site_of(Recording.__torch_dispatch__)
    assert "innermost mode" in handler.note and "popped" in handler.note
    assert "PythonCall" not in str(e) and "Python handlers, in the order they are asked:" in str(e)
    assert log == [("outer", "od.mul.Tensor")]  # the call reaches the mode the explanation names
    assert e.error is None


def test_nested_modes_are_asked_innermost_first():
    log: list = []
    with Recording("outer", log), Recording("inner", log):
        e = opdispatch.explain(opdispatch.ops.od.neg.default, opdispatch.randn(2))
        opdispatch.ops.od.neg(opdispatch.randn(2))
    handlers = python_hop(e).handlers
    assert [h.kind for h in handlers] == ["mode", "mode"]
    assert "the innermost mode" in handlers[0].note and "asked when the modes above it call func" in handlers[1].note
    assert [name for name, func in log if func == "od.neg.default"] == ["inner", "outer"]


def test_subclass_arguments_in_pytorchs_order():
    Wrapper.log.clear()
    base = Shared._make_subclass(Shared, opdispatch.ones(2))
    child = SharedChild._make_subclass(SharedChild, opdispatch.ones(2))
    e = opdispatch.explain(opdispatch.ops.od.add.Tensor, base, child)
    sources = {k.key: k.sources for k in e.keys}
    assert sources["Python"] == ("self (class Shared)", "other (class SharedChild)")
    handlers = python_hop(e).handlers
    # A subclass before its base, whatever the argument order (PyTorch: append_overloaded_arg).
    assert [(h.kind, h.name) for h in handlers] == [("subclass", "SharedChild.__torch_dispatch__"),
                                                    ("subclass", "Shared.__torch_dispatch__")]
    assert handlers[0].note.startswith("argument other;") and "append_overloaded_arg" in handlers[0].note
    assert handlers[0].site == site_of(SharedChild.__torch_dispatch__)
    opdispatch.ops.od.add.Tensor(base, child)
    assert [name for name, _ in Wrapper.log] == ["SharedChild"]  # the first handler answered

    Wrapper.log.clear()
    w = Wrapper(opdispatch.randn(2))
    e = opdispatch.explain(opdispatch.ops.od.mul.Tensor, opdispatch.randn(2), w)
    assert [(h.kind, h.note.split(";")[0]) for h in python_hop(e).handlers] == [("subclass", "argument other")]
    assert [h.key for h in e.hops] == ["PythonTLSSnapshot", "Python", "CPU"]
    assert type(opdispatch.ops.od.mul.Tensor(opdispatch.randn(2), w)) is Wrapper and Wrapper.log


def test_modes_come_before_subclasses_and_fake_tensor_mode_names_its_slot():
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(opdispatch.randn(3))
        e = opdispatch.explain(opdispatch.ops.od.relu.default, fake)
        assert type(opdispatch.ops.od.relu(fake)).__name__ == "FakeTensor"
    sources = {k.key: k.sources for k in e.keys}
    assert sources["Python"] == ("self (class FakeTensor)",
                                 "TLS include set: the dispatch mode stack (FakeTensorMode [_TorchDispatchModeKey.FAKE])")
    handlers = python_hop(e).handlers
    assert [(h.kind, h.name) for h in handlers] == [("mode", "FakeTensorMode.__torch_dispatch__"),
                                                    ("subclass", "FakeTensor.__torch_dispatch__")]
    assert "_TorchDispatchModeKey.FAKE slot" in handlers[0].note


def test_register_torch_dispatch_rules_are_named_before_the_class_handler(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x.clone(), "CPU")
    calls = []

    def rule_for_wrapper(cls, func, types, args, kwargs):
        calls.append("wrapper rule")
        return NotImplemented

    def rule_for_mode(mode, func, types, args, kwargs):
        calls.append("mode rule")
        return NotImplemented if types else func(*args, **kwargs)  # the subclasses first, then the plain call

    register_torch_dispatch(f"{ns}::f", Wrapper, rule_for_wrapper, lib=lib)
    register_torch_dispatch(f"{ns}::f", Recording, rule_for_mode, lib=lib)
    w = Wrapper(opdispatch.randn(2))
    with Recording("m", []):
        e = opdispatch.explain(f"{ns}::f", w)
        getattr(opdispatch.ops, ns).f(w)
    handlers = python_hop(e).handlers
    assert [h.kind for h in handlers] == ["mode rule", "subclass rule", "subclass"]
    assert handlers[0].name == f"register_torch_dispatch('{ns}::f', Recording)"
    assert handlers[0].site == site_of(rule_for_mode) and "replaces its __torch_dispatch__" in handlers[0].note
    assert handlers[1].site == site_of(rule_for_wrapper)
    assert calls[:2] == ["mode rule", "wrapper rule"]  # the order the explanation gives


def test_a_cpp_extension_op_on_a_subclass_under_a_mode():
    opdispatch.ops.load_library(cmake_build())
    w = Wrapper(opdispatch.randn(2))
    with Recording("m", []):
        e = opdispatch.explain(opdispatch.ops.myext.fma, w, opdispatch.randn(2), opdispatch.randn(2))
    assert [h.kind for h in python_hop(e).handlers] == ["mode", "subclass"]
    last = e.hops[-1]
    assert last.key == "CPU" and last.entry.origin.startswith(f"C++ {EXAMPLE / 'cpu_kernels.cpp'}:")


def test_python_key_without_a_handler():
    with _C._IncludeDispatchKeyGuard(keys("Python")):
        e = opdispatch.explain(opdispatch.ops.od.neg.default, opdispatch.randn(2))
    hop = python_hop(e)
    assert hop.handlers == () and "no mode is active" in hop.then
    assert [h.key for h in e.hops] == ["Python", "CPU"]


# --- the Python dispatcher -------------------------------------------------------------------------------------


def test_py_impl_kernel_chosen_when_the_python_dispatcher_is_on(lib, ns):
    lib.define("g(Tensor x) -> Tensor")
    op = getattr(opdispatch.ops, ns).g.default
    lib.impl("g", lambda x: x.clone(), "Meta")
    lib.impl("g", lambda ks, x: op.redispatch(ks & _C._after_autograd_keyset, x), "Autograd", with_keyset=True)
    ran = []

    @op.py_impl(K.CompositeExplicitAutograd)
    def g_py(x):
        ran.append("py_impl")
        return opdispatch.empty_like(x)

    x = opdispatch.randn(2, requires_grad=True)
    off = opdispatch.explain(op, x)  # py_impl kernels are data: the C++ table has nothing for CPU
    assert hop_summary(off) == [("AutogradCPU", "autograd kernel"), ("CPU", "missing")] and off.error
    with enable_python_dispatcher():
        e = opdispatch.explain(op, x)
        op(x)
        op(x.detach())
    assert ran == ["py_impl", "py_impl"]
    sources = {k.key: k.sources for k in e.keys}
    assert sources["PythonDispatcher"] == ("TLS include set: the Python dispatcher is on (enable_python_dispatcher)",)
    assert [h.key for h in e.hops] == ["PythonDispatcher", "AutogradCPU", "PythonDispatcher"]
    first, _, last = e.hops
    assert [(h.kind, h.name) for h in first.handlers] == [("C++ kernel", "AutogradCPU")]  # a C++ kernel at the key wins
    assert "comes back here" in first.then
    (handler,) = last.handlers
    assert (handler.kind, handler.name, handler.site) == ("py_impl kernel", "test_py_impl_kernel_chosen_when_the_"
                                                          "python_dispatcher_is_on.<locals>.g_py", site_of(g_py))
    assert handler.note == f"py_impl(CompositeExplicitAutograd) of {ns}::g, which resolve_key picks for CPU"
    assert e.error is None


def test_py_impl_mode_kernel_under_the_python_dispatcher():
    op = opdispatch.ops.od.neg.default
    ran = []

    def neg_for_recording(mode, x):
        ran.append(type(mode).__name__)
        return op(x)

    op.py_impl(Recording)(neg_for_recording)
    try:
        with enable_python_dispatcher(), Recording("m", []):
            e = opdispatch.explain(op, opdispatch.randn(2))
            op(opdispatch.randn(2))
    finally:
        del op.python_key_table[Recording]
        op._dispatch_cache.clear()
    assert ran == ["Recording"]
    dispatcher_hops = [h for h in e.hops if h.key == "PythonDispatcher"]
    assert [h.handlers[0].name.split(".")[-1] for h in dispatcher_hops] == ["PythonTLSSnapshot", "neg_for_recording"]
    handler = dispatcher_hops[1].handlers[0]  # for the Python key
    assert handler.kind == "py_impl mode kernel" and handler.site == site_of(neg_for_recording)
    assert "for the innermost mode" in handler.note


# --- higher-order operators -------------------------------------------------------------------------------------


def branches():
    return (lambda x: x.sin(), lambda x: x.cos())


def test_cond_eager_with_autograd():
    x = opdispatch.randn(2, requires_grad=True)
    e = opdispatch.explain(opdispatch.ops.higher_order.cond, opdispatch.tensor(True), *branches(), (x,))
    assert e.op == "higher_order::cond" and "HigherOrderOperator" in e.schema
    sources = {k.key: (k.sources, k.removed) for k in e.keys}
    assert sources["CPU"] == (("pred", "operands[0]"), "")
    assert sources["ADInplaceOrView"][1].startswith("skipped: a fallthrough of the higher-order operator")
    assert hop_summary(e) == [("AutogradCPU", "autograd kernel"), ("CPU", "default backend kernel")]
    assert e.hops[0].entry.kernel == "_cond_autograd"  # the function py_autograd_impl registered
    assert e.hops[1].entry.site.startswith(f"{inspect.getsourcefile(cond)}:")
    assert e.hops[1].entry.source == "CompositeExplicitAutograd"
    assert opdispatch.explain("higher_order::cond", True, *branches(), (x,)).hops == e.hops[:1] + e.hops[1:]


def test_cond_under_fake_tensor_mode_and_make_fx():
    with FakeTensorMode():
        e = opdispatch.explain(opdispatch.ops.higher_order.cond, opdispatch.tensor(True), *branches(),
                               (opdispatch.randn(2),))
    handlers = python_hop(e).handlers
    assert [(h.kind, h.name) for h in handlers] == [("mode kernel", "_cond_fake"), ("mode kernel", "_cond_fake")]
    assert "innermost mode (FakeTensorMode" in handlers[0].note
    assert "the kernel of the mode the tensor belongs to" in handlers[1].note
    seen = []

    def f(x, p):
        seen.append(opdispatch.explain(opdispatch.ops.higher_order.cond, p, *branches(), (x,)))
        return cond(p, *branches(), (x,))

    g = make_fx(f)(opdispatch.zeros(2), opdispatch.tensor(True))
    assert "higher_order.cond" in g.code
    (handler,) = python_hop(seen[0]).handlers
    assert (handler.kind, handler.name) == ("mode kernel", "_cond_trace")
    assert "ProxyTorchDispatchMode [_TorchDispatchModeKey.PROXY]" in handler.note


def test_higher_order_operator_without_a_rule_for_the_mode_fails_as_explained():
    with Recording("m", []):
        e = opdispatch.explain(opdispatch.ops.higher_order.cond, True, *branches(), (opdispatch.randn(2),))
        with pytest.raises(NotImplementedError, match="no rule registered for HigherOrderOperator cond and mode"):
            cond(True, *branches(), (opdispatch.randn(2),))
    assert [h.kind for h in python_hop(e).handlers] == ["no rule"]
    assert e.error.startswith("there is no rule for higher_order::cond and Recording")
    assert "cond.py_impl(Recording)" in e.fix and "supports_higher_order_operators" in e.fix


def test_a_custom_higher_order_operator_per_key_and_per_subclass():
    hop = HigherOrderOperator("explain_twice")
    try:
        @hop.py_impl(K.CPU)
        def twice_cpu(x):
            return x * 2

        @hop.py_impl(Wrapper)
        def twice_wrapper(x):
            return Wrapper(hop(x.elem))

        e = opdispatch.explain(hop, opdispatch.randn(2))
        assert hop_summary(e) == [("CPU", "kernel")] and e.hops[0].entry.site == site_of(twice_cpu)
        w = Wrapper(opdispatch.randn(2))
        e = opdispatch.explain(hop, w)
        assert [h.key for h in e.hops] == ["Python"]
        assert [(h.kind, h.site) for h in python_hop(e).handlers] == [("subclass kernel", site_of(twice_wrapper))]
        assert type(hop(w)) is Wrapper
        e = opdispatch.explain(hop, opdispatch.empty(2, device="meta"))
        assert hop_summary(e) == [("Meta", "missing")]
        assert "no py_impl kernel at Meta" in e.error and "explain_twice.py_impl(DispatchKey.Meta)" in e.fix
        with pytest.raises(NotImplementedError, match="explain_twice at dispatch key Meta"):
            hop(opdispatch.empty(2, device="meta"))
    finally:
        del opdispatch._ops._higher_order_ops["explain_twice"]


def test_command_line_explains_modes_and_higher_order_operators():
    import contextlib
    import io

    from opdispatch.__main__ import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain", "higher_order::cond", "tensor(True)", "lambda x: x.sin()", "lambda x: x.cos()",
                     "(randn(2),)", "--fake"]) == 0
    assert "mode kernel: _cond_fake" in out.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["explain", "od::neg", "randn(2)", "--python-dispatcher"]) == 0
    assert "C++ kernel: CPU -- no py_impl kernel of od::neg serves CPU" in out.getvalue()
