"""The Python dispatcher: while it is on (enable_python_dispatcher /
_C._EnablePythonDispatcher), calls of an OpOverload consult its py_impl
kernels (per key, and per mode class while that mode is active) before the
C++ table, at every key the call passes — behaviours of PyTorch's
test/test_python_dispatch.py (TestPythonDispatcher) and of torch._ops'
Python dispatcher, checked against PyTorch 2.13. Deviations are noted in the
tests."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops
from opdispatch._dispatch.python import enable_python_dispatcher, no_python_dispatcher
from opdispatch.library import Library
from opdispatch.utils._python_dispatch import TorchDispatchMode

from _helpers import as_numpy, tensor

K = _C.DispatchKey


def pd_enabled() -> bool:
    return _C._dispatch_tls_is_dispatch_key_included(K.PythonDispatcher)


@pytest.fixture
def op(ns, lib):
    """ns::f(Tensor x) -> Tensor with a CPU kernel returning x * 2."""
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: opdispatch.mul(x, 2.0), "CPU")
    return getattr(ops, ns).f.default


# --- switching it on and off ----------------------------------------------------------------


def test_enable_and_disable_restore_the_previous_state():
    assert not pd_enabled()
    with enable_python_dispatcher():
        assert pd_enabled()
        with no_python_dispatcher():
            assert not pd_enabled()
            with enable_python_dispatcher():
                assert pd_enabled()
            assert not pd_enabled()
        assert pd_enabled()
    assert not pd_enabled()


def test_constructing_the_guard_enables_it_until_exit():
    # PyTorch's TestPythonDispatcher.test_basic: `r = torch._C._EnablePythonDispatcher()` turns it on.
    r = _C._EnablePythonDispatcher()
    try:
        assert pd_enabled()
        x = tensor([1.0, 2.0])
        x.requires_grad_(True)
        y = opdispatch.add(x, x)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    finally:
        r.__exit__(None, None, None)
    assert not pd_enabled()
    r.__exit__(None, None, None)  # a second exit changes nothing
    assert not pd_enabled()


def test_the_state_is_per_thread():
    seen = []
    with enable_python_dispatcher():
        t = threading.Thread(target=lambda: seen.append(pd_enabled()))
        t.start()
        t.join()
        assert pd_enabled()
    assert seen == [False]


def test_results_are_the_same_with_it_on():
    # PyTorch's TestPythonDispatcher.test_lstsq: a composite operator gives the same result.
    a = opdispatch.randn(4, 3)
    b = opdispatch.randn(3, 5)
    expected = opdispatch.log_softmax(opdispatch.matmul(a, b), 1)
    with enable_python_dispatcher():
        got = opdispatch.log_softmax(opdispatch.matmul(a, b), 1)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6)


def test_custom_ops_autograd_fake_tensors_and_make_fx_work_the_same_with_it_on(ns):
    from opdispatch.library import custom_op, register_autograd
    from opdispatch.tracing import make_fx

    @custom_op(f"{ns}::scale", mutates_args=())
    def scale(x: opdispatch.Tensor, s: float) -> opdispatch.Tensor:
        return opdispatch.mul(x, s)

    @scale.register_fake
    def _(x, s):
        return opdispatch.empty_like(x)

    register_autograd(f"{ns}::scale", lambda ctx, g: (opdispatch.mul(g, ctx.s), None),
                      setup_context=lambda ctx, inputs, output: setattr(ctx, "s", inputs[1]))

    def f(x):
        return scale(x + 1, 3.0).sum()

    def run():
        x = tensor([1.0, 2.0])
        x.requires_grad_(True)
        f(x).backward()
        return as_numpy(x.grad), make_fx(f, tracing_mode="fake")(tensor([1.0])).code

    off = run()
    with enable_python_dispatcher():
        on = run()
    np.testing.assert_allclose(on[0], off[0])
    assert on[1] == off[1] and f"opdispatch.ops.{ns}.scale.default" in on[1]


def test_the_key_is_only_there_while_enabled(op):
    # With it off, a call's key set never holds PythonDispatcher, so the fallback is never reached.
    assert _C._dispatch_has_backend_fallback(K.PythonDispatcher)
    assert not _C._dispatch_tls_local_include_set().has(K.PythonDispatcher)
    with enable_python_dispatcher():
        assert _C._dispatch_tls_local_include_set().has(K.PythonDispatcher)


# --- py_impl kernels per key ----------------------------------------------------------------


def test_py_impl_runs_exactly_while_the_python_dispatcher_is_on(op):
    log = []

    @op.py_impl(K.CPU)
    def f_cpu(x):
        log.append("py")
        with no_python_dispatcher():
            return op(x) + 100.0

    x = tensor([1.0, 2.0])
    np.testing.assert_allclose(op(x).numpy(), [2.0, 4.0])
    assert log == []
    with enable_python_dispatcher():
        np.testing.assert_allclose(op(x).numpy(), [102.0, 104.0])
    assert log == ["py"]
    np.testing.assert_allclose(op(x).numpy(), [2.0, 4.0])
    assert log == ["py"]


def test_py_impl_at_a_backend_runs_after_autograd(ns, lib, op):
    # PyTorch: a redispatch keeps PythonDispatcher (FULL_AFTER adds it), so the CPU py_impl
    # runs below the autograd kernel too.
    log = []
    op.py_impl(K.CPU)(lambda x: log.append("py") or opdispatch.mul(x, 3.0))
    lib.impl("f", lambda ks, x: log.append("autograd") or op.redispatch(ks & _C._after_autograd_keyset, x),
             "AutogradCPU", with_keyset=True)
    x = tensor([1.0])
    x.requires_grad_(True)
    with enable_python_dispatcher():
        np.testing.assert_allclose(as_numpy(op(x)), [3.0])
    assert log == ["autograd", "py"]


def test_py_impl_at_an_autograd_key(op):
    log = []

    @op.py_impl(K.AutogradCPU)
    def f_autograd(x):
        log.append("autograd")
        with _C._AutoDispatchBelowAutograd():
            return op(x)

    x = tensor([1.0])
    x.requires_grad_(True)
    with enable_python_dispatcher():
        np.testing.assert_allclose(as_numpy(op(x)), [2.0])
        # Deviation from PyTorch: a tensor that does not require grad has no autograd key
        # here (PyTorch's tensors always carry it), so the autograd kernel is not reached.
        np.testing.assert_allclose(op(tensor([1.0])).numpy(), [2.0])
    assert log == ["autograd"]


def test_py_impl_at_an_alias_key_serves_its_runtime_keys(ns, lib):
    lib.define("g(Tensor x) -> Tensor")
    g = getattr(ops, ns).g.default
    g.py_impl(K.CompositeExplicitAutograd)(lambda x: opdispatch.add(x, 1.0))
    with enable_python_dispatcher():
        np.testing.assert_allclose(g(tensor([1.0])).numpy(), [2.0])
        np.testing.assert_allclose(g(opdispatch.ones(1, device="meta")).shape, (1,))
    with pytest.raises(NotImplementedError, match=f"{ns}::g"):
        g(tensor([1.0]))  # off: the C++ table has no kernel


def test_a_cpp_backend_kernel_beats_a_py_impl_decomposition(ns, lib, op):
    # PyTorch: resolve_key(CPU) is CPU (a kernel at the key) before CompositeImplicitAutograd.
    lib.impl("f", lambda x: opdispatch.mul(x, 3.0), "CompositeImplicitAutograd")
    log = []
    op.py_impl(K.CompositeImplicitAutograd)(lambda x: log.append("cia") or opdispatch.mul(x, 5.0))
    with enable_python_dispatcher():
        np.testing.assert_allclose(op(tensor([1.0])).numpy(), [2.0])
    assert log == []
    np.testing.assert_allclose(op.decompose(tensor([1.0])).numpy(), [5.0])  # decompose prefers the py_impl one


def test_a_py_impl_decomposition_runs_where_the_table_has_none(ns, lib):
    lib.define("h(Tensor x) -> Tensor")
    lib.impl("h", lambda x: opdispatch.mul(x, 2.0), "CPU")
    h = getattr(ops, ns).h.default
    h.py_impl(K.CompositeImplicitAutograd)(lambda x: opdispatch.mul(x, 7.0))
    with enable_python_dispatcher():
        np.testing.assert_allclose(h(tensor([1.0])).numpy(), [2.0])  # CPU: the C++ kernel
        np.testing.assert_allclose(h(opdispatch.ones(1, device="meta")).shape, (1,))  # Meta: the decomposition


def test_nested_calls_in_a_py_impl_kernel_go_through_the_python_dispatcher(ns, lib, op):
    lib.define("outer(Tensor x) -> Tensor")
    lib.impl("outer", lambda x: op(x), "CPU")
    outer = getattr(ops, ns).outer.default
    op.py_impl(K.CPU)(lambda x: opdispatch.add(x, 10.0))
    outer.py_impl(K.CPU)(lambda x: op(op(x)))
    with enable_python_dispatcher():
        np.testing.assert_allclose(outer(tensor([1.0])).numpy(), [21.0])


def test_errors_of_a_py_impl_kernel_pass_through_and_bad_results_name_the_operator(ns, lib, op):
    class Boom(Exception):
        pass

    def boom(x):
        raise Boom("from the kernel")

    op.py_impl(K.CPU)(boom)
    lib.define("ret(Tensor x) -> Tensor")
    lib.impl("ret", lambda x: x, "CPU")
    ret = getattr(ops, ns).ret.default
    ret.py_impl(K.CPU)(lambda x: 3)
    with enable_python_dispatcher():
        with pytest.raises(Boom, match="from the kernel"):
            op(tensor([1.0]))
        with pytest.raises(TypeError, match=rf"{ns}::ret.*Python dispatcher's kernel for CPU"):
            ret(tensor([1.0]))


def test_a_missing_kernel_raises_the_dispatchers_error(ns, lib):
    lib.define("nok(Tensor x) -> Tensor")
    nok = getattr(ops, ns).nok.default
    with pytest.raises(NotImplementedError) as off:
        nok(tensor([1.0]))
    with enable_python_dispatcher(), pytest.raises(NotImplementedError) as on:
        nok(tensor([1.0]))
    assert str(on.value) == str(off.value) and f"{ns}::nok" in str(on.value)


def test_versions_of_mutated_arguments_bump_once(ns, lib):
    lib.define("inc(Tensor(a!) x) -> ()")
    lib.impl("inc", lambda x: x.add_(1.0) and None, "CPU")
    lib.define("inc_py(Tensor(a!) x) -> ()")
    lib.impl("inc_py", lambda x: None, "CPU")
    inc, inc_py = getattr(ops, ns).inc.default, getattr(ops, ns).inc_py.default
    inc_py.py_impl(K.CPU)(lambda x: None)
    z = tensor([0.0])
    v = z._version
    inc(z)
    off = z._version - v
    with enable_python_dispatcher():
        v = z._version
        inc(z)
        on = z._version - v
        v = z._version
        inc_py(z)
        on_py = z._version - v
    assert on == off and on_py == 1  # (the C++ kernel's own add_ bumps too)


# --- per mode class ---------------------------------------------------------------------------


class RecordingMode(TorchDispatchMode):
    def __init__(self, log):
        super().__init__()
        self.log = log

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append(("mode", str(func)))
        return func(*args, **(kwargs or {}))


def test_py_impl_for_a_mode_runs_with_the_mode_popped(ns, op):
    log = []

    @op.py_impl(RecordingMode)
    def f_in_mode(mode, x):
        log.append(("py_impl", type(mode).__name__, _C._len_torch_dispatch_stack()))
        return opdispatch.add(op(x), 1.0)

    x = tensor([1.0])
    with RecordingMode(log):
        np.testing.assert_allclose(op(x).numpy(), [2.0])  # off: the mode's __torch_dispatch__
        assert log == [("mode", f"{ns}.f.default")]
        log.clear()
        with enable_python_dispatcher():
            np.testing.assert_allclose(op(x).numpy(), [3.0])
        # PyTorch: the kernel gets the mode, popped; the calls it makes see no mode.
        assert log == [("py_impl", "RecordingMode", 0)]


def test_a_mode_without_a_py_impl_kernel_gets_the_call(op):
    log = []

    class Other(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append("other")
            return func(*args, **(kwargs or {}))

    op.py_impl(RecordingMode)(lambda mode, x: pytest.fail("not the active mode's class"))
    with Other(), enable_python_dispatcher():
        np.testing.assert_allclose(op(tensor([1.0])).numpy(), [2.0])
    assert log == ["other"]


# --- the cache ------------------------------------------------------------------------------


def test_the_cache_follows_registrations(ns, lib):
    lib.define("k(Tensor x) -> Tensor")
    lib.impl("k", lambda x: opdispatch.mul(x, 3.0), "CompositeImplicitAutograd")
    k = getattr(ops, ns).k.default
    x = tensor([1.0])
    with enable_python_dispatcher():
        np.testing.assert_allclose(k(x).numpy(), [3.0])
        assert k._dispatch_cache[K.CPU] == K.CPU  # no py_impl kernel: the C++ table's
        # Deviation from PyTorch (whose cache keeps the old answer until cleared by hand): a new
        # registration anywhere drops every cached answer.
        later = Library(ns, "FRAGMENT")
        later.impl("k", lambda x: opdispatch.mul(x, 7.0), "CPU")
        np.testing.assert_allclose(k(x).numpy(), [7.0])
        k.py_impl(K.CPU)(lambda x: opdispatch.mul(x, 11.0))
        assert K.CPU not in k._dispatch_cache  # py_impl clears the operator's cache
        np.testing.assert_allclose(k(x).numpy(), [11.0])
        later._destroy()
        np.testing.assert_allclose(k(x).numpy(), [11.0])
        del k.py_kernels[K.CPU]
        k._uncache_dispatch(K.CPU)
        np.testing.assert_allclose(k(x).numpy(), [3.0])


def test_get_dispatch_answers(ns, lib, op):
    op.py_impl(K.CompositeExplicitAutograd)(cea := lambda x: x)
    assert op._get_dispatch(K.CPU) == K.CPU  # the C++ CPU kernel is at the key itself
    assert op._get_dispatch(K.XLA) is cea
    assert op._get_dispatch(K.Python) == K.Python  # no py_impl(Mode): the Python key's fallback
    op.py_impl(RecordingMode)(lambda mode, x: x)
    assert callable(op._get_dispatch(K.Python))
