"""Regression tests for issue 29's "state left broken" and "wrong results"
findings: threads, signals and exceptions raised at any point of a
registration, a lookup, a mode's entry or exit or a backward formula leave
every registry, the mode stack and the TLS key sets as they were, and end in
the error PyTorch 2.13 raises for the same case.

Races are made deterministic where a hook can stand in for the other thread
(the hook does, at one bytecode boundary, what the thread would); a bounded
thread storm covers the rest.
"""
from __future__ import annotations

import inspect
import re
import itertools
import math
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, _ops, library
from opdispatch._library import registry
from opdispatch._subclasses.fake_tensor import FakeTensorMode
from opdispatch.tracing import make_fx
from opdispatch.utils import _python_dispatch
from opdispatch.utils._python_dispatch import TorchDispatchMode


sys.path.insert(0, str(Path(__file__).resolve().parent / "stress"))
from python_key_threads import storm as _storm  # noqa: E402 (the thread runner .ci/sanitizers.sh's stress uses)


# --- item 10: packets under threads (Note [Packets under threads]) ---


def test_define_and_destroy_racing_overload_lookups(ns):
    def churn():
        lib = library.Library(ns, "FRAGMENT")
        try:
            lib.define("f(Tensor x) -> Tensor")
            lib.define("f.a(Tensor x) -> Tensor")
            lib.define("f.b(Tensor x) -> Tensor")
        finally:
            lib._destroy()

    def look():
        try:
            packet = getattr(opdispatch.ops, ns).f
            packet.default, packet.a, packet.overloads(), packet.b
        except AttributeError:  # the operator or overload is not defined at this moment: PyTorch's error
            pass

    errors = _storm(2.0, churn, look, look)
    assert [repr(e) for e in errors] == []


def test_a_packet_lookup_racing_a_destroy_raises_attribute_error(ns):
    lib = library.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    listing = _ops._overload_names_of
    destroyed = []

    def listing_then_destroy(name):
        # The other thread's destroy, right after this thread read the overload names.
        names = listing(name)
        if not destroyed:
            destroyed.append(True)
            lib._destroy()
        return names

    _ops._overload_names_of = listing_then_destroy
    try:
        with pytest.raises(AttributeError, match=f"operator {ns}::f is not defined"):
            getattr(opdispatch.ops, ns).f
    finally:
        _ops._overload_names_of = listing
    assert "f" not in vars(getattr(opdispatch.ops, ns))
    assert not hasattr(getattr(opdispatch.ops, ns), "f")


def test_a_packet_cached_after_a_destroy_is_not_kept(ns):
    lib = library.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    init = _ops.OpOverloadPacket.__init__

    def init_then_destroy(self, *args):
        # The other thread's destroy, after the packet read the dispatcher, before it is cached.
        init(self, *args)
        lib._destroy()

    _ops.OpOverloadPacket.__init__ = init_then_destroy
    try:
        with pytest.raises(AttributeError, match=f"operator {ns}::f is not defined"):
            getattr(opdispatch.ops, ns).f
    finally:
        _ops.OpOverloadPacket.__init__ = init
    assert "f" not in vars(getattr(opdispatch.ops, ns))


# --- items 8 and 9: entering and leaving a mode (Note [Entering and leaving a mode]) ---


class _Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


