"""Fuzz target: binding the arguments of operator calls (issue 9).

Random Python values -- ints of every size (NumPy scalars too), floats,
bools, strings with lone surrogates, None, lists, nested lists, tuples,
ndarrays of every dimension, tensors of several dtypes and devices, objects
whose __index__ / __float__ / __len__ / __getitem__ misbehave -- are passed,
positionally and by keyword, to operators defined with a sample of the real
schemas of tests/data/schemas.txt. Each schema is defined twice: with a
Python kernel that checks the Python types it receives (and returns either
proper or random values, to fuzz the conversion of results), and with a C++
kernel (tests/fuzz/call_binding_kernels.cpp) that checks the IValue kind of
every argument against its schema type. Calls go through the packet, the
overload and the boxed handle.

The only acceptable outcomes are a result, or a TypeError, ValueError,
OverflowError, RuntimeError or NotImplementedError whose message names the
operator. Anything else (another exception, an error that does not name the
operator, a kernel that saw a value of the wrong type, a crash) is a bug.

Interface (tests/fuzz/run.py): ``test_one_input(data)`` and ``seed_corpus()``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import atheris
import numpy as np

import opdispatch
from opdispatch import _C, cpp_extension
from opdispatch.library import Library

HERE = Path(__file__).resolve().parent
SCHEMAS = HERE.parent / "data" / "schemas.txt"
NS = "fuzz_call_binding"
ACCEPTED = (TypeError, ValueError, OverflowError, RuntimeError, NotImplementedError)

# --- the operators --------------------------------------------------------------------

#: Types (as Argument.type prints them, with the N of T[N]) whose schemas are all kept
#: up to this many each, so rare types are fuzzed as often as common ones.
PER_TYPE = 3
#: Every this-many-th schema is kept besides.
EVERY = 40


def _arg_type(a: Any) -> str:
    """The argument's type as the schema spells it ("int[2]", "Tensor?")."""
    spelled = a.real_type.str()
    return spelled if a.N is None else re.sub(r"\[\]", f"[{a.N}]", spelled, count=1)


def _sample_schemas() -> list[str]:
    """Schema texts (without the "ns::name.overload" head) covering every argument type."""
    chosen: dict[str, str] = {}
    per_type: dict[str, int] = {}
    for i, line in enumerate(SCHEMAS.read_text().splitlines()):
        line = line.strip()
        if not line:
            continue
        try:
            schema = _C.parse_schema(line)
        except ValueError:
            continue
        signature = line[line.index("("):]
        keep = i % EVERY == 0
        for a in list(schema.arguments) + list(schema.returns):
            t = _arg_type(a)
            if per_type.get(t, 0) < PER_TYPE:
                per_type[t] = per_type.get(t, 0) + 1
                keep = True
        if keep:
            chosen.setdefault(signature, signature)
    return list(chosen)


class Op:
    """One fuzzed operator: its OpOverload, schema and kernel kind."""

    def __init__(self, name: str, kernel: str) -> None:
        self.name = f"{NS}::{name}"
        self.kernel = kernel
        self.packet = getattr(getattr(opdispatch.ops, NS), name)
        self.overload = self.packet.default
        self.schema = self.overload._schema
        self.handle = _C._dispatch_find_schema_or_throw(self.name, "")


_lib = Library(NS, "DEF")
_ext = cpp_extension.load("call_binding", [HERE / "call_binding_kernels.cpp"])
OPS: list[Op] = []

#: What the Python kernels return on the current call: None for proper values of the
#: return types, else a list of (random) values to return.
_returns: list[Any] | None = None


def _check_python_value(op: str, arg: Any, value: Any) -> None:
    """AssertionError (a bug) unless ``value`` has the Python type binding promises for ``arg``."""
    t = arg.real_type.str()
    if t.endswith("?"):
        if value is None:
            return
        t = t[:-1]
    ok = {
        "Tensor": lambda v: isinstance(v, _C.TensorBase),
        "int": lambda v: type(v) is int, "SymInt": lambda v: type(v) is int,
        "Layout": lambda v: type(v) is int, "MemoryFormat": lambda v: type(v) is int,
        "float": lambda v: type(v) is float, "bool": lambda v: type(v) is bool,
        "str": lambda v: type(v) is str, "Scalar": lambda v: type(v) in (int, float, bool),
        "ScalarType": lambda v: isinstance(v, _C.dtype), "Device": lambda v: isinstance(v, _C.device),
    }.get(t)
    if t.endswith("]"):
        ok = lambda v: type(v) is list  # noqa: E731
    if ok is not None and not ok(value):
        raise AssertionError(f"BINDING BUG: {op}: argument '{arg.name}' of type {arg.type} reached the Python "
                             f"kernel as {type(value).__name__}: {value!r}")


