"""The Python key: dispatch modes (TorchDispatchMode, the per-thread mode
stack, infrastructure slots), tensor subclasses with __torch_dispatch__
(_make_subclass, _make_wrapper_subclass), their ordering and NotImplemented
handling, register_torch_dispatch, _DisableTorchDispatch,
_RestorePythonTLSSnapshot — behaviours of PyTorch's test/test_python_dispatch.py
(and test_custom_ops.py's register_torch_dispatch tests), rewritten for
opdispatch and checked against PyTorch 2.13. Deviations are noted in the tests.
"""
from __future__ import annotations

import abc
import gc
import threading
import weakref

import numpy as np
import pytest

import opdispatch
from opdispatch import Tensor, _C, ops
from opdispatch.library import Library, custom_op, register_torch_dispatch
from opdispatch.utils._python_dispatch import (
    BaseTorchDispatchMode,
    TorchDispatchMode,
    _disable_current_modes,
    _get_current_dispatch_mode,
    _get_current_dispatch_mode_stack,
    _pop_mode_temporarily,
    is_in_torch_dispatch_mode,
)
from opdispatch.utils._pytree import tree_map_only

K = _C.DispatchKey
PYTHON_KEYS = _C.DispatchKeySet(K.Python) | _C.DispatchKeySet(K.PythonTLSSnapshot)
EMPTY = PYTHON_KEYS - PYTHON_KEYS


class LoggingMode(TorchDispatchMode):
    """Records (op name, arg types, kwargs) and runs the call unchanged."""

    def __init__(self, log=None, name="log"):
        super().__init__()
        self.log = [] if log is None else log
        self.name = name

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.log.append((self.name, str(func), types, kwargs))
        return func(*args, **(kwargs or {}))


class WrapperTensor(Tensor):
    """A wrapper subclass: metadata only, the data in ``elem``."""

    @staticmethod
    def __new__(cls, elem, requires_grad=False):
        r = Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(),
                                          storage_offset=elem.storage_offset(), dtype=elem.dtype,
                                          device=elem.device, requires_grad=requires_grad)
        r.elem = elem
        return r

    calls: list = []

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(str(func))
        unwrap = lambda t: t.elem  # noqa: E731
        out = func(*tree_map_only(WrapperTensor, unwrap, args), **tree_map_only(WrapperTensor, unwrap, kwargs or {}))
        return tree_map_only(Tensor, lambda t: WrapperTensor(t) if not isinstance(t, WrapperTensor) else t, out)


@pytest.fixture
def ns(request):
    return "pd_" + request.node.name.replace("[", "_").replace("]", "").replace("-", "_")[:40]


@pytest.fixture
def lib(ns):
    lib = Library(ns, "DEF")
    yield lib
    lib._destroy()


# --- modes ----------------------------------------------------------------------------------------


def test_logging_mode_sees_each_call_with_its_overload_and_arguments():
    x = opdispatch.ones(2)
    with LoggingMode() as m:
        y = x + x
        z = y.mul(2.0)
        opdispatch.empty(3)
    assert [e[1] for e in m.log] == ["od.add.Tensor", "od.mul.Scalar", "od.empty.memory_format"]
    assert all(e[2] == () and e[3] == {} for e in m.log)  # no subclasses: types is ()
    assert z.tolist() == [4.0, 4.0] and type(z) is Tensor


def test_arange_calls_the_overload_its_arguments_name():
    # PyTorch 2.13 logs aten.arange.default (3.0,), .start (1, 4), .start_step (1, 4) (the default step left out),
    # .start_step (0, 6, 2), .default (4,) and .start (1, 4) for these calls, and refuses a step without an end.
    with LoggingMode() as m:
        opdispatch.arange(3.0)
        opdispatch.arange(1, 4)
        opdispatch.arange(1, 4, 1)
        opdispatch.arange(0, 6, step=2)
        opdispatch.arange(end=4)
        opdispatch.arange(start=1, end=4)
    assert [e[1] for e in m.log] == ["od.arange.default", "od.arange.start", "od.arange.start_step",
                                     "od.arange.start_step", "od.arange.default", "od.arange.start"]
    assert opdispatch.arange(3.0).tolist() == [0.0, 1.0, 2.0] and opdispatch.arange(1, 4).tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match="arange"):
        opdispatch.arange(5, step=2)


def test_func_is_the_opoverload_and_kwargs_drop_defaults():
    x = opdispatch.ones(2)
    seen = []

    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func, args, kwargs))
            return func(*args, **kwargs)

    with M():
        opdispatch.ops.od.add.Tensor(x, x, alpha=1)
        opdispatch.ops.od.add.Tensor(x, x, alpha=2)
    assert seen[0][0] is ops.od.add.Tensor and seen[0][1] == (x, x)
    # PyTorch's convention: a keyword-only argument equal to its default is left out.
    assert seen[0][2] == {} and seen[1][2] == {"alpha": 2}
    assert all(a is x for a in seen[0][1])  # the caller's own objects


def test_mode_covers_every_kind_of_operator(lib, ns):
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")

    @custom_op(f"{ns}::thrice", mutates_args=())
    def thrice(x: Tensor) -> Tensor:
        return x * 3

    cpp = _C._dispatch_library("FRAGMENT", ns, "")
    cpp.def_schema_t_t(f"{ns}::ident(Tensor x) -> Tensor", "CPU", "", "identity")
    x = opdispatch.ones(2)
    with LoggingMode() as m:
        getattr(ops, ns).twice(x)
        thrice(x)
        getattr(ops, ns).ident(x)
    # twice's and thrice's kernels call od::mul, which the mode does not see: it is popped meanwhile.
    assert [e[1] for e in m.log] == [f"{ns}.twice.default", f"{ns}.thrice.default", f"{ns}.ident.default"]
    cpp.reset()