class _ReentersItself(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        with self:
            return func(*args, **(kwargs or {}))


def _mode_state():
    return (_C._len_torch_dispatch_stack(), repr(_C._dispatch_tls_local_include_set()),
            _python_dispatch.is_in_torch_dispatch_mode())


@pytest.mark.parametrize("limit", range(200, 212))
def test_a_mode_reentering_itself_leaves_no_mode_behind(limit):
    # PyTorch 2.13: RecursionError, and the stack is empty after.
    before = _mode_state()
    x = opdispatch.ones(3)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(limit + len(inspect.stack()))
    try:
        with pytest.raises(RecursionError):
            with _ReentersItself():
                x + 1
    finally:
        sys.setrecursionlimit(old)
    assert _mode_state() == before


def _interrupt_at_each_boundary(fn):
    """Runs ``fn`` once per boundary where CPython delivers a signal (a Python
    function's entry, the return of a C function), raising KeyboardInterrupt
    at that one boundary, until ``fn`` completes; yields (boundary, where)
    after each interrupted run. Modelled with sys.setprofile ('call' and
    'c_return' events, where CPython 3.11+ checks for pending signals)."""
    for n in itertools.count(1):
        seen = [0, None]

        def profile(frame, event, arg):
            if event not in ("call", "c_return") or seen[0] < 0:
                return
            seen[0] += 1
            if seen[0] == n:
                seen[0], seen[1] = -1, (event, frame.f_code.co_name)
                raise KeyboardInterrupt

        sys.setprofile(profile)
        try:
            fn()
        except KeyboardInterrupt:
            pass
        finally:
            seen[0] = -1
            sys.setprofile(None)
        if seen[1] is None:
            return
        yield n, seen[1]


@pytest.mark.parametrize("case", ["with_mode", "make_fx", "fake_mode", "make_fx_fake"])
def test_a_keyboard_interrupt_anywhere_in_a_mode_leaves_nothing_behind(case):
    x = opdispatch.ones(3)

    def with_mode():
        with _Passthrough():
            x + 1

    def traced():
        make_fx(lambda a: a * 2 + 1)(x)

    def fake_mode():
        with FakeTensorMode() as mode:
            mode.from_tensor(x) + 1

    def traced_fake():
        make_fx(lambda a: a * 2 + 1, tracing_mode="fake")(x)

    fn = {"with_mode": with_mode, "make_fx": traced, "fake_mode": fake_mode, "make_fx_fake": traced_fake}[case]
    fn()  # warm caches and lazy imports first
    before = _mode_state()
    left = []
    runs = 0
    for n, where in _interrupt_at_each_boundary(fn):
        runs += 1
        if _mode_state() != before:
            left.append((n, where, _mode_state()))
            while _C._len_torch_dispatch_stack():
                _C._pop_torch_dispatch_stack(None)
    assert runs > 5
    assert left == []


# --- item 7: registration and destruction are all or nothing (Note [Destruction runs to completion]) ---


def _registry_leftovers(ns):
    return ([k for k in registry.impls if k.startswith(ns + "/")],
            [d for d in registry.defs if d.startswith(ns + "::")],
            [n for n in _C._dispatch_get_all_op_names() if n.startswith(ns + "::")],
            [k for k in (*registry.custom_op_defs, *registry.fake_holders) if k.startswith(ns + "::")])


def _clone(x):
    return x.clone()


def test_a_keyboard_interrupt_anywhere_in_a_library_cycle_leaves_no_registration(ns):
    made = []

    def cycle():
        lib = library.Library(ns, "FRAGMENT")
        made.append(lib)
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", _clone, "CPU")
        getattr(opdispatch.ops, ns).f  # (so that definitions and destruction sync the packet too)
        lib._destroy()

    cycle()
    runs = 0
    for _ in _interrupt_at_each_boundary(cycle):
        runs += 1
        for lib in made:  # what a program does after catching the interrupt
            lib._destroy()
        made.clear()
        assert _registry_leftovers(ns) == ([], [], [], [])
    assert runs > 10
    cycle()  # the names are free again
    assert _registry_leftovers(ns) == ([], [], [], [])


# (An interrupt at a generator's close, which the collector runs, is unraisable, as in any program.)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_keyboard_interrupt_anywhere_in_custom_op_leaves_no_registration(ns):
    made = []

    def cycle():
        @library.custom_op(f"{ns}::g", mutates_args=())
        def g(x: opdispatch.Tensor) -> opdispatch.Tensor:
            return x.clone()

        made.append(g)

        @g.register_fake
        def _(x):
            return opdispatch.empty_like(x)

        g._destroy()

    cycle()
    runs = 0
    for _ in _interrupt_at_each_boundary(cycle):
        runs += 1
        for op in made:
            op._destroy()
        made.clear()
        assert _registry_leftovers(ns) == ([], [], [], [])
    assert runs > 50


def test_a_define_whose_packet_refresh_raises_is_taken_back(ns, monkeypatch):
    lib = library.Library(ns, "FRAGMENT")
    lib.define("f.a(Tensor x) -> Tensor")
    getattr(opdispatch.ops, ns).f  # (a cached packet: the next define refreshes it)
    refresh = _ops.OpOverloadPacket._refresh
    calls = []

    def refresh_raising_once(packet):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return refresh(packet)

    monkeypatch.setattr(_ops.OpOverloadPacket, "_refresh", refresh_raising_once)
    with pytest.raises(KeyboardInterrupt):
        lib.define("f.b(Tensor x) -> Tensor")
    assert [d for d in registry.defs if d.startswith(ns + "::")] == [f"{ns}::f.a"]
    assert sorted(getattr(opdispatch.ops, ns).f.overloads()) == ["a"]
    lib.define("f.b(Tensor x) -> Tensor")  # the name is free
    assert sorted(getattr(opdispatch.ops, ns).f.overloads()) == ["a", "b"]
    lib._destroy()
    assert _registry_leftovers(ns) == ([], [], [], [])


def test_destroy_finishes_when_an_undo_step_raises(ns):
    lib = library.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _clone, "CPU")
    calls = []

    def undo_raising_once():
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt

    lib._registrations.add_handle(undo_raising_once)
    with pytest.raises(KeyboardInterrupt):
        lib._destroy()
    assert calls == [1, 1]  # run again after it raised, once
    assert _registry_leftovers(ns) == ([], [], [], [])
    lib2 = library.Library(ns, "FRAGMENT")
    lib2.define("f(Tensor x) -> Tensor")
    lib2.impl("f", _clone, "CPU")
    lib2._destroy()


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="Python runs signal handlers only in the main thread, and this test is running in another")
def test_a_sigint_storm_over_registration_cycles_leaves_no_registration(ns):
    # Real signals, every ~0.3 ms for 1.5 s (up to 10 s on a loaded machine). They raise KeyboardInterrupt only
    # inside a cycle (armed), so that this test's own loop is not interrupted.
    made = []
    stop = threading.Event()
    main = threading.get_ident()
    armed = [False]

    def on_sigint(signum, frame):
        if armed[0]:
            raise KeyboardInterrupt

    def storm():
        while not stop.wait(0.0003):
            signal.pthread_kill(main, signal.SIGINT)

    cycles = interrupts = 0
    previous = signal.signal(signal.SIGINT, on_sigint)
    # An interrupt landing in a finalizer that the collector runs is unraisable,
    # as in any program: collected here by a C method, which no signal interrupts.
    unraisable: list = []
    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    sender = threading.Thread(target=storm)
    deadline = time.monotonic() + 10  # (bounded: the loop ends after 1.5 s once enough of both happened)
    enough = time.monotonic() + 1.5
    sender.start()
    try:
        while time.monotonic() < deadline and not (time.monotonic() > enough and interrupts > 20 and cycles > 10):
            try:
                armed[0] = True
                lib = library.Library(ns, "FRAGMENT")
                made.append(lib)
                lib.define("f(Tensor x) -> Tensor")
                lib.impl("f", _clone, "CPU")
                lib._destroy()
                armed[0] = False
                cycles += 1
            except KeyboardInterrupt:
                armed[0] = False
                interrupts += 1
            for lib in made:  # what a program does after catching the interrupt
                lib._destroy()
            made.clear()
            assert _registry_leftovers(ns) == ([], [], [], [])
    finally:
        armed[0] = False
        stop.set()
        sender.join()
        signal.signal(signal.SIGINT, previous)
        sys.unraisablehook = previous_hook
    assert all(isinstance(u.exc_value, KeyboardInterrupt) for u in unraisable)
    assert interrupts > 20 and cycles > 10
    lib = library.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", _clone, "CPU")
    lib._destroy()


