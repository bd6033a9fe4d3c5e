"""Counting and timing operator calls inside the dispatcher: a Python backend
fallback at the ``Python`` dispatch key, switched on for a block by adding
that key to the thread's included key set. No Python function is wrapped."""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from .. import _C
from ..library import Library

_PYTHON_KEYSET = _C.DispatchKeySet(_C.DispatchKey.Python)
_BELOW_PYTHON = _C._dispatch_keyset_full_after(_C.DispatchKey.Python)


@dataclasses.dataclass
class OpStats:
    """What one operator (overload) cost while an OpCounter was on."""

    calls: int = 0
    total_ns: int = 0  # from the fallback to the kernel's return, nested operator calls included
    self_ns: int = 0  # total_ns minus the operator calls its kernel made

    @property
    def us_per_call(self) -> float:
        return self.total_ns / self.calls / 1e3


# Note [Counting at the Python key]
# The counter needs a key every call passes through and whose fallback it can
# own. PythonDispatcher and PreDispatch (the highest keys) already hold the
# core's fallthrough fallbacks (csrc/opdispatch/DefaultFallbacks.cpp)
# and a key has one fallback, so the counter uses the Python key, where
# PyTorch's dispatch modes (TorchDispatchMode) sit. It is below the Autograd
# keys: an autograd kernel redispatches with `keyset & after_autograd_keyset`,
# which keeps Python, so every call is counted once; the time is the
# operator's kernel and the dispatch below autograd, not the recording of the
# graph node (that shows in the training time outside operators). A
# CompositeImplicitAutograd operator called on tensors that require grad
# decomposes at the Autograd key, above Python: its parts are counted, not it.
# Calls made by a kernel (a nested call) are counted too; their time is
# subtracted from the caller's self time, so self times add up to the time
# spent inside operators.


class OpCounter:
    """``with OpCounter() as counter:`` counts and times every operator call
    made in the block by this thread; ``counter.stats`` maps "ns::op.overload"
    to :class:`OpStats`. See Note [Counting at the Python key].

    Raises RuntimeError on entry if the Python key already has a backend
    fallback (another counter or a Python mode is active).
    """

    def __init__(self) -> None:
        self.stats: dict[str, OpStats] = {}
        self.nested_calls = 0
        # Per active call: the total time of the operator calls it made so far.
        self._children_ns: list[int] = []
        self._lib: Library | None = None
        self._guard: Any = None

    def __enter__(self) -> OpCounter:
        self._lib = Library("_", "IMPL", "Python")
        try:
            self._lib.fallback(self._count, with_keyset=True)
        except RuntimeError:
            self._lib._destroy()
            raise
        self._guard = _C._IncludeDispatchKeyGuard(_PYTHON_KEYSET)
        self._guard.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._guard.__exit__(*exc)
        self._lib._destroy()
        self._lib = self._guard = None

    def _count(self, keyset: _C.DispatchKeySet, op: Any, *args: Any, **kwargs: Any) -> Any:
        """The fallback: times the rest of the dispatch (``redispatch`` below the Python key)."""
        children = self._children_ns
        if children:
            self.nested_calls += 1
        children.append(0)
        start = time.perf_counter_ns()
        try:
            return op.redispatch(keyset & _BELOW_PYTHON, *args, **kwargs)
        finally:
            elapsed = time.perf_counter_ns() - start
            nested = children.pop()
            if children:
                children[-1] += elapsed
            stats = self.stats.get(op._name)
            if stats is None:
                stats = self.stats[op._name] = OpStats()
            stats.calls += 1
            stats.total_ns += elapsed
            stats.self_ns += elapsed - nested

    @property
    def calls(self) -> int:
        """All counted calls, nested ones included."""
        return sum(s.calls for s in self.stats.values())

    @property
    def self_ns(self) -> int:
        """The time spent inside operators (each nanosecond counted once)."""
        return sum(s.self_ns for s in self.stats.values())

    def table(self) -> list[str]:
        """One line per operator, the most expensive (self time) first, under a header."""
        width = max([len("operator"), *(len(name) for name in self.stats)])
        lines = [f"  {'operator':<{width}}  {'calls':>7}  {'total ms':>9}  {'self ms':>8}  {'us/call':>8}"]
        for name, s in sorted(self.stats.items(), key=lambda item: -item[1].self_ns):
            lines.append(f"  {name:<{width}}  {s.calls:>7,}  {s.total_ns / 1e6:>9.1f}  {s.self_ns / 1e6:>8.1f}"
                         f"  {s.us_per_call:>8.1f}")
        return lines


def counting_overhead(fn: Callable[[], Any], repeats: int = 5) -> tuple[float, float, int]:
    """Measures what counting adds: runs ``fn`` ``repeats`` times without and
    with an :class:`OpCounter` (alternating) and returns ``(seconds without,
    seconds with, operator calls)`` of one run, taking the fastest run of each
    kind (the least disturbed by other processes)."""
    plain, counted = float("inf"), float("inf")
    calls = 0
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        plain = min(plain, time.perf_counter() - start)
        with OpCounter() as counter:
            start = time.perf_counter()
            fn()
            counted = min(counted, time.perf_counter() - start)
        calls = counter.calls
    return plain, counted, calls
