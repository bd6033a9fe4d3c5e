"""Thread stress of the Python key (issue 29): the mix of work real programs
run on several threads at once, for a bounded time.

    python tests/stress/python_key_threads.py --seconds N

Each worker runs in a loop on its own thread (with a tiny switch interval,
so threads change places between almost every bytecode):
  - a dispatch mode entered and left around calls;
  - calls on a wrapper subclass;
  - a Library defining, implementing, calling and destroying an operator;
  - the Python dispatcher enabled and disabled around calls;
  - a HigherOrderOperator's py_impl registered again while another worker calls it;
  - packet lookups of an operator another worker defines and destroys.
Every result is checked; the only exceptions accepted are the ones a lost
race may raise by design (AttributeError for an operator destroyed while
looked up, RuntimeError "no overload" for one destroyed between lookup and
call, NotImplementedError for one called between its definition and its
kernel's registration, or for a HigherOrderOperator called between the
removal of its kernel and its registration again). At the end no mode is on any stack and the registry's invariants
hold. Exits 1 with the errors found. .ci/sanitizers.sh runs it in the
ThreadSanitizer build, where any data race the C++ core or _C has in this
mix is a report; tests/test_stress_scripts.py runs it briefly in the suite.
"""
from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any, Callable

import opdispatch
from opdispatch import Tensor, _C
from opdispatch._dispatch.python import enable_python_dispatcher
from opdispatch._ops import HigherOrderOperator
from opdispatch.library import Library
from opdispatch.utils._python_dispatch import TorchDispatchMode
from opdispatch.utils._pytree import tree_map_only


class Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return func(*args, **(kwargs or {}))


class Wrapper(Tensor):
    @staticmethod
    def __new__(cls, elem: Tensor) -> "Wrapper":
        r = Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        unwrap = lambda t: t.elem  # noqa: E731
        out = func(*tree_map_only(Wrapper, unwrap, args), **tree_map_only(Wrapper, unwrap, kwargs or {}))
        return tree_map_only(Tensor, Wrapper, out)


def _expect(got: Any, want: list[float], what: str) -> None:
    if got != want:
        raise AssertionError(f"{what}: got {got}, expected {want}")


def mode_worker() -> None:
    x = opdispatch.ones(3)
    with Passthrough():
        y = x.mul(2.0).add(1.0)
    _expect(y.tolist(), [3.0, 3.0, 3.0], "under a mode")


def subclass_worker() -> None:
    w = Wrapper(opdispatch.arange(3.0))
    _expect((w + w).elem.tolist(), [0.0, 2.0, 4.0], "wrapper subclass")


def library_worker() -> None:
    ns = f"stress_lib_{threading.get_ident()}"
    lib = Library(ns, "FRAGMENT")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: x.add(1.0), "CPU")
        _expect(getattr(opdispatch.ops, ns).f(opdispatch.zeros(2)).tolist(), [1.0, 1.0], "a fresh library")
    finally:
        lib._destroy()


def python_dispatcher_worker() -> None:
    with enable_python_dispatcher():
        y = opdispatch.ones(2).sin()
    _expect([round(v, 4) for v in y.tolist()], [0.8415, 0.8415], "under the Python dispatcher")


hop = HigherOrderOperator("stress_hop")


def _twice(x: Tensor) -> Tensor:
    return x.mul(2.0)


def _double(x: Tensor) -> Tensor:
    return x.add(x)


def hop_register_worker() -> None:
    key = _C.DispatchKey.CompositeExplicitAutograd
    for kernel in (_twice, _double):
        hop.py_kernels.pop(key, None)  # (py_impl refuses to override: the kernel is removed first, as in PyTorch)
        hop.py_impl(key)(kernel)


def hop_call_worker() -> None:
    try:
        _expect(hop(opdispatch.ones(2)).tolist(), [2.0, 2.0], "a HigherOrderOperator being registered again")
    except NotImplementedError as e:
        if "could not find kernel" not in str(e):  # (called between the removal and the registration)
            raise


RACED_NS = "stress_raced"


def define_destroy_worker() -> None:
    lib = Library(RACED_NS, "FRAGMENT")
    try:
        lib.define("g(Tensor x) -> Tensor")
        lib.impl("g", lambda x: x.clone(), "CPU")
    finally:
        lib._destroy()


def lookup_worker() -> None:
    try:
        packet = opdispatch.ops.stress_raced.g
        _expect(packet(opdispatch.ones(1)).tolist(), [1.0], "a raced packet")
    except AttributeError:
        pass  # destroyed before the lookup
    except NotImplementedError as e:
        if "has no kernel for this key" not in str(e):  # (called between the define and the impl)
            raise
    except RuntimeError as e:
        if "no overload" not in str(e) and "is not registered" not in str(e):
            raise


WORKERS: list[Callable[[], None]] = [
    mode_worker, mode_worker, subclass_worker, library_worker, library_worker, python_dispatcher_worker,
    hop_register_worker, hop_call_worker, define_destroy_worker, lookup_worker,
]


def storm(seconds: float, *workers: Callable[[], None]) -> list[BaseException]:
    """Runs each worker in a loop on its own thread for ``seconds``, with a
    tiny switch interval; returns the exceptions the workers raised."""
    errors: list[BaseException] = []
    stop = threading.Event()

    def loop(work: Callable[[], None]) -> None:
        while not stop.is_set():
            try:
                work()
            except BaseException as e:  # noqa: BLE001 (returned)
                errors.append(e)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    threads = [threading.Thread(target=loop, args=(w,), name=w.__name__) for w in workers]
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


def run(seconds: float) -> list[BaseException]:
    """The worker mix for ``seconds``; returns what the workers raised and any state left behind."""
    hop_register_worker()
    errors = storm(seconds, *WORKERS)
    if _C._len_torch_dispatch_stack() != 0:
        errors.append(AssertionError(f"{_C._len_torch_dispatch_stack()} modes left on the main thread's stack"))
    _C._dispatch_check_all_invariants()
    return errors


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="how long to run (default 30)")
    args = parser.parse_args(argv)
    errors = run(args.seconds)
    for e in errors[:20]:
        print(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr)
    print(f"python_key_threads: {len(WORKERS)} workers for {args.seconds} s, {len(errors)} errors")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
