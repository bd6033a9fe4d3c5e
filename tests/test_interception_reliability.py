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

import sys
import threading
import time

import pytest

import opdispatch
from opdispatch import _ops, library


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
