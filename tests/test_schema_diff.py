"""Differential test of the schema parser against PyTorch 2.13's.

tests/data/schema_diff.jsonl holds ~5,000 schema strings (every type, alias,
default-value and argument-list form, real schemas rewritten with the
shorthands C++ bindings use, and random combinations) with what
str(torch._C.parse_schema(s)) gave for each, or null where PyTorch rejects it.
torch is not a test dependency: regenerate the data with a PyTorch venv,

    /path/to/torch-venv/bin/python tests/data/make_schema_diff.py

Every schema must be handled as PyTorch handles it (same printed text, or
rejected), except for the deliberate differences listed below, each with the
reason; a difference of any other kind fails the test.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from opdispatch import _C

DATA = Path(__file__).resolve().parent / "data" / "schema_diff.jsonl"
ROWS = [json.loads(line) for line in DATA.read_text().splitlines()]

# --- where both accept but print differently ---------------------------------------------
# Each rewrites PyTorch's text (or ours) into the form the other side gives, for one reason.


def _sorted_alias_sets(text: str) -> str:
    # PyTorch prints a set of several names in its hash set's order (the reverse of the
    # order written), so its own text does not print back to itself; we keep the written
    # order. Compare sets as sets.
    def sort(m: re.Match) -> str:
        return "(" + " -> ".join("|".join(sorted(side.split("|"))) for side in m.group(1).split(" -> ")) + ")"

    return re.sub(r"\(([\w*$]+(?:\|[\w*$]+)+(?:!)?(?: -> [\w*$|]*)?|[\w*$!]+ -> [\w*$]+(?:\|[\w*$]+)+)\)", sort, text)


def _annotation_before_question_mark(text: str) -> str:
    # PyTorch prints `Tensor(a)?[]` as `Tensor?(a)[]`, which its parser rejects.
    return re.sub(r"\?(\([^()]*\))\[", r"\1?[", text)


def _quoted_devices(text: str) -> str:
    # PyTorch prints Device defaults unquoted (`Device x=cpu`), which its parser rejects.
    return re.sub(r"(Device\??(?:\[\d*\])?\?? \w+=)([a-z][\w:]*)", r'\1"\2"', text)


def _no_single_type_unions(text: str) -> str:
    # PyTorch prints `Scalar??` as `Union(Scalar)?`, a union its parser rejects.
    return text.replace("Union(Scalar)", "Scalar")


def _collapsed_int_lists(text: str) -> str:
    # PyTorch shortens every int list default of equal elements to one number, also
    # without N or of another length than N (`int[] x=[1, 1]` -> `int[] x=1`), which then
    # parses to another value; we shorten only `int[N]` lists of N elements.
    return re.sub(r"=\[(-?\d+)(?:, \1)+\]", r"=\1", text)


PRINTING_DIFFERENCES = [_sorted_alias_sets, _annotation_before_question_mark, _quoted_devices,
                        _no_single_type_unions]


def _same_printing(ours: str, theirs: str, schema: str) -> bool:
    for fix in PRINTING_DIFFERENCES:
        ours, theirs = fix(ours), fix(theirs)
    if ours == theirs:
        return True
    if _collapsed_int_lists(ours) == theirs:
        return True
    # PyTorch misreads `1E5` (capital E) as the int 1, and prints non-ASCII bytes of
    # strings as garbage (its octal escapes use signed chars).
    return bool(re.search(r"\dE\d", schema)) or any(ord(c) > 127 for c in schema)


# --- where PyTorch accepts and we reject: the reasons we give -----------------------------
DELIBERATE_REJECTIONS = [
    # Note [Default values]: a default must be a value of the argument's type, one
    # that can be passed to and from Python.
    r"expected a default value of type",
    r"cannot have a default value other than None",
    r"cannot have a complex default value",
    r"is not a (ScalarType|Layout|MemoryFormat); valid values",
    r"is not valid UTF-8",
    r"invalid default value for argument .*: unknown device",
    # PyTorch wraps list sizes past 2**31 to negative numbers.
    r"expected a list size \(an integer from 0 to 2147483647\)",
    # PyTorch ignores `#` comments, `\` line continuations and reads `0x10` as 0.
    r"unexpected character '(#|\\)'",
    r"expected '\)' but found 'x10'",
]

# --- where PyTorch rejects and we accept: the extensions, by input -------------------------


def _our_extension(schema: str) -> bool:
    return any([
        "$" in schema or re.search(r"-> \)", schema) is not None,  # `Tensor!` prints as `($0! -> )`
        re.search(r"=-?(inf|nan)\b", schema) is not None,  # inf / nan defaults
        re.search(r"\\[abfvr]", schema) is not None,  # the escapes we print
        re.search(r"ScalarType\?? \w+=[A-Z]", schema) is not None,  # dtype C++ names: Float
        re.search(r"\[\d*\]\? \w+=\[", schema) is not None,  # list values for optional lists
        re.search(r"str\[\d*\]\?? \w+=\[", schema) is not None,  # str list defaults
        "\t" in schema or "\n" in schema.strip(),  # any whitespace between tokens
        "e-320" in schema,  # subnormal floats (PyTorch's stod rejects them)
    ])


def _parse(schema: str):
    try:
        return _C.parse_schema(schema), None
    except ValueError as e:
        return None, e


def test_data_covers_the_forms():
    assert len(ROWS) > 5000
    accepted = [r for r in ROWS if r["torch"] is not None]
    assert len(accepted) > 3000 and len(ROWS) - len(accepted) > 1500
    for form in ["Tensor!", "...", "Dict(", "Union(", "Future(", "(int, Tensor)", "Storage", "complex", "t x"]:
        assert any(form in r["schema"] and r["torch"] for r in ROWS), form


@pytest.mark.parametrize("chunk", range(8))
def test_schemas_parse_and_print_as_pytorch(chunk):
    unexplained = []
    for row in ROWS[chunk::8]:
        schema, theirs = row["schema"], row["torch"]
        parsed, error = _parse(schema)
        if error is not None:
            message = str(error).split("\n")[0]
            assert re.search(r" at position \d+:$", message), (schema, message)
            if theirs is not None and not any(re.search(p, message) for p in DELIBERATE_REJECTIONS):
                unexplained.append(("we reject", schema, theirs, message))
            continue
        ours = str(parsed)
        # Whatever we accept prints to text that parses back to the same schema and prints
        # the same again.
        again = _C.parse_schema(ours)
        assert again == parsed and str(again) == ours, (schema, ours)
        if theirs is None:
            if not _our_extension(schema):
                unexplained.append(("we accept", schema, ours))
        elif ours != theirs and not _same_printing(ours, theirs, schema):
            unexplained.append(("we print", schema, theirs, ours))
    assert unexplained == []
