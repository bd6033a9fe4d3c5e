"""Counting and timing operator calls inside the dispatcher: a dispatch mode
(TorchDispatchMode) that sees every operator call reaching the ``Python``
dispatch key while it is active. No Python function is wrapped."""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Optional

from .. import _C
from ..utils._python_dispatch import TorchDispatchMode

_BELOW_PYTHON = _C._dispatch_keyset_full_after(_C.DispatchKey.Python)


@dataclasses.dataclass
class OpStats:
    """What one operator (overload) cost while an OpCounter was on."""

    calls: int = 0
    total_ns: int = 0  # from the mode to the kernel's return, nested operator calls included
    self_ns: int = 0  # total_ns minus the operator calls its kernel made

    @property
    def us_per_call(self) -> float:
        return self.total_ns / self.calls / 1e3


# Note [Counting with a dispatch mode]
# While the counter is active the thread includes the Python key, so every
# operator call reaches its __torch_dispatch__, below the Autograd keys: an
# autograd kernel redispatches below autograd, which keeps Python, so every
# call is counted once; the time is the operator's kernel and the dispatch
# below autograd, not the recording of the graph node (that shows in the
# training time outside operators). A CompositeImplicitAutograd operator
# called on tensors that require grad decomposes at the Autograd key, above
# Python: its parts are counted, not it. A mode runs with itself popped, so to
# see the calls a kernel makes (nested calls), the counter calls the kernel
# below the Python key itself (``func.redispatch``) with itself pushed again;
# their time is subtracted from the caller's self time, so self times add up
# to the time spent inside operators. (So a mode entered before the counter
# sees none of the calls the counter counts.)


class OpCounter(TorchDispatchMode):
    """``with OpCounter() as counter:`` counts and times every operator call
    made in the block by this thread; ``counter.stats`` maps "ns::op.overload"
    to :class:`OpStats`. See Note [Counting with a dispatch mode]."""

    def __init__(self) -> None:
        super().__init__()
        self.stats: dict[str, OpStats] = {}
        self.nested_calls = 0
        # Per active call: the total time of the operator calls it made so far.
        self._children_ns: list[int] = []

    def __torch_dispatch__(self, func: Any, types: tuple[Any, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """Times the rest of the dispatch (the kernels below the Python key)."""
        children = self._children_ns
        if children:
            self.nested_calls += 1
        keyset = _C._dispatch_tls_local_include_set()
        for a in (*args, *(kwargs or {}).values()):
            if isinstance(a, _C.TensorBase):
                keyset = keyset | _C._dispatch_keys(a)
            elif isinstance(a, (list, tuple)):
                for t in a:
                    if isinstance(t, _C.TensorBase):
                        keyset = keyset | _C._dispatch_keys(t)
        children.append(0)
        start = time.perf_counter_ns()
        try:
            with self:
                return func.redispatch(keyset & _BELOW_PYTHON, *args, **(kwargs or {}))
        finally:
            elapsed = time.perf_counter_ns() - start
            nested = children.pop()
            if children:
                children[-1] += elapsed
            stats = self.stats.get(func._name)
            if stats is None:
                stats = self.stats[func._name] = OpStats()
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