# --- item 14: each gradient a backward formula returns is checked (PyTorch: validate_outputs) ---


def _function_returning(make_grad):
    class Returns(opdispatch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return make_grad()

    return Returns


@pytest.mark.parametrize("leaf", [True, False])
@pytest.mark.parametrize("make_grad, message", [
    # (PyTorch 2.13's messages, from the same code run on it.)
    (lambda: opdispatch.empty(3, device="meta"),
     "Function ReturnsBackward returned an invalid gradient at index 0 - expected device cpu but got meta"),
    (lambda: opdispatch.ones(4),
     r"Function ReturnsBackward returned an invalid gradient at index 0 - got \[4\] but expected shape compatible "
     r"with \[3\]"),
])
def test_a_gradient_of_the_wrong_device_or_shape_is_refused(leaf, make_grad, message):
    x = opdispatch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=message):
        _function_returning(make_grad).apply(x if leaf else x * 1).sum().backward()
    assert x.grad is None


def test_a_gradient_of_another_dtype_is_cast_to_the_input_dtype():
    # PyTorch 2.13: an int64 or float64 gradient of a float32 input reaches .grad as float32.
    for dtype in (opdispatch.int64, opdispatch.float64):
        x = opdispatch.ones(3, requires_grad=True)
        _function_returning(lambda: opdispatch.ones(3, dtype=dtype)).apply(x).sum().backward()
        assert x.grad.dtype is opdispatch.float32 and x.grad.tolist() == [1.0, 1.0, 1.0]