def test_handlers_get_fresh_arguments_unless_none_kept_the_last(lib, ns):
    # Note [Reused handler arguments]: a call may reuse the args tuple and kwargs dict of an earlier call whose
    # handler kept neither; what a handler keeps is never refilled, and what one fills never reaches the next.
    lib.define("twice(Tensor x, *, float scale=1.0) -> Tensor")
    lib.impl("twice", lambda x, *, scale=1.0: x * (2 * scale), "CPU")
    op = getattr(ops, ns).twice.default
    kept = []

    class Keeper(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kept.append((args, kwargs))
            return func(*args, **kwargs)

    class Filler(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            assert kwargs == {} or set(kwargs) == {"scale"}, kwargs
            out = func(*args, **kwargs)
            kwargs["filled"] = True  # dropped with the dict: the next call must not see it
            return out

    inputs = [opdispatch.tensor([float(i)]) for i in range(4)]
    with Filler():
        for x in inputs:
            assert op(x).tolist() == [2 * x.item()]
    with Keeper():
        outs = [op(x) for x in inputs] + [op(inputs[0], scale=3.0)]
    with Filler():
        for x in inputs:
            op(x)
    assert [a[0] for a, _ in kept] == inputs + [inputs[0]]
    assert [k for _, k in kept] == [{}] * 4 + [{"scale": 3.0}]
    assert [o.tolist() for o in outs] == [[0.0], [2.0], [4.0], [6.0], [0.0]]


def test_nested_handler_calls_leave_the_outer_arguments_alone():
    # An inner wrapper's handler runs while the outer handler holds its args: each call has its own.
    class Nest(WrapperTensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            before = args
            first = args[0]
            out = func(*[a.elem if isinstance(a, Nest) else a for a in args], **kwargs)
            assert args is before and args[0] is first and len(args) == len(before)
            return Nest(out)

    x = Nest(Nest(opdispatch.tensor([1.0, 2.0])))
    for _ in range(3):
        y = x * 3
        assert type(y) is Nest and type(y.elem) is Nest and y.elem.elem.tolist() == [3.0, 6.0]


def test_python_keys_are_included_only_while_a_mode_is_set():
    assert _C._dispatch_tls_local_include_set() & PYTHON_KEYS == EMPTY
    with LoggingMode():
        assert _C._dispatch_tls_local_include_set() & PYTHON_KEYS == PYTHON_KEYS
        with pytest.raises(ZeroDivisionError):
            with LoggingMode():
                1 / 0
        assert _C._len_torch_dispatch_stack() == 1
    assert _C._dispatch_tls_local_include_set() & PYTHON_KEYS == EMPTY
    assert _C._len_torch_dispatch_stack() == 0
    # A plain tensor never carries the keys: calls without a mode do not visit the Python key.
    assert not _C._dispatch_keys(opdispatch.ones(1)).has(K.Python)


def test_nested_modes_run_innermost_first_and_pass_calls_outward():
    log = []
    x = opdispatch.ones(2)
    with LoggingMode(log, "outer") as outer, LoggingMode(log, "inner") as inner:
        assert _get_current_dispatch_mode() is inner
        assert _get_current_dispatch_mode_stack() == [outer, inner]
        x.neg()
    assert [(e[0], e[1]) for e in log] == [("inner", "od.neg.default"), ("outer", "od.neg.default")]


def test_a_mode_runs_with_itself_popped():
    seen = []

    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((_C._len_torch_dispatch_stack(), _get_current_dispatch_mode(),
                         _C._dispatch_tls_is_dispatch_key_included(K.Python)))
            return func(*args, **kwargs)

    x = opdispatch.ones(1)
    with LoggingMode() as outer:
        with M():
            x.neg()
    assert seen == [(1, outer, True)]
    with M():
        x.neg()
    assert seen[1] == (0, None, False)


def test_the_same_mode_entered_twice_sees_each_call_twice():
    x = opdispatch.ones(2)
    m = LoggingMode()
    with m:
        with m:
            x.neg()
    assert [e[1] for e in m.log] == ["od.neg.default", "od.neg.default"]


def test_super_torch_dispatch_runs_the_call_below_the_python_key():
    class S(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return super().__torch_dispatch__(func, types, args, kwargs)

    out = Tensor._make_subclass(S, opdispatch.ones(2)).neg()
    assert type(out) is Tensor and out.tolist() == [-1.0, -1.0]
    assert _C._disabled_torch_dispatch_impl(ops.od.neg.default, (), [opdispatch.ones(1)], {}).tolist() == [-1.0]


def test_a_mode_can_reenter_itself_for_the_calls_it_makes():
    log = []

    class Decomposing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            log.append(str(func))
            if func is ops.od.sub.Tensor:
                with self:  # PyTorch: "use the context manager self to make the API self-referential"
                    return args[0] + args[1].neg()
            return func(*args, **kwargs)

    a, b = opdispatch.tensor([5.0]), opdispatch.tensor([2.0])
    with Decomposing():
        assert (a - b).tolist() == [3.0]
    assert log == ["od.sub.Tensor", "od.neg.default", "od.add.Tensor"]


def test_mode_returning_notimplemented_without_subclasses_is_a_typeerror():
    class N(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    x = opdispatch.ones(1)
    with pytest.raises(TypeError, match=r"Multiple dispatch failed for 'opdispatch.ops.od.neg.default'; all "
                                        r"__torch_dispatch__ handlers returned NotImplemented:\n\n  - mode object"):
        with N():
            x.neg()
    assert _C._len_torch_dispatch_stack() == 0


def test_classmethod_mode_is_rejected_as_in_pytorch():
    class C(TorchDispatchMode):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return func(*args, **kwargs)

    x = opdispatch.ones(1)
    with pytest.raises(RuntimeError, match="Defining your mode's `__torch_dispatch__` as a classmethod is not "
                                           "supported, please make it a plain method"):
        with C():
            x.neg()


def test_handler_exceptions_pass_through_unchanged():
    class Boom(Exception):
        pass

    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            raise Boom("from the mode")

    x = opdispatch.ones(1)
    with pytest.raises(Boom, match="from the mode"):
        with M():
            x.neg()
    assert _C._len_torch_dispatch_stack() == 0
    assert not _C._dispatch_tls_is_dispatch_key_excluded(K.AutogradCPU)  # the exclusions were undone


def test_bad_results_name_the_operator_and_the_handler():
    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return "arf"

    # PyTorch raises RuntimeError("Unable to cast ..."); opdispatch's result check raises TypeError.
    x = opdispatch.ones(1)
    with pytest.raises(TypeError, match=r"od::neg: the __torch_dispatch__ handler returned str for return 0"):
        with M():
            x.neg()


def test_list_returns_may_be_lists_or_tuples(lib, ns):
    lib.define("split2(Tensor x) -> Tensor[]")
    lib.impl("split2", lambda x: [x.clone(), x.clone()], "CPU")
    for seq in (list, tuple):
        class M(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                return seq(func(*args, **kwargs))

        x = opdispatch.ones(2)
        with M():
            out = getattr(ops, ns).split2(x)
        assert isinstance(out, list) and len(out) == 2


def test_mode_sees_autograd_below_it_and_the_backward_calls():
    x = opdispatch.tensor([3.0], requires_grad=True)
    with LoggingMode() as m:
        y = x * x
        assert y.grad_fn is not None  # autograd ran above the Python key
        y.backward()
    assert x.grad.tolist() == [6.0]
    names = [e[1] for e in m.log]
    assert names[0] == "od.mul.Tensor" and names.count("od.mul.Tensor") >= 3  # forward + the two products


def test_restore_python_tls_snapshot_gives_the_state_on_entry():
    seen = []

    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(_C._dispatch_tls_is_dispatch_key_excluded(K.AutogradCPU))
            with _C._RestorePythonTLSSnapshot():
                seen.append(_C._dispatch_tls_is_dispatch_key_excluded(K.AutogradCPU))
            return func(*args, **kwargs)

    x = opdispatch.ones(1)
    with M():
        x.neg()
    assert seen == [True, False]  # keys above Python are excluded in the handler; not on entry
    with pytest.raises(RuntimeError, match="outside of '__torch_dispatch__' is not allowed"):
        with _C._RestorePythonTLSSnapshot():
            pass


def test_disable_current_modes_and_pop_temporarily():
    x = opdispatch.ones(1)
    with LoggingMode() as a, LoggingMode() as b:
        with _disable_current_modes() as old:
            assert old == [b, a] and _C._len_torch_dispatch_stack() == 0
            x.neg()
        with _pop_mode_temporarily() as popped:
            assert popped is b and _get_current_dispatch_mode() is a
        assert _get_current_dispatch_mode_stack() == [a, b]
        assert is_in_torch_dispatch_mode()
    assert a.log == [] == b.log and not is_in_torch_dispatch_mode()


def test_modes_are_per_thread():
    seen_in_thread = []
    x = opdispatch.ones(2)

    def work():
        seen_in_thread.append(_C._len_torch_dispatch_stack())
        x.neg()

    with LoggingMode() as m:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        x.abs()
    assert seen_in_thread == [0] and [e[1] for e in m.log] == ["od.abs.default"]


def test_infrastructure_modes_sit_below_user_modes():
    class Infra(BaseTorchDispatchMode):
        def __init__(self, key):
            super().__init__()
            self._mode_key = key

    fake, proxy = Infra(_C._TorchDispatchModeKey.FAKE), Infra(_C._TorchDispatchModeKey.PROXY)
    user = LoggingMode()
    with fake, user:
        _C._set_dispatch_mode(proxy)
        assert _C._get_dispatch_mode(_C._TorchDispatchModeKey.PROXY) is proxy
        assert [_C._get_dispatch_stack_at(i) for i in range(3)] == [fake, proxy, user]
        assert _C._len_torch_dispatch_stack() == 3
        with pytest.raises(RuntimeError, match="trying to set the current ProxyTorchDispatchMode, but one "
                                               "already exists"):
            _C._set_dispatch_mode(proxy)
        assert _C._unset_dispatch_mode(_C._TorchDispatchModeKey.PROXY) is proxy
        assert _C._unset_dispatch_mode(_C._TorchDispatchModeKey.PROXY) is None
        assert _C._len_torch_dispatch_stack() == 2
    assert _C._len_torch_dispatch_stack() == 0
    with pytest.raises(RuntimeError, match="Attempted to unset FakeTensorMode, but there wasn't one active"):
        _C._pop_torch_dispatch_stack(_C._TorchDispatchModeKey.FAKE)
    with pytest.raises(RuntimeError, match="trying to pop from empty mode stack"):
        _C._pop_torch_dispatch_stack(None)
    with pytest.raises(RuntimeError, match="Tried to get stack at idx that's too big"):
        _C._get_dispatch_stack_at(0)
    # The failed pops left the count at 0: calls on plain tensors skip the Python key, and a new mode sees its calls.
    assert _C._len_torch_dispatch_stack() == 0
    assert _C._dispatch_tls_local_include_set() & PYTHON_KEYS == EMPTY
    x = opdispatch.ones(1)
    with LoggingMode() as log:
        x.neg()
    assert [name for _, name, _, _ in log.log] == ["od.neg.default"]
    with pytest.raises(RuntimeError, match="does not contain a _mode_key attribute"):
        _C._set_dispatch_mode(user)


def test_a_mode_sees_detach_of_a_plain_tensor():
    # PyTorch: x.detach() is aten::detach, which a mode sees; outside modes it takes its kernel directly.
    x = opdispatch.ones(2, requires_grad=True)
    with LoggingMode() as m:
        d = x.detach()
    assert [e[1] for e in m.log] == ["od.detach.default"] and not d.requires_grad and d._shares_storage(x)


def test_disable_torch_dispatch_skips_modes_and_subclasses():
    w, x = WrapperTensor(opdispatch.ones(2)), opdispatch.ones(2)
    with LoggingMode() as m:
        with _C._DisableTorchDispatch():
            x.neg()
            assert _C._dispatch_tls_is_dispatch_key_excluded(K.Python)
        x.abs()
    assert [e[1] for e in m.log] == ["od.abs.default"]
    with _C._DisableTorchDispatch():
        with pytest.raises(RuntimeError, match="it has no storage"):  # the CPU kernel sees a tensor without data
            w.neg()


# --- subclasses -----------------------------------------------------------------------------------------


def test_wrapper_subclass_intercepts_calls_and_keeps_its_class_and_attributes():
    WrapperTensor.calls = []
    w = WrapperTensor(opdispatch.tensor([1.0, 2.0]))
    assert _C._dispatch_keys(w) == _C.DispatchKeySet(K.CPU) | PYTHON_KEYS
    out = w + w
    assert type(out) is WrapperTensor and out.elem.tolist() == [2.0, 4.0]
    assert WrapperTensor.calls == ["od.add.Tensor"]
    assert (w * 3.0).elem.tolist() == [3.0, 6.0]
    assert out.shape == (2,) and out.dtype == opdispatch.float32 and str(out.device) == "cpu"
    assert not out._has_storage()
    with pytest.raises(RuntimeError, match="^.tolist\\(\\) is not supported for tensor subclasses, got WrapperTensor$"):
        repr(out)  # its values are read through its operators, and tolist() refuses subclasses, as in PyTorch 2.13


def test_wrapper_subclass_objects_are_freed_when_unreferenced():
    w = WrapperTensor(opdispatch.ones(2))
    out = w + w
    refs = [weakref.ref(w), weakref.ref(out)]
    del w, out
    gc.collect()
    assert all(r() is None for r in refs)


def test_wrapper_subclass_propagates_metadata_and_allocates_nothing():
    x = opdispatch.randn(4, 6).t()[1:, 2:]
    y = WrapperTensor(x)
    assert (y.shape, y.stride(), y.storage_offset()) == (x.shape, x.stride(), x.storage_offset())
    big = Tensor._make_wrapper_subclass(WrapperTensor, (1000000000000,))  # 4 TB if it allocated
    assert big.shape == (1000000000000,) and big.numel() == 1000000000000


def test_make_wrapper_subclass_rejects_bad_sizes_and_strides():
    mk = Tensor._make_wrapper_subclass
    with pytest.raises(ValueError, match=r"size\[1\] = -1 is negative"):
        mk(WrapperTensor, (2, -1))
    with pytest.raises(ValueError, match=r"strides\[0\] = -3 is negative"):
        mk(WrapperTensor, (2,), strides=(-3,))
    with pytest.raises(ValueError, match="got 2 sizes but 1 strides"):
        mk(WrapperTensor, (2, 3), strides=(1,))
    with pytest.raises(RuntimeError, match="overflow int64"):  # PyTorch: RuntimeError too
        mk(WrapperTensor, (2**40, 2**40))
    with pytest.raises(ValueError, match="overflows int64"):
        mk(WrapperTensor, (3,), strides=(2**62,))
    with pytest.raises(ValueError, match=r"size\[0\] = .* does not fit in int64"):
        mk(WrapperTensor, (2**70,))
    with pytest.raises(TypeError, match=r"size\[0\] must be an int, not float"):
        mk(WrapperTensor, (2.0,))
    with pytest.raises(ValueError, match="storage_offset = -1 is negative"):
        mk(WrapperTensor, (2,), storage_offset=-1)
    # Issue 29, item 13: pybind11's "Unable to cast ... to C++ type '?'" named neither the API nor the argument.
    with pytest.raises(TypeError, match=r"_make_wrapper_subclass\(\): storage_offset must be an int or None, not float"):
        mk(WrapperTensor, (2,), storage_offset=1.5)
    with pytest.raises(OverflowError, match=r"_make_wrapper_subclass\(\): storage_offset: the value 1180591620717411303424 "
                                            r"does not fit in int64"):  # PyTorch 2.13: "Overflow when unpacking long long"
        mk(WrapperTensor, (2,), storage_offset=2**70)
    with pytest.raises(TypeError, match="cls must be a subclass of opdispatch.Tensor"):
        mk(int, (2,))
    # A class deriving from TensorBase alone would make tensors without the Python methods.
    with pytest.raises(TypeError, match="cls must be a subclass of opdispatch.Tensor"):
        mk(type("CBase", (_C.TensorBase,), {"__torch_dispatch__": classmethod(lambda *a: None)}), (2,))
    with pytest.raises(TypeError, match="cls must be a subclass of opdispatch.Tensor"):
        Tensor._make_subclass(type("CBase", (_C.TensorBase,), {}), opdispatch.ones(2))
    with pytest.raises(TypeError, match="Foo must define __torch_dispatch__"):
        mk(type("Foo", (Tensor,), {}), (2, 2))


def test_reading_the_data_of_a_wrapper_raises_clearly():
    w = Tensor._make_wrapper_subclass(WrapperTensor, (2, 3))
    with pytest.raises(RuntimeError, match="cannot access the data of a tensor on cpu: it has no storage"):
        w.numpy()


def test_make_subclass_shares_data_and_version_counter():
    class Sub(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            with _C._DisableTorchDispatch():  # PyTorch's no_dispatch(): run on the data directly
                return func(*args, **kwargs)

    base = opdispatch.tensor([1.0, 2.0])
    s = Tensor._make_subclass(Sub, base, True)
    assert type(s) is Sub and s.requires_grad and _C._dispatch_keys(s).has(K.Python)
    assert s._shares_storage(base) and s.numpy(force=True).tolist() == [1.0, 2.0]
    with opdispatch.autograd.no_grad():
        s.add_(1.0)
    assert base.tolist() == [2.0, 3.0] and base._version == s._version == 1
    # A subclass without __torch_dispatch__ does not carry the Python key.
    plain = Tensor._make_subclass(type("Plain", (Tensor,), {}), base)
    assert not _C._dispatch_keys(plain).has(K.Python)


def test_subclass_priority_follows_the_class_hierarchy():
    class ErrorA(RuntimeError):
        pass

    class ErrorB(RuntimeError):
        pass

    class A(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise ErrorA

    class B(A):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise ErrorB

    a = lambda: Tensor._make_subclass(A, opdispatch.ones(1))  # noqa: E731
    b = lambda: Tensor._make_subclass(B, opdispatch.ones(1))  # noqa: E731
    with pytest.raises(ErrorA):
        ops.od.add.Tensor(a(), a())
    with pytest.raises(ErrorB):
        ops.od.add.Tensor(a(), b())
    with pytest.raises(ErrorB):
        ops.od.add.Tensor(b(), a())


def test_notimplemented_passes_to_the_next_subclass_and_types_lists_them_in_order():
    seen = []

    def handler(result):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append((cls.__name__, [t.__name__ for t in types]))
            return result(args) if callable(result) else result
        return __torch_dispatch__

    A = type("A", (Tensor,), {"__torch_dispatch__": handler(NotImplemented)})
    B = type("B", (Tensor,), {"__torch_dispatch__": handler(lambda args: opdispatch.zeros(1))})
    a, b = Tensor._make_subclass(A, opdispatch.ones(1)), Tensor._make_subclass(B, opdispatch.ones(1))
    assert ops.od.add.Tensor(a, b).tolist() == [0.0]
    assert seen == [("A", ["A", "B"]), ("B", ["A", "B"])]
    with pytest.raises(TypeError, match=r"all __torch_dispatch__ handlers returned NotImplemented:\n\n"
                                        r"  - tensor subclass <class '.*A'>\n"):
        ops.od.add.Tensor(a, a)


def test_modes_run_before_subclasses_and_may_defer_to_them():
    WrapperTensor.calls = []
    order = []

    class Deferring(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            order.append(("mode", [t.__name__ for t in types]))
            if types:
                return NotImplemented
            return func(*args, **kwargs)

    w, x = WrapperTensor(opdispatch.ones(2)), opdispatch.ones(1)
    with Deferring():
        out = w.neg()
        x.abs()
    assert type(out) is WrapperTensor and WrapperTensor.calls == ["od.neg.default"]
    # The mode is back on the stack while the subclass handles the call (as in PyTorch), so it sees the
    # subclass's inner call on plain tensors too.
    assert order == [("mode", ["WrapperTensor"]), ("mode", []), ("mode", [])]


def test_subclass_with_autograd_records_above_and_dispatches_below():
    WrapperTensor.calls = []
    w = WrapperTensor(opdispatch.tensor([2.0]), requires_grad=True)
    assert _C._dispatch_keys(w).has(K.AutogradCPU)
    y = w * w
    assert y.grad_fn is not None and type(y) is WrapperTensor
    assert WrapperTensor.calls == ["od.mul.Tensor"]


def test_logging_subclass_through_forward_and_backward():
    # PyTorch's test_basic: a LoggingTensor that requires grad; the gradients are LoggingTensors too.
    WrapperTensor.calls = []
    x = WrapperTensor(opdispatch.tensor([3.0]), requires_grad=True)
    y = x * x
    (g,) = opdispatch.autograd.grad((y,), (x,), (WrapperTensor(opdispatch.tensor([1.0])),))
    assert type(g) is WrapperTensor and g.elem.tolist() == [6.0]
    # PyTorch logs mul, mul, mul, add; opdispatch's engine also detaches the gradients it is given and returns.
    assert [c for c in WrapperTensor.calls if c != "od.detach.default"] == [
        "od.mul.Tensor", "od.mul.Tensor", "od.mul.Tensor", "od.add.Tensor"]
    d = x.detach()
    assert type(d) is WrapperTensor and not d.requires_grad and WrapperTensor.calls[-1] == "od.detach.default"


def test_wrapper_subclass_through_a_formula_that_saves_its_output():
    # exp's formula saves its output. The node keeps it without history (no output -> node -> output cycle);
    # for a tensor that handles dispatch in Python, that alias comes from od::detach, so the saved tensor is a
    # WrapperTensor too, and no kernel ever sees a wrapper (which has no data) directly.
    WrapperTensor.calls = []
    x = WrapperTensor(opdispatch.tensor([0.0, 1.0]), requires_grad=True)
    y = x.exp()
    (saved,) = y.grad_fn.saved_tensors
    assert type(saved) is WrapperTensor and saved is not y and saved.grad_fn is y.grad_fn
    (g,) = opdispatch.autograd.grad((y,), (x,), (WrapperTensor(opdispatch.ones(2)),))
    assert type(g) is WrapperTensor
    np.testing.assert_allclose(g.elem.tolist(), [1.0, np.e])
    assert "od.detach.default" in WrapperTensor.calls


def test_kernels_see_the_memory_of_a_subclass_made_from_a_view():
    # Each tensor object caches the NumPy view its kernels use (Note [Kernel arrays]); a subclass object made
    # by _make_subclass is a new object over its own alias, so its kernels read its own geometry and
    # in-place kernels write through to the base.
    Plain = type("Plain", (Tensor,), {})
    base = opdispatch.tensor([1.0, 2.0, 3.0, 4.0])
    view = base[1:3]
    assert (view + 0).tolist() == [2.0, 3.0]  # the view's kernel array is cached now
    s = Tensor._make_subclass(Plain, view)
    assert (s * 10).tolist() == [20.0, 30.0]
    s.add_(1.0)
    assert base.tolist() == [1.0, 3.0, 4.0, 4.0] and (view + 0).tolist() == [3.0, 4.0]
    whole = Tensor._make_subclass(Plain, base)
    assert (whole + 0).tolist() == [1.0, 3.0, 4.0, 4.0]


def test_subclass_in_a_tensor_list_is_found(lib, ns):
    lib.define("first(Tensor[] xs) -> Tensor")
    lib.impl("first", lambda xs: xs[0].clone(), "CPU")
    WrapperTensor.calls = []
    out = getattr(ops, ns).first([opdispatch.ones(1), WrapperTensor(opdispatch.ones(1))])
    assert type(out) is WrapperTensor and WrapperTensor.calls == [f"{ns}.first.default"]


def test_subclass_result_survives_when_only_cpp_holds_it(lib, ns):
    # The handler's result is converted to an IValue and back: the object must come back, attributes and all.
    class Tagged(Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            r = Tensor._make_wrapper_subclass(Tagged, (1,))
            r.tag = "kept"
            return r

    for _ in range(3):
        out = Tensor._make_wrapper_subclass(Tagged, (1,)).neg()
        assert type(out) is Tagged and out.tag == "kept"


def test_preserved_objects_keep_slots_and_finalize_once():
    deleted = []

    class Slotted(Tensor):
        __slots__ = ["elem"]

        @staticmethod
        def __new__(cls, elem):
            r = Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
            r.elem = elem
            return r

        def __init__(self, elem):
            pass

        def __del__(self):
            deleted.append(self.elem.tolist())

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return Slotted(func(*tree_map_only(Slotted, lambda t: t.elem, args)))

    out = Slotted(opdispatch.ones(2)) * 3  # the result crossed C++ with no Python reference
    assert type(out) is Slotted and out.elem.tolist() == [3.0, 3.0]
    assert deleted == [[1.0, 1.0]]  # the argument died; the result was preserved, not finalized
    del out
    gc.collect()
    assert deleted == [[1.0, 1.0], [3.0, 3.0]]


# --- register_torch_dispatch ---------------------------------------------------------------------------------


def test_register_torch_dispatch_for_a_mode(ns):
    @custom_op(f"{ns}::foo", mutates_args=())
    def foo(x: Tensor) -> Tensor:
        return x.clone()

    class MyMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **kwargs)

    lib = Library(ns, "FRAGMENT")

    @register_torch_dispatch(f"{ns}::foo", MyMode, lib=lib)
    def _(mode, func, types, args, kwargs):
        assert isinstance(mode, MyMode) and func is foo._opoverload
        return args[0] + 1

    x = opdispatch.ones(2)
    assert foo(x).tolist() == [1.0, 1.0]
    with MyMode():
        assert foo(x).tolist() == [2.0, 2.0]
        assert (x + x).tolist() == [2.0, 2.0]  # other operators keep the mode's __torch_dispatch__
    with pytest.raises(RuntimeError, match="already has a `__torch_dispatch__` rule registered"):
        register_torch_dispatch(foo, MyMode, lambda *a: None, lib=lib)
    lib._destroy()
    with MyMode():
        assert foo(x).tolist() == [1.0, 1.0]


def test_register_torch_dispatch_for_a_subclass(lib, ns):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.clone(), "CPU")
    WrapperTensor.calls = []
    rule_calls = []

    @register_torch_dispatch(getattr(ops, ns).foo.default, WrapperTensor, lib=lib)
    def _(cls, func, types, args, kwargs):
        rule_calls.append(cls)
        return NotImplemented if len(rule_calls) == 2 else WrapperTensor(opdispatch.zeros(1))

    w = WrapperTensor(opdispatch.ones(1))
    assert getattr(ops, ns).foo(w).elem.tolist() == [0.0] and WrapperTensor.calls == []
    assert getattr(ops, ns).foo(w).elem.tolist() == [1.0]  # NotImplemented: falls back to __torch_dispatch__
    assert rule_calls == [WrapperTensor, WrapperTensor] and WrapperTensor.calls == [f"{ns}.foo.default"]
    with pytest.raises(ValueError, match="is not defined"):
        register_torch_dispatch(f"{ns}::nope", WrapperTensor, lambda *a: None, lib=lib)


# --- calls from C++ kernels and other threads ----------------------------------------------------------------


@pytest.fixture(scope="module")
def ext(tmp_path_factory):
    from opdispatch.demo import extension

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("pd_ext")))
        return extension.load_extension("pd_ext")


def test_calls_made_by_cpp_kernels_reach_the_mode(ext):
    # call_op is CompositeImplicitAutograd: on an input that requires grad it runs at the autograd key, above
    # Python, and its C++ kernel calls od::neg through the dispatcher, which the mode sees.
    x = opdispatch.tensor([1.0, -2.0], requires_grad=True)
    with LoggingMode() as m:
        out = ops.pd_ext.call_op(x, "od::neg")
    assert out.tolist() == [-1.0, 2.0]
    assert [e[1] for e in m.log] == ["od.neg.default"]
    # From another thread the call is that thread's: no mode there.
    with LoggingMode() as m:
        out = ops.pd_ext.call_op_in_thread(x, "od::neg")
    assert out.tolist() == [-1.0, 2.0] and m.log == []


def test_subclass_handler_runs_for_calls_from_a_cpp_thread(ext):
    WrapperTensor.calls = []
    w = WrapperTensor(opdispatch.tensor([1.0, -2.0]), requires_grad=True)
    out = ops.pd_ext.call_op_in_thread(w, "od::neg")  # the worker thread takes the GIL for the handler
    assert type(out) is WrapperTensor and out.elem.tolist() == [-1.0, 2.0]
    assert WrapperTensor.calls == ["od.neg.default"]


# --- preserved subclass objects and the garbage collector ---------------------------------------------------------

HOLDER_EXTENSION = r"""
// A registry of tensors held by C++ only: what the collector cannot see.
#include <vector>

#include <opdispatch/library.h>

namespace {
std::vector<opdispatch::Tensor>& held() {
  static std::vector<opdispatch::Tensor> tensors;
  return tensors;
}
void hold(const opdispatch::Tensor& x) { held().push_back(x); }
opdispatch::Tensor take() {
  opdispatch::Tensor t = held().back();
  held().pop_back();
  return t;
}
void drop() { held().clear(); }
void drop_last() {
  opdispatch::Tensor t = std::move(held().back());
  held().pop_back();
}  // t goes here, when the registry no longer refers to it (its object's finalizer may call hold())
}  // namespace

OPDISPATCH_LIBRARY(gc_holder_ext, m) {
  m.def("hold(Tensor x) -> ()");
  m.def("take() -> Tensor");
  m.def("drop() -> ()");
  m.def("drop_last() -> ()");
}
OPDISPATCH_LIBRARY_IMPL(gc_holder_ext, CompositeImplicitAutograd, m) {
  m.impl("hold", OPDISPATCH_FN(hold));
  m.impl("take", OPDISPATCH_FN(take));
  m.impl("drop", OPDISPATCH_FN(drop));
  m.impl("drop_last", OPDISPATCH_FN(drop_last));
}
"""


@pytest.fixture(scope="module")
def holder(tmp_path_factory):
    """gc_holder_ext: hold(x) keeps x's TensorImpl in a C++ registry, take() gives the last one back, drop()
    releases all, drop_last() the last one (built with cpp_extension.load, once per process)."""
    import opdispatch.cpp_extension as cpp_extension

    if not _C._dispatch_has_kernel("gc_holder_ext::hold"):
        src = tmp_path_factory.mktemp("gc_holder") / "gc_holder.cpp"
        src.write_text(HOLDER_EXTENSION)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("extensions")))
            cpp_extension.load("gc_holder_ext", [src])
    yield opdispatch.ops.gc_holder_ext
    opdispatch.ops.gc_holder_ext.drop()


class Tagged(Tensor):
    """A subclass without __torch_dispatch__ (so the holder's kernels take it), preserved like any subclass."""


def _cycles():
    """(name, make a cycle through obj): every way a cycle can reach an object's attributes."""
    return [
        ("__dict__ refers to the object", lambda obj: setattr(obj, "me", obj)),
        ("a list in __dict__ refers to the object", lambda obj: setattr(obj, "group", [obj])),
        # vars() turns the inline attribute values into a dict object (CPython 3.11+), which the collector
        # must see too (Note [The instance dict of tensor subclasses]).
        ("__dict__, made a dict object, refers to the object", lambda obj: (vars(obj), setattr(obj, "me", obj))),
    ]


@pytest.mark.parametrize("name, make_cycle", _cycles(), ids=[n for n, _ in _cycles()])
def test_collector_keeps_a_cycle_whose_tensor_cpp_holds(holder, name, make_cycle):
    # Only a cycle refers to the object while C++ holds its TensorImpl: the object is reachable from C++ (as
    # PyTorch's THPVariable_subclass_traverse treats it), so a collection must not clear its attributes.
    obj = Tensor._make_subclass(Tagged, opdispatch.tensor([1.0, 2.0]))
    obj.tag = "kept"
    make_cycle(obj)
    ref = weakref.ref(obj)
    holder.hold(obj)
    del obj
    gc.collect()
    assert ref() is not None, "the collector took an object whose tensor C++ still holds"
    out = holder.take()
    assert out is ref() and type(out) is Tagged and out.tag == "kept"
    assert getattr(out, "me", out) is out and getattr(out, "group", [out]) == [out]
    assert out.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("name, make_cycle", _cycles(), ids=[n for n, _ in _cycles()])
def test_collector_frees_a_cycle_once_cpp_lets_go(holder, name, make_cycle):
    obj = Tensor._make_subclass(Tagged, opdispatch.tensor([1.0]))
    make_cycle(obj)
    ref = weakref.ref(obj)
    holder.hold(obj)
    del obj
    gc.collect()
    assert ref() is not None
    holder.drop()  # C++ lets go while the object is alive: the object owns its TensorImpl alone again
    gc.collect()
    assert ref() is None, "a garbage cycle through a tensor subclass object leaked"

    obj = Tensor._make_subclass(Tagged, opdispatch.tensor([1.0]))
    make_cycle(obj)
    ref = weakref.ref(obj)
    holder.hold(obj)
    del obj
    out = holder.take()  # back in Python, then garbage
    assert out is ref()
    del out
    gc.collect()
    assert ref() is None, "a garbage cycle through a tensor subclass object leaked"


@pytest.mark.parametrize("as_dict", [False, True], ids=["inline values", "dict object"])
@pytest.mark.parametrize("make", [lambda: Tensor._make_subclass(Tagged, opdispatch.ones(1)),
                                  lambda: WrapperTensor(opdispatch.ones(1))], ids=["_make_subclass", "wrapper"])
def test_subclass_object_releases_its_attributes_when_it_dies(make, as_dict):
    # CPython's subtype_dealloc frees the attributes of a preserved class's object, held inline or (after
    # vars()) in a dict object; reference counting alone must release them (no collection runs here).
    class Value:
        pass

    value = Value()
    ref = weakref.ref(value)
    obj = make()
    obj.value = value
    if as_dict:
        assert vars(obj)["value"] is value
    assert obj.value is value
    del value, obj
    assert ref() is None, "a dead tensor subclass object kept its attribute alive"


@pytest.mark.parametrize("as_dict", [False, True], ids=["inline values", "dict object"])
def test_collector_sees_each_reference_of_a_subclass_object_once(as_dict):
    # subtype_traverse and its callback share the visits (Note [The instance dict of tensor subclasses]); a
    # reference visited twice would have the collector count it twice and free what is still referenced.
    class Value:
        pass

    obj = Tensor._make_subclass(Tagged, opdispatch.ones(1))
    obj.a, obj.b = Value(), Value()
    if as_dict:
        vars(obj)
    seen = gc.get_referents(obj)
    dicts = [r for r in seen if isinstance(r, dict)]  # values inline (3.11, 3.12) are visited directly
    assert dicts in ([], [vars(obj)]) and (dicts or not as_dict)
    for value in (obj.a, obj.b):
        assert sum(r is value for r in seen) + sum(r is value for d in dicts for r in d.values()) == 1
    assert sum(r is Tagged for r in seen) == 1


def test_abstract_subclass_objects_are_made_and_preserved(holder):
    # object.__new__ refuses an abstract class; its objects are allocated directly (as PyTorch allocates every
    # subclass object) and keep their attributes through C++ like any other.
    class Abstract(Tensor, metaclass=abc.ABCMeta):
        @abc.abstractmethod
        def describe(self): ...

    obj = Tensor._make_subclass(Abstract, opdispatch.tensor([2.0]))
    obj.tag = "kept"
    holder.hold(obj)
    del obj
    out = holder.take()
    assert type(out) is Abstract and out.tag == "kept" and out.tolist() == [2.0]


def test_collector_keeps_a_wrapper_in_a_cycle_while_cpp_holds_it(holder):
    # The same for a wrapper subclass (Python key): hold() runs under _DisableTorchDispatch, so no
    # __torch_dispatch__ sees it.
    w = WrapperTensor(opdispatch.tensor([3.0]))
    w.me = w
    ref = weakref.ref(w)
    with _C._DisableTorchDispatch():
        holder.hold(w)
    del w
    gc.collect()
    assert ref() is not None and ref().elem.tolist() == [3.0]
    with _C._DisableTorchDispatch():
        out = holder.take()
    assert out is ref() and out.me is out and out.elem.tolist() == [3.0]
    del out
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("afterlife", ["kept in a list", "held by C++ again"])
def test_a_preserved_object_resurrected_by_its_finalizer_stays_whole(holder, afterlife):
    # Issue 29, item 4. C++ held the TensorImpl of a preserved _make_subclass object; when C++ lets go, the object
    # is finalized, and its __del__ keeps it (in a list, or by handing it to C++ again). Before the fix the
    # TensorImpl was destroyed anyway and later reads saw freed storage; now the object takes its TensorImpl back,
    # as PyTorch keeps the object intact in the same pattern.
    kept = []

    class Resurrecting(Tensor):
        def __del__(self):
            if not kept:
                kept.append(self)
                if afterlife == "held by C++ again":
                    holder.hold(self)

    obj = Tensor._make_subclass(Resurrecting, opdispatch.tensor([1.0, 2.0, 3.0]))
    holder.hold(obj)
    del obj
    holder.drop_last()
    gc.collect()
    assert len(kept) == 1 and type(kept[0]) is Resurrecting
    churn = [opdispatch.full([3], 9.0) for _ in range(50)]  # would reuse the freed storage
    assert kept[0].tolist() == [1.0, 2.0, 3.0] and (kept[0] + 1).tolist() == [2.0, 3.0, 4.0]
    if afterlife == "held by C++ again":
        assert holder.take() is kept[0]
    del churn
    kept.clear()
    gc.collect()


def test_an_object_given_a_subclass_by_class_assignment_is_preserved(holder):
    # Issue 29, item 12. `t.__class__ = Cls` made no instance through opdispatch's constructors, so Cls was not
    # yet a preserving class and the object died (with its attributes) while C++ still held its TensorImpl; once
    # a class had made an instance, CPython refused the assignment. Classes are now prepared when they are made,
    # as PyTorch's metaclass prepares them (THPVariableMetaType_init), and share Tensor's tp_dealloc, so the
    # assignment works either way as in PyTorch 2.13.
    class Assigned(Tensor):
        pass

    other = opdispatch.ones(1).as_subclass(Assigned)
    plain = opdispatch.ones(1)
    plain.__class__ = Assigned
    plain.__class__ = Tensor
    assert type(plain) is Tensor and type(other) is Assigned
    t = opdispatch.tensor([1.0, 2.0])
    t.__class__ = Assigned
    t.tag = "kept"
    holder.hold(t)
    del t
    gc.collect()
    back = holder.take()
    assert type(back) is Assigned and back.tag == "kept"


def test_a_classmethod_handler_reinitialised_in_place_is_the_one_called():
    # Issue 29, item 12: the handler function was cached by the classmethod object, so re-initialising that
    # object in place (`cm.__init__(f)`) kept calling the old function. PyTorch reads it at each call.
    class Wrapper(Tensor):
        @staticmethod
        def __new__(cls, elem):
            return Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            return opdispatch.ones(1)

    def replacement(cls, func, types, args=(), kwargs=None):
        return opdispatch.zeros(1)

    w = Wrapper(opdispatch.ones(2))
    assert opdispatch.ops.od.sin.default(w).tolist() == [1.0]
    Wrapper.__dict__["__torch_dispatch__"].__init__(replacement)
    assert opdispatch.ops.od.sin.default(w).tolist() == [0.0]
