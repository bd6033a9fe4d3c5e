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
            continue
        printed = str(schema)
        again = _C.parse_schema(printed, allow_typevars)
        if again != schema or str(again) != printed:
            raise AssertionError(f"not a fixed point: {text!r} -> {printed!r} -> {str(again)!r}")
        check_python_view(schema)


def test_one_input(data: bytes) -> None:
    if len(data) < 2 or data[0] & 1:
        check(data)  # the bytes as they are
        return
    fdp = atheris.FuzzedDataProvider(data[1:])
    split = fdp.ConsumeIntInRange(0, 255)
    seed = fdp.ConsumeBytes(max(1, split))
    check(mutate(seed + fdp.ConsumeBytes(fdp.remaining_bytes()), atheris.FuzzedDataProvider(data)))
