"""Fuzz target: opdispatch._C.parse_schema on arbitrary bytes and on mutated real schemas.

Every input either raises ValueError naming a position, or parses to a schema whose
printed text is a fixed point (print -> parse -> print gives the same text and an equal
schema) and whose Python view (types, defaults, alias info) converts without error.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import atheris

from opdispatch import _C

DATA = Path(__file__).resolve().parent.parent / "data"
POSITION = re.compile(r" at position \d+:\n")

# Fragments a mutation may insert: the grammar's tokens and forms.
FRAGMENTS = [
    "Tensor", "Tensor!", "Tensor(a!)", "Tensor(a)", "Tensor(a -> *)", "Tensor(a|b)", "($0! -> )", "int", "SymInt",
    "float", "complex", "bool", "str", "Scalar", "ScalarType", "Layout", "MemoryFormat", "Device", "Generator",
    "Storage", "Stream", "Any", "NoneType", "t", "(int, Tensor)", "Dict(str, Tensor)", "Union(int, str)",
    "Future(int)", "[]", "[2]", "?", "!", "*", "...", ",", "(", ")", "[", "]", "|", "->", " -> ", "=", "::", ".",
    "=None", "=1", "=-1", "=1.5", "=1e-5", "=inf", "=True", '="a"', "='\\n'", '="\\377"', "=[1, 2]", "=[]",
    "=99", "=contiguous_format", "=float", " x", " y", " out", "a", "*, ", "\t", "\xff", "\xc3\xa9", "$0",
]


def seed_corpus() -> list[bytes]:
    lines = [ln for ln in (DATA / "schemas.txt").read_text().splitlines() if ln.strip()]
    diff = [json.loads(ln)["schema"] for ln in (DATA / "schema_diff.jsonl").read_text().splitlines()]
    return [s.encode("utf-8") for s in lines + diff[::4]]


def mutate(schema: bytes, fdp: atheris.FuzzedDataProvider) -> bytes:
    """Token-level edits of a seed: insert, delete, duplicate or replace spans."""
    out = bytearray(schema)
    for _ in range(fdp.ConsumeIntInRange(1, 4)):
        if not out:
            break
        at = fdp.ConsumeIntInRange(0, len(out))
        op = fdp.ConsumeIntInRange(0, 3)
        if op == 0:
            out[at:at] = fdp.PickValueInList(FRAGMENTS).encode("utf-8", "surrogateescape")
        elif op == 1:
            del out[at:at + fdp.ConsumeIntInRange(1, 8)]
        elif op == 2:
            span = out[at:at + fdp.ConsumeIntInRange(1, 16)]
            out[at:at] = span
        else:
            out[at:at + fdp.ConsumeIntInRange(1, 4)] = fdp.PickValueInList(FRAGMENTS).encode("utf-8")
    return bytes(out)


# Note [Outcome features]
# opdispatch's C++ is not instrumented, so libFuzzer sees only this file's coverage and
# would drop almost every seed as redundant. Each outcome class of the parser (an error
# reason, a type kind, a default's Python type, an alias form) runs its own line here,
# so inputs that make the parser behave differently count as new coverage.
ERROR_REASONS = [
    "expected a type", "expected an argument name", "expected ')'", "expected ']'", "expected '('", "expected ','",
    "expected '->'", "expected end of input", "expected an operator name", "expected an overload name",
    "expected an alias set name", "expected a list size", "expected a default value", "unknown type",
    "unexpected character", "unterminated string", "invalid escape", "not valid UTF-8", "is not a ScalarType",
    "is not a Layout", "is not a MemoryFormat", "complex default", "cannot have a default value",
    "cannot broadcast", "out of range", "nested too deeply", "non-default argument", "must be the last element",
    "has a default value", "is not a legal overload name", "after '*'", "custom class", "Union(",
    "cannot create a dict", "NoneType?", "invalid default value", "at most",
]


def note_error(message: str) -> None:
    for i, reason in enumerate(ERROR_REASONS):
        if reason in message:
            FEATURES[i % len(FEATURES)]()
            return
    FEATURES[-1]()


def _f0() -> None: pass
def _f1() -> None: pass
def _f2() -> None: pass
def _f3() -> None: pass
def _f4() -> None: pass
def _f5() -> None: pass
def _f6() -> None: pass
def _f7() -> None: pass
def _f8() -> None: pass
def _f9() -> None: pass
def _f10() -> None: pass
def _f11() -> None: pass
def _f12() -> None: pass
def _f13() -> None: pass
def _f14() -> None: pass
def _f15() -> None: pass
def _f16() -> None: pass
def _f17() -> None: pass
def _f18() -> None: pass
def _f19() -> None: pass
def _f20() -> None: pass
def _f21() -> None: pass
def _f22() -> None: pass
def _f23() -> None: pass
def _f24() -> None: pass
def _f25() -> None: pass
def _f26() -> None: pass
def _f27() -> None: pass
def _f28() -> None: pass
def _f29() -> None: pass
def _f30() -> None: pass
def _f31() -> None: pass
def _f32() -> None: pass
def _f33() -> None: pass
def _f34() -> None: pass
def _f35() -> None: pass
def _f36() -> None: pass
def _f37() -> None: pass
def _f38() -> None: pass
def _f39() -> None: pass


FEATURES = [_f0, _f1, _f2, _f3, _f4, _f5, _f6, _f7, _f8, _f9, _f10, _f11, _f12, _f13, _f14, _f15, _f16, _f17, _f18,
            _f19, _f20, _f21, _f22, _f23, _f24, _f25, _f26, _f27, _f28, _f29, _f30, _f31, _f32, _f33, _f34, _f35,
            _f36, _f37, _f38, _f39]
KINDS = ["TensorType", "IntType", "SymIntType", "FloatType", "ComplexType", "BoolType", "SymBoolType", "StringType",
         "NumberType", "ScalarTypeType", "DeviceObjType", "LayoutType", "MemoryFormatType", "QSchemeType",
         "GeneratorType", "StorageType", "StreamObjType", "QuantizerType", "CapsuleType", "NoneType", "AnyType",
         "AnyClassType", "AnyEnumType", "OptionalType", "ListType", "TupleType", "DictType", "FutureType",
         "AwaitType", "RRefType", "UnionType", "VarType"]


def note_type(t: _C.Type, depth: int = 0) -> None:
    kind = t.kind()
    FEATURES[KINDS.index(kind) % len(FEATURES)]() if depth == 0 else FEATURES[(KINDS.index(kind) + 7) % 40]()
    if depth < 2:
        for c in t.containedTypes():
            note_type(c, depth + 1)


def note_schema(schema: _C.FunctionSchema) -> None:
    if schema.is_vararg:
        _f0()
    if schema.is_varret:
        _f1()
    for a in schema.arguments:
        note_type(a.real_type)
        if a.kwarg_only:
            _f2()
        if a.has_default_value():
            _f3() if a.N is None else _f4()
            v = a.default_value
            {int: _f5, float: _f6, bool: _f7, str: _f8, list: _f9, type(None): _f10}.get(type(v), _f11)()
        if a.alias_info is not None:
            _f12() if a.alias_info.is_write else _f13()
            _f14() if "*" in a.alias_info.after_set else _f15()
            _f16() if len(a.alias_info.before_set) > 1 else _f17()
            _f18() if a.alias_info.contained_types else _f19()
    for r in schema.returns:
        note_type(r.real_type, 1)
        _f20() if r.name else _f21()


def check_python_view(schema: _C.FunctionSchema) -> None:
    """Everything Python can ask of a parsed schema converts without error."""
    for a in list(schema.arguments) + list(schema.returns):
        t, r = a.type, a.real_type
        assert isinstance(t, _C.Type) and isinstance(r, _C.Type)
        str(t), r.str(), t.kind(), r.containedTypes(), t.isSubtypeOf(r)
        a.default_value, a.N, a.kwarg_only, a.is_write, str(a)
        if a.alias_info is not None:
            a.alias_info.before_set, a.alias_info.after_set, a.alias_info.contained_types


def check(text: bytes) -> None:
    for allow_typevars in (True, False):
        try:
            schema = _C.parse_schema(text, allow_typevars)
        except ValueError as e:
            if not POSITION.search(str(e)):
                raise AssertionError(f"parse error without a position for {text!r}: {e}") from None
            note_error(str(e))
            continue
        printed = str(schema)
        again = _C.parse_schema(printed, allow_typevars)
        if again != schema or str(again) != printed:
            raise AssertionError(f"not a fixed point: {text!r} -> {printed!r} -> {str(again)!r}")
        check_python_view(schema)
        note_schema(schema)


def test_one_input(data: bytes) -> None:
    if len(data) < 2 or data[0] & 1:
        check(data)  # the bytes as they are
        return
    fdp = atheris.FuzzedDataProvider(data[1:])
    split = fdp.ConsumeIntInRange(0, 255)
    seed = fdp.ConsumeBytes(max(1, split))
    check(mutate(seed + fdp.ConsumeBytes(fdp.remaining_bytes()), atheris.FuzzedDataProvider(data)))
