"""Fuzz target: the Python key (issue 29).

Each input is a small program: it defines operators in a fresh namespace,
makes dispatch modes and tensor subclasses (wrapper and ``_make_subclass``)
whose handlers misbehave in ways the input picks -- raise, return
NotImplemented or a value of the wrong kind, pop or push modes, destroy the
running operator's library, re-enter the operator, walk the garbage
collector, call other operators -- and calls operators through every form
(OpOverload, packet, built-in methods, redispatch below the Python key,
make_fx, FakeTensorMode, a HigherOrderOperator, backward) inside nested
``with`` blocks.

Any Python exception is an acceptable outcome of a call except SystemError
(a C function that broke the C-API's contract) and pybind11's "Unable to
cast" errors (which name neither the API nor the argument). After each
program, whatever it did, the process must be as before: no mode on the
stack, the thread's dispatch key sets as before, the registry's invariants
hold and no operator of the program's namespace is left. A crash is a
finding too; .ci/fuzz-asan.sh runs this target in an AddressSanitizer build.

Interface (tests/fuzz/run.py): ``test_one_input(data)`` and ``seed_corpus()``.
"""
from __future__ import annotations

import gc
from typing import Any, Callable

import atheris

import opdispatch
from opdispatch import Tensor, _C
from opdispatch._ops import HigherOrderOperator
from opdispatch._subclasses.fake_tensor import FakeTensorMode
from opdispatch.library import Library
from opdispatch.tracing import make_fx
from opdispatch.utils import _python_dispatch
from opdispatch.utils._python_dispatch import TorchDispatchMode
from opdispatch.utils._pytree import tree_map_only

#: The namespace every program defines its operators in (free again after each program: it is checked).
NAMESPACE = "fuzz_python_key"
#: How many handler calls deep a re-entering handler goes before it passes through.
MAX_DEPTH = 4
#: Steps per program.
MAX_STEPS = 10


class _Finding(AssertionError):
    """A bug the fuzzer found (not an acceptable outcome of a call)."""


class _Program:
    """One input's state: the data provider, its libraries and its counters."""

    def __init__(self, data: bytes) -> None:
        self.fdp = atheris.FuzzedDataProvider(data)
        self.ns = NAMESPACE
        self.libs: list[Library] = []
        self.depth = 0
        self.blocks = 0  # mode blocks open
        self.operands: list[Tensor] = []

    def pick(self, n: int) -> int:
        return self.fdp.ConsumeIntInRange(0, n - 1)

    def define(self) -> None:
        lib = Library(self.ns, "FRAGMENT")
        self.libs.append(lib)
        name = f"f{len(self.libs)}"
        lib.define(f"{name}(Tensor x, int k=1) -> Tensor")
        lib.impl(name, lambda x, k=1: x.clone(), "CPU")
        if self.pick(2):
            lib.impl(name, lambda x, k=1: opdispatch.empty_like(x), "Meta")

    def handler(self, passthrough: Callable[[], Any], func: Any) -> Any:
        """What a misbehaving handler does, as the input says."""
        choice = self.pick(13)
        if choice == 1:
            return NotImplemented
        if choice == 2:
            raise ValueError("the handler refuses")
        if choice == 3:
            return [42, None, "x", [1, 2], object(), (opdispatch.ones(1),)][self.pick(6)]
        if choice == 4 and _C._len_torch_dispatch_stack() > 0:
            _python_dispatch._pop_mode()
        elif choice == 5 and self.blocks:
            _FuzzMode(self).__enter__()  # never left: the enclosing block's __exit__ must take it off
        elif choice == 6 and self.libs:
            self.libs[self.pick(len(self.libs))]._destroy()
        elif choice == 7 and self.depth < MAX_DEPTH:
            self.depth += 1
            try:
                return passthrough()
            finally:
                self.depth -= 1
        elif choice == 8:
            opdispatch.ones(2).add(1.0).sum()
        elif choice == 9:
            for o in gc.get_objects():
                if type(o) is tuple:
                    len(o)
        elif choice == 10:
            return opdispatch.zeros(self.pick(4), dtype=opdispatch.int64)
        elif choice == 11:
            raise KeyboardInterrupt
        elif choice == 12:
            return func
        return passthrough()


class _FuzzMode(TorchDispatchMode):
    def __init__(self, program: _Program) -> None:
        super().__init__()
        self.program = program

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        return self.program.handler(lambda: func(*args, **(kwargs or {})), func)