# --- item 11: writes into a tensor with internal overlap (PyTorch: assert_no_internal_overlap) ---

OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


def _ones_on(t):
    return opdispatch.ones(3, device=t.device)


@pytest.mark.parametrize("write", [
    lambda t: t.add_(_ones_on(t)),
    lambda t: t.add_(1),
    lambda t: t.sub_(_ones_on(t), alpha=0.5),  # (the optimiser's fast path)
    lambda t: t.mul_(2),
    lambda t: t.clamp_(0, 1),
    lambda t: t.copy_(_ones_on(t)),
    lambda t: opdispatch.ops.od.atan2.out(_ones_on(t), _ones_on(t), out=t),
], ids=["add_", "add_scalar", "sub_alpha", "mul_", "clamp_", "copy_", "atan2.out"])
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_write_into_an_expanded_tensor_is_refused(write, device):
    # PyTorch 2.13 raises the same message for each of these (checked by running them on it).
    base = opdispatch.zeros(1, device=device)
    with pytest.raises(RuntimeError, match=re.escape(OVERLAP)):
        write(base.expand(3))
    if device == "cpu":
        assert base.tolist() == [0.0]  # nothing was written


def test_writes_without_internal_overlap_still_run():
    # A zero stride of a size-1 dimension shares nothing; fill_ and zero_ do not check (PyTorch 2.13 neither).
    assert opdispatch.zeros(1).expand(1).add_(1).tolist() == [1.0]
    assert opdispatch.zeros(1).expand(3).fill_(2).tolist() == [2.0, 2.0, 2.0]
    assert opdispatch.ones(1).expand(3).zero_().tolist() == [0.0, 0.0, 0.0]
    assert opdispatch.ops.od.copy(opdispatch.zeros(1).expand(3), opdispatch.ones(3)).tolist() == [1.0, 1.0, 1.0]
    t = opdispatch.zeros(2, 3).t()
    assert t.add_(1).tolist() == [[1.0, 1.0]] * 3


# --- item 13: errors that say what is wrong ---