def _proper(t: str) -> Any:
    """A value of schema type ``t`` for a result."""
    if t.endswith("?"):
        return None
    if t.endswith("]"):
        return []
    return {"Tensor": lambda: _C.empty((0,)), "float": lambda: 0.0, "bool": lambda: False, "str": lambda: "",
            "ScalarType": lambda: opdispatch.float32, "Device": lambda: _C.device("cpu")}.get(t, lambda: 0)()


def _python_kernel(name: str, schema: Any) -> Callable[..., Any]:
    arguments = list(schema.arguments)
    by_name = {a.name: a for a in arguments}
    returns = [r.real_type.str() for r in schema.returns]

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if len(args) > len(arguments):
            raise AssertionError(f"BINDING BUG: {name} got {len(args)} positional arguments")
        for a, v in zip(arguments, args):
            _check_python_value(name, a, v)
        for k, v in kwargs.items():
            if k not in by_name:
                raise AssertionError(f"BINDING BUG: {name} got unknown keyword {k!r}")
            _check_python_value(name, by_name[k], v)
        values = [_proper(t) for t in returns] if _returns is None else _returns[:len(returns)]
        if len(returns) == 0:
            return None if _returns is None or not _returns else _returns[0]
        if len(returns) == 1:
            return values[0] if values else None
        return tuple(values)

    return kernel


def _define_ops() -> None:
    for i, signature in enumerate(_sample_schemas()):
        for kernel in ("py", "cpp"):
            name = f"{kernel}{i}"
            try:
                _lib.define(name + signature)
            except (ValueError, RuntimeError):
                continue
            op = Op(name, kernel)
            if kernel == "py":
                _lib.impl(name, _python_kernel(op.name, op.schema), "CompositeExplicitAutograd")
            else:
                opdispatch.ops.call_binding.install(op.name, "CompositeExplicitAutograd")
            OPS.append(op)


_define_ops()

# --- values -------------------------------------------------------------------------------

BIG_INTS = [0, 1, -1, 2**31, 2**32, 2**63 - 1, 2**63, -2**63, -2**63 - 1, 2**64 - 1, 2**64, 10**30, -10**30,
            2**1000, 10**5000]
FLOATS = [0.0, -0.0, 1.5, float("nan"), float("inf"), float("-inf"), 1e308, -1e-320, 2.0**63, 2.0**64]
STRINGS = ["", "cpu", "meta", "cuda", "cuda:0", "cpu:1", "cpu:-1", "privateuseone", "tpu", "float32", "int64",
           "mean", "\ud800", "cpu\udcff", "é", "\x00", "a" * 300, "CPU", "Autograd"]
NUMPY_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
NUMPY_FLOATS = [np.float16, np.float32, np.float64]
DTYPES = [opdispatch.float32, opdispatch.float64, opdispatch.int64, opdispatch.int32, opdispatch.bool,
          opdispatch.uint8, opdispatch.float16, opdispatch.complex64]
DEVICES = ["cpu", "meta", "privateuseone"]


class Boom(Exception):
    """Raised by the odd objects' methods."""


