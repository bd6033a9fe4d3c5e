"""Symbolic sizes for fake tracing: ``ctx.new_dynamic_size()`` under
FakeTensorMode (or make_fx) returns a :class:`SymInt` named ``u0``, ``u1``,
... that FakeTensor shapes, strides and traced graphs carry instead of a
made-up size. PyTorch: torch.SymInt and ShapeEnv.create_unbacked_symint
(torch/fx/experimental/symbolic_shapes.py), reduced to what opdispatch needs.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Optional, Union

__all__ = ["GuardOnDataDependentSymNode", "ShapeEnv", "SymInt"]

# Note [Symbolic sizes]
# opdispatch tensors have int64 sizes, and meta kernels compute with ints. A
# SymInt therefore carries a *hint*: a distinctive placeholder value (see
# ShapeEnv) that stands for it wherever an int is needed below the Python key
# -- the meta twin of a FakeTensor, an argument converted by the dispatcher
# (SymInt.__index__). Everything the user sees maps placeholders back to
# symbols: FakeTensorMode rewrites its outputs' sizes and strides
# (ShapeEnv.symbolize), and the make_fx tracer rewrites the ints it records.
# A size computed from placeholders is recognised when it is a placeholder
# times an int or a placeholder plus a small int; any other size at or above
# the placeholders' range raises rather than showing a made-up number. Limits:
# only unbacked sizes (from new_dynamic_size) are symbolic, never the inputs'
# sizes (no tracing_mode="symbolic"); an expression has one symbol; a real
# size equal to a placeholder would be read as the symbol (placeholders start
# at 10**9, far above test-sized data); comparing a SymInt with an int raises
# GuardOnDataDependentSymNode, as PyTorch does for unbacked symbols.

_HINT_BASE = 1_000_000_007
_HINT_STEP = 1_000_003
_MAX_OFFSET = 100_000


class GuardOnDataDependentSymNode(RuntimeError):
    """Python code asked for the value of a data-dependent size (``u0 == 5``,
    ``int(u0)``): it is unknown until the data is. PyTorch: same name."""


class SymInt:
    """An int known by name: ``coeff * symbol + offset`` (``u0``, ``3*u0``,
    ``u0 + 2``). Supports ``+``/``-``/``*`` with ints, ``==`` with SymInts
    (same expression), ``hash``, and ``__index__`` (its placeholder, for the
    dispatcher; Note [Symbolic sizes]). ``int()``, ``bool()`` and comparing
    with an int raise GuardOnDataDependentSymNode."""

    __slots__ = ("symbol", "coeff", "offset", "_env")

    def __init__(self, symbol: str, env: ShapeEnv, coeff: int = 1, offset: int = 0) -> None:
        self.symbol, self.coeff, self.offset, self._env = symbol, coeff, offset, env

    @property
    def node(self) -> str:
        """The expression's text (PyTorch: SymInt.node)."""
        return str(self)

    def hint(self) -> int:
        """The placeholder value standing for this expression below the Python key."""
        return self.coeff * self._env.hint_of(self.symbol) + self.offset

    def evaluate(self, values: dict[str, int]) -> int:
        """The value given the symbols' values (a traced graph replayed on data)."""
        return self.coeff * values[self.symbol] + self.offset

    def __index__(self) -> int:
        return self.hint()

    def _guard(self, what: str) -> GuardOnDataDependentSymNode:
        return GuardOnDataDependentSymNode(
            f"Could not guard on data-dependent expression {what}: {self.symbol} is a size that depends on the "
            f"data (from ctx.new_dynamic_size()), unknown while tracing. Avoid branching on it.")

    def __int__(self) -> int:
        raise self._guard(f"int({self})")

    def __bool__(self) -> bool:
        raise self._guard(f"bool({self})")

    def _combine(self, other: Any, op: Callable[[int, int], int], text: str) -> SymInt:
        if isinstance(other, bool) or not isinstance(other, int):
            return NotImplemented  # type: ignore[no-any-return]  # typeshed's NotImplementedType derives from Any
        if text == "*":
            return SymInt(self.symbol, self._env, self.coeff * other, self.offset * other)
        return SymInt(self.symbol, self._env, self.coeff, op(self.offset, other))

    def __add__(self, other: Any) -> SymInt:
        return self._combine(other, operator.add, "+")

    __radd__ = __add__

    def __sub__(self, other: Any) -> SymInt:
        return self._combine(other, operator.sub, "-")

    def __mul__(self, other: Any) -> SymInt:
        return self._combine(other, operator.mul, "*")

    __rmul__ = __mul__

    def _key(self) -> tuple[str, int, int]:
        return (self.symbol, self.coeff, self.offset)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SymInt):
            return self._key() == other._key()
        if isinstance(other, int):
            raise self._guard(f"{self} == {other}")
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __lt__(self, other: object) -> bool:
        raise self._guard(f"{self} < {other}")

    __le__ = __gt__ = __ge__ = __lt__

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        text = self.symbol if self.coeff == 1 else f"{self.coeff}*{self.symbol}"
        if self.offset:
            text += f" + {self.offset}" if self.offset > 0 else f" - {-self.offset}"
        return text

    __repr__ = __str__


Size = Union[int, SymInt]


class ShapeEnv:
    """Creates the unbacked symbols of one fake-tracing session and maps
    placeholder-derived ints back to them. PyTorch: ShapeEnv."""

    def __init__(self) -> None:
        self._hints: dict[str, int] = {}
        self.var_to_range: dict[str, tuple[int, Optional[int]]] = {}

    def create_unbacked_symint(self, min: int = 0, max: Optional[int] = None) -> SymInt:
        """A new symbol ``u<k>`` for a size in [min, max] (max None: unbounded)."""
        name = f"u{len(self._hints)}"
        self._hints[name] = _HINT_BASE + len(self._hints) * _HINT_STEP
        self.var_to_range[name] = (min, max)
        return SymInt(name, self)

    def hint_of(self, symbol: str) -> int:
        """The int that stands for ``symbol`` ("u0") in the meta tensors'
        sizes (its placeholder). KeyError for an unknown symbol."""
        return self._hints[symbol]

    def symbolize(self, value: int) -> Size:
        """``value`` itself, or the SymInt whose placeholder it is (Note
        [Symbolic sizes]). Raises RuntimeError for a value computed from
        placeholders in a way this cannot express."""
        if not self._hints or value < _HINT_BASE - _MAX_OFFSET:
            return value
        for name, hint in self._hints.items():
            if abs(value - hint) < _MAX_OFFSET:
                return SymInt(name, self, 1, value - hint)
            if value % hint == 0 and value // hint < _HINT_BASE - _MAX_OFFSET:  # not a product of two symbols
                return SymInt(name, self, value // hint, 0)
        raise RuntimeError(
            f"a size computed from data-dependent sizes ({', '.join(self._hints)}) is not of the form k*u or u+c "
            f"that opdispatch's symbolic sizes express (it came out as {value}); see Note [Symbolic sizes] in "
            f"opdispatch/_subclasses/symbolic_shapes.py")