@pytest.mark.parametrize("call, error, message", [
    # PyTorch 2.13: IndexError "Dimension out of range (expected to be in range of [-2, 1], but got ...)" and
    # "select(): index 5 out of range for tensor of size [2, 3] at dimension 0" (run on it).
    (lambda: opdispatch.ops.od.select_backward(opdispatch.ones(3), [2, 3], -2**63, 0), IndexError,
     r"od::select_backward: dimension -9223372036854775808 out of range .* \[-2, 1\]"),
    (lambda: opdispatch.ops.od.select_backward(opdispatch.ones(3), [2, 3], 5, 0), IndexError,
     r"od::select_backward: dimension 5 out of range .* \[-2, 1\]"),
    (lambda: opdispatch.ops.od.select_backward(opdispatch.ones(3), [2, 3], 0, 5), IndexError,
     r"select\(\): index 5 out of range for tensor of size \[2, 3\] at dimension 0"),
    (lambda: opdispatch.ops.od.slice_backward(opdispatch.ones(2, 3), [2, 3], -5, 0, 3, 1), IndexError,
     r"od::slice_backward: dimension -5 out of range .* \[-2, 1\]"),
])
def test_backward_helpers_name_the_operator_for_a_dim_out_of_range(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_negative_dims_of_backward_helpers_count_from_the_end():
    # PyTorch 2.13's values for the same calls.
    od = opdispatch.ops.od
    assert od.select_backward(opdispatch.ones(2), [2, 3], -1, 0).tolist() == [[1.0, 0.0, 0.0]] * 2
    assert od.slice_backward(opdispatch.ones(2, 2), [2, 3], -1, 0, 2, 1).tolist() == [[1.0, 1.0, 0.0]] * 2


def test_from_dlpack_takes_a_legacy_capsule_once():
    # PyTorch 2.13: torch.from_dlpack(capsule) shares the memory; a second use raises this RuntimeError.
    import warnings

    array = np.arange(3.0)
    capsule = array.__dlpack__()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = opdispatch.from_dlpack(capsule)
    array[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="DLTensor capsules can be consumed only once"):
        opdispatch.from_dlpack(capsule)
    with pytest.raises(TypeError, match="from_dlpack: expected an object with __dlpack__ .* not int"):
        opdispatch.from_dlpack(3)


@pytest.mark.parametrize("size, element", [([math.nan], "element 0 is float"), ((2, "2"), "element 1 is str"),
                                           (1.5, "element 0 is float")])
def test_a_list_argument_names_the_element_that_is_wrong(size, element):
    # (PyTorch 2.13 lists view()'s signatures; here the element at fault is named.)
    with pytest.raises(TypeError, match=rf"od::view\(\): argument 'size' \(position 2\) must be SymInt\[\], not "
                                        rf"(list|tuple): {element}, not SymInt"):
        opdispatch.ones(4).view(size)


def test_a_mode_key_of_the_wrong_type_is_named():
    # (PyTorch 2.13 raises pybind11's "Unable to cast Python instance of type <class 'int'> to C++ type '?'".)
    mode = _Passthrough()
    mode.__dict__["_mode_key"] = 12345
    before = _mode_state()
    with pytest.raises(TypeError, match=r"_Passthrough\._mode_key must be None \(a user mode\) or a "
                                        r"_C\._TorchDispatchModeKey .*, not int"):
        with mode:
            pass
    assert _mode_state() == before


class _LyingList(list):
    def __len__(self):
        return 2**40


class _LyingTuple(tuple):
    def __len__(self):
        return 2**40


def test_sizes_in_a_sequence_with_a_lying_len_are_read_as_held():
    # PyTorch 2.13: ones(4).view(a list subclass whose __len__ says 2**40) views as the items held.
    assert opdispatch.ones(4).view(_LyingList([4])).shape == (4,)
    assert opdispatch.ones(4).view(_LyingTuple([2, 2])).shape == (2, 2)


def test_the_thread_stress_script_runs_clean():
    # tests/stress/python_key_threads.py is what .ci/sanitizers.sh runs under ThreadSanitizer; briefly here.
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parent / "stress" / "python_key_threads.py"
    done = subprocess.run([sys.executable, str(script), "--seconds", "3"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.endswith(" 0 errors\n")