class _Wrapper(Tensor):
    program: _Program

    @staticmethod
    def __new__(cls, elem: Tensor) -> "_Wrapper":
        r = Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                          device=elem.device)
        r.elem = elem
        return r

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        def passthrough() -> Any:
            unwrap = lambda t: t.elem  # noqa: E731
            out = func(*tree_map_only(_Wrapper, unwrap, args), **tree_map_only(_Wrapper, unwrap, kwargs or {}))
            return tree_map_only(Tensor, lambda t: t if isinstance(t, _Wrapper) else _Wrapper(t), out)

        return cls.program.handler(passthrough, func)


class _Sub(Tensor):
    program: _Program

    @classmethod
    def __torch_dispatch__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        def passthrough() -> Any:
            with _C._DisableTorchDispatch():
                return func(*args, **(kwargs or {}))

        return cls.program.handler(passthrough, func)


_hop = HigherOrderOperator("fuzz_python_key_hop")


@_hop.py_impl(_C.DispatchKey.CompositeExplicitAutograd)
def _hop_dense(x: Tensor) -> Tensor:
    return x.sin()


@_hop.py_impl(_FuzzMode)
def _hop_mode(mode: _FuzzMode, x: Tensor) -> Any:
    return mode.program.handler(lambda: _hop(x), _hop)


def _operands() -> list[Tensor]:
    """The tensors calls take (made before any handler can misbehave): plain, wrapper subclass,
    ``_make_subclass`` subclass and requires-grad, each of two bases."""
    made: list[Tensor] = []
    for base in (opdispatch.ones(2, 3), opdispatch.arange(6.0).view(2, 3)):
        made += [base, _Wrapper(base), Tensor._make_subclass(_Sub, base), base.clone().requires_grad_(True)]
    return made


def _operand(p: _Program) -> Tensor:
    return p.operands[p.pick(len(p.operands))]


def _call(p: _Program) -> Any:
    """One call, of the form the input picks."""
    x = _operand(p)
    form = p.pick(11)
    ops = getattr(opdispatch.ops, p.ns)
    name = f"f{p.pick(len(p.libs)) + 1}" if p.libs else "f1"
    if form == 0:
        return getattr(ops, name).default(x, p.pick(3))
    if form == 1:
        return getattr(ops, name)(x)
    if form == 2:
        return x + _operand(p)
    if form == 3:
        return x.sum()
    if form == 4:
        return opdispatch.ops.od.mm.default(x, _operand(p).t())
    if form == 5:
        return opdispatch.ops.od.add.Tensor.redispatch(
            _C.DispatchKeySet(_C.DispatchKey.CPU), x, x)
    if form == 6:
        return make_fx(lambda t: t.sin() * 2)(x)
    if form == 7:
        with FakeTensorMode() as fake:
            return fake.from_tensor(opdispatch.ones(2)).cos()
    if form == 8:
        return _hop(x)
    if form == 9:
        y = (x * 2).sum()
        y.backward()
        return y
    return x.sin()[0]


def _nested(p: _Program) -> None:
    """Steps of the program, some inside mode blocks (nested as the input says)."""
    for _ in range(p.pick(MAX_STEPS) + 1):
        step = p.pick(4)
        try:
            if step == 0:
                p.define()
            elif step == 1 and p.fdp.remaining_bytes() > 0:
                p.blocks += 1
                try:
                    with _FuzzMode(p):
                        _nested(p)
                finally:
                    p.blocks -= 1
            else:
                _call(p)
        except (SystemError, _Finding):
            raise
        except (Exception, KeyboardInterrupt) as e:  # an acceptable outcome, if it says what is wrong
            if "Unable to cast" in str(e):
                raise _Finding(f"pybind11's unnamed cast error: {e!r}") from e


def _state() -> tuple[int, str, str, bool]:
    return (_C._len_torch_dispatch_stack(), repr(_C._dispatch_tls_local_include_set()),
            repr(_C._dispatch_tls_local_exclude_set()), _python_dispatch.is_in_torch_dispatch_mode())


def test_one_input(data: bytes) -> None:
    before = _state()
    p = _Program(data)
    _Wrapper.program = p
    _Sub.program = p
    p.operands = _operands()
    _nested(p)
    for lib in p.libs:
        lib._destroy()
    after = _state()
    if after != before:
        raise _Finding(f"the program left state behind: {before} -> {after}")
    left = [n for n in _C._dispatch_get_all_op_names() if n.startswith(p.ns + "::")]
    if left:
        raise _Finding(f"operators left after every library was destroyed: {left}")
    _C._dispatch_check_all_invariants()


def seed_corpus() -> list[bytes]:
    """Deterministic starting inputs: each handler behaviour with each call form, and a few byte patterns."""
    seeds = [bytes([0] * 64), bytes([255] * 64), bytes(range(256))]
    seeds += [bytes([(i * 37 + j * 11) % 256 for j in range(128)]) for i in range(21)]
    return seeds