class Odd:
    """Base of objects whose conversion method returns ``result`` (of any type) or raises it."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def _give(self) -> Any:
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


class OddIndex(Odd):
    def __index__(self) -> Any:
        return self._give()


class OddFloat(Odd):
    def __float__(self) -> Any:
        return self._give()


class ListClearingIndex:
    """An int-like object whose __index__ empties the list that holds it."""

    def __init__(self) -> None:
        self.holder: list[Any] = []

    def __index__(self) -> int:
        self.holder.clear()
        return 3


class OddSequence:
    """A sequence whose __len__ and __getitem__ disagree, or raise."""

    def __init__(self, length: Any, items: list[Any], fail_at: int) -> None:
        self.length, self.items, self.fail_at = length, items, fail_at

    def __len__(self) -> Any:
        if isinstance(self.length, BaseException):
            raise self.length
        return self.length

    def __getitem__(self, i: int) -> Any:
        if i == self.fail_at:
            raise Boom("getitem")
        return self.items[i]


def _odd(fdp: atheris.FuzzedDataProvider) -> Any:
    k = fdp.ConsumeIntInRange(0, 13)
    if k == 0:
        return OddIndex(fdp.PickValueInList(BIG_INTS))
    if k == 1:
        return OddIndex(fdp.PickValueInList([Boom("index"), ValueError("index"), TypeError("index"),
                                             OverflowError("index"), KeyError("index")]))
    if k == 2:
        return OddIndex(fdp.PickValueInList([1.5, "3", None, True]))
    if k == 3:
        return OddFloat(fdp.PickValueInList([1.5, Boom("float"), ValueError("float"), "x", 10**400]))
    if k == 4:
        obj = ListClearingIndex()
        obj.holder.extend([1, obj, 2, 3])
        return obj.holder
    if k == 5:
        length = fdp.PickValueInList([0, 2, 5, 2**62, -1, Boom("len")])
        return OddSequence(length, [1, 2, 3], fdp.ConsumeIntInRange(0, 4))
    if k == 6:
        return object()
    if k == 7:
        return fdp.PickValueInList(DTYPES)
    if k == 8:
        return _C.device(fdp.PickValueInList(DEVICES))
    if k == 9:
        return range(fdp.ConsumeIntInRange(0, 4))
    if k == 10:
        return fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 4))
    if k == 11:
        return {"a": 1}
    if k == 12:
        return complex(1, 2)
    return opdispatch.float32.to_numpy()


def _ndarray(fdp: atheris.FuzzedDataProvider) -> np.ndarray:
    ndim = fdp.ConsumeIntInRange(0, 3)
    shape = tuple(fdp.ConsumeIntInRange(0, 3) for _ in range(ndim))
    dtype = fdp.PickValueInList([np.int64, np.int32, np.uint64, np.float32, np.float64, np.bool_, object])
    a = np.zeros(shape, dtype=dtype)
    if a.size and dtype is not object:
        a.flat[0] = fdp.ConsumeIntInRange(-3, 3) if dtype is not np.uint64 else 2**64 - 1
    return a


def _tensor(fdp: atheris.FuzzedDataProvider) -> Any:
    shape = tuple(fdp.ConsumeIntInRange(0, 3) for _ in range(fdp.ConsumeIntInRange(0, 2)))
    dtype = fdp.PickValueInList(DTYPES)
    t = _C.empty(shape, dtype=dtype, device=fdp.PickValueInList(DEVICES))
    if fdp.ConsumeIntInRange(0, 7) == 0 and (dtype.is_floating_point or dtype.is_complex):
        t.requires_grad = True
    return t


def _int(fdp: atheris.FuzzedDataProvider) -> Any:
    k = fdp.ConsumeIntInRange(0, 4)
    if k == 0:
        return fdp.ConsumeIntInRange(-4, 4)
    if k == 1:
        return fdp.ConsumeInt(fdp.ConsumeIntInRange(1, 17))
    if k == 2:
        return fdp.PickValueInList(BIG_INTS)
    if k == 3:
        cls = fdp.PickValueInList(NUMPY_INTS)
        info = np.iinfo(cls)
        return cls(fdp.PickValueInList([0, 1, info.max, info.min]))
    return fdp.PickValueInList([True, False])


def _float(fdp: atheris.FuzzedDataProvider) -> Any:
    k = fdp.ConsumeIntInRange(0, 2)
    if k == 0:
        return fdp.ConsumeRegularFloat()
    if k == 1:
        return fdp.PickValueInList(FLOATS)
    return fdp.PickValueInList(NUMPY_FLOATS)(fdp.PickValueInList([0.5, 1e4, -2.0]))


def _str(fdp: atheris.FuzzedDataProvider) -> str:
    return fdp.PickValueInList(STRINGS) if fdp.ConsumeBool() else fdp.ConsumeUnicode(fdp.ConsumeIntInRange(0, 8))


def random_value(fdp: atheris.FuzzedDataProvider, depth: int = 0) -> Any:
    """Any Python value (lists nest up to three levels)."""
    k = fdp.ConsumeIntInRange(0, 11 if depth < 3 else 8)
    if k == 0:
        return _int(fdp)
    if k == 1:
        return _float(fdp)
    if k == 2:
        return _str(fdp)
    if k == 3:
        return None
    if k == 4:
        return _ndarray(fdp)
    if k == 5:
        return _tensor(fdp)
    if k == 6:
        return _odd(fdp)
    if k in (7, 8):
        return fdp.PickValueInList([True, False, np.bool_(True)])
    items = [random_value(fdp, depth + 1) for _ in range(fdp.ConsumeIntInRange(0, 4))]
    return tuple(items) if k == 9 else items


def typed_value(fdp: atheris.FuzzedDataProvider, t: str, depth: int = 0) -> Any:
    """Mostly a value meant for schema type ``t`` (edge cases included), sometimes any value."""
    if fdp.ConsumeIntInRange(0, 9) == 9 or depth > 3:
        return random_value(fdp, depth)
    if t.endswith("?"):
        return None if fdp.ConsumeIntInRange(0, 3) == 0 else typed_value(fdp, t[:-1], depth)
    m = re.fullmatch(r"(.*)\[(\d*)\]", t)
    if m:
        n = fdp.ConsumeIntInRange(0, 4)
        items = [typed_value(fdp, m.group(1), depth + 1) for _ in range(n)]
        shape = fdp.ConsumeIntInRange(0, 3)
        if m.group(2) and shape == 0:
            return typed_value(fdp, m.group(1), depth + 1)  # T[N] takes one value
        return tuple(items) if shape == 1 else items
    if t == "Tensor":
        return _tensor(fdp)
    if t in ("int", "SymInt", "Layout", "MemoryFormat"):
        return _int(fdp)
    if t == "float":
        return _float(fdp)
    if t == "bool":
        return fdp.PickValueInList([True, False, np.bool_(False)])
    if t == "str":
        return _str(fdp)
    if t == "Scalar":
        return fdp.PickValueInList([_int, _float])(fdp)
    if t == "ScalarType":
        return fdp.PickValueInList(DTYPES + [4, 6, 99, -1])
    if t == "Device":
        return fdp.PickValueInList([_str(fdp), _C.device("meta"), "cpu"])
    return random_value(fdp, depth)


# --- one input ------------------------------------------------------------------------------


def _call(fdp: atheris.FuzzedDataProvider) -> tuple[Op, Callable[[], Any]]:
    op = OPS[fdp.ConsumeIntInRange(0, len(OPS) - 1)]
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    positional = True
    for a in op.schema.arguments:
        if a.has_default_value() and fdp.ConsumeIntInRange(0, 2) == 2:
            positional = False  # omitted: later ones go by keyword
            continue
        if fdp.ConsumeIntInRange(0, 30) == 30:
            positional = False  # a required argument left out now and then
            continue
        value = typed_value(fdp, _arg_type(a))
        if positional and not a.kwarg_only and fdp.ConsumeIntInRange(0, 4) != 4:
            args.append(value)
        else:
            positional = False
            kwargs[a.name] = value
    # (Rare choices take the high numbers: an exhausted input reads as zeros.)
    extra = fdp.ConsumeIntInRange(0, 15)
    if extra == 15:
        args.append(random_value(fdp))
    elif extra == 14 and op.schema.arguments:
        name = op.schema.arguments[fdp.ConsumeIntInRange(0, len(op.schema.arguments) - 1)].name
        kwargs[name[:-1] + "_" if len(name) > 1 else name + "x"] = random_value(fdp)  # a misspelled keyword
    elif extra == 13:
        kwargs[_str(fdp)] = random_value(fdp)
    global _returns
    random_returns = fdp.ConsumeIntInRange(0, 3) == 3
    _returns = [random_value(fdp) for _ in range(fdp.ConsumeIntInRange(0, 3))] if random_returns else None
    how = fdp.ConsumeIntInRange(0, 2)
    target = op.packet if how == 0 else op.overload if how == 1 else op.handle.call_boxed
    return op, lambda: target(*args, **kwargs)


def test_one_input(data: bytes) -> None:
    """Calls one operator with values derived from ``data``; raises only on a bug."""
    fdp = atheris.FuzzedDataProvider(data)
    op, call = _call(fdp)
    try:
        call()
    except ACCEPTED as e:
        message = str(e)
        if "BINDING BUG" in message:
            raise
        if op.name not in message:
            raise AssertionError(f"the error of a call of {op.name} does not name the operator: "
                                 f"{type(e).__name__}: {message}") from e


def seed_corpus() -> list[bytes]:
    """Deterministic starting inputs: every operator with zeros, ones and a few byte patterns."""
    seeds = [bytes([0] * 64), bytes([255] * 64), bytes(range(256))]
    seeds += [bytes([(i * 37 + j * 11) % 256 for j in range(96)]) for i in range(32)]
    return seeds
