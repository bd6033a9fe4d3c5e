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
import itertools
import sys
import threading
import time

import pytest

import opdispatch
from opdispatch import _C, _ops, library
from opdispatch.tracing import make_fx
from opdispatch.utils import _python_dispatch
from opdispatch.utils._python_dispatch import TorchDispatchMode


def _storm(seconds, *workers):
    """Runs each worker in a loop in its own thread for ``seconds`` with a
    tiny switch interval; returns the exceptions the workers raised."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def loop(work):
        while not stop.is_set():
            try:
                work()
            except BaseException as e:  # noqa: BLE001 (collected and asserted on)
                errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=loop, args=(w,)) for w in workers]
    try:
        for t in threads:
            t.start()
        time.sleep(seconds)
    finally:
        stop.set()
        for t in threads:
            t.join()
        sys.setswitchinterval(interval)
    return errors


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


@pytest.mark.parametrize("case", ["with_mode", "make_fx"])
def test_a_keyboard_interrupt_anywhere_in_a_mode_leaves_nothing_behind(case):
    x = opdispatch.ones(3)

    def with_mode():
        with _Passthrough():
            x + 1

    def traced():
        make_fx(lambda a: a * 2 + 1)(x)

    fn = {"with_mode": with_mode, "make_fx": traced}[case]
    fn()  # warm caches and lazy imports first
    before = _mode_state()
    left = []
    runs = 0
    for n, where in _interrupt_at_each_boundary(fn):
        runs += 1
        if where == ("call", "__exit__"):
            # The one point Python code cannot guard: the entry of __exit__ itself
            # (Note [Entering and leaving a mode]). Reset and go on.
            while _C._len_torch_dispatch_stack():
                _C._pop_torch_dispatch_stack(None)
            _python_dispatch._is_in_torch_dispatch_mode = False
            _python_dispatch._is_in_non_infra_torch_dispatch_mode = False
            continue
        if _mode_state() != before:
            left.append((n, where, _mode_state()))
            while _C._len_torch_dispatch_stack():
                _C._pop_torch_dispatch_stack(None)
    assert runs > 5
    assert left == []
