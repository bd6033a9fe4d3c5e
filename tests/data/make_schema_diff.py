"""Regenerates tests/data/schema_diff.jsonl: schema strings and what PyTorch's
parser makes of them, the reference for tests/test_schema_diff.py.

Run with a Python that has PyTorch (torch is not a test dependency):

    /path/to/torch-venv/bin/python tests/data/make_schema_diff.py

Each output line is a JSON object {"schema": <input>, "torch": <str() of the
parsed schema, or null if PyTorch rejects it>}. The inputs are generated here
deterministically: the forms of every type, alias annotation, default value
and argument-list feature, crossed where the combinations matter, plus
variants of real schemas (tests/data/schemas.txt) using the shorthands real
C++ bindings write (`Tensor!`, `Tensor?`, `*` at the end).
"""
from __future__ import annotations

import json
import random
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent

BASE_TYPES = [
    "Tensor", "int", "SymInt", "float", "complex", "bool", "SymBool", "str", "Scalar", "ScalarType",
    "Device", "DeviceIndex", "Layout", "MemoryFormat", "Generator", "Storage", "Stream", "QScheme",
    "Quantizer", "ConstQuantizerPtr", "Capsule", "Any", "AnyClassType", "AnyEnumType", "None", "NoneType",
    "Dimname", "t", "number", "SymFloat", "double", "int64_t", "Tensor2", "Float", "Long",
]
COMPOUND_TYPES = [
    "(int, Tensor)", "()", "(Tensor)", "(int, (float, str))", "Dict(str, Tensor)", "Dict(int, t)",
    "Future(int)", "Future(Tensor)", "Await(Tensor)", "RRef(t)", "Union(int, str)", "Union(int, float)",
    "Union(str, int, float)", "Union(int, NoneType)", "Union(Tensor, Tensor?)", "Union(int, str, int)",
    "Union(int, Union(str, float))", "Union(int)", "Union()", "Dict(str, int)[]", "(Tensor, Tensor)[]",
    "Future(int)?", "Union(int, str)?", "Dict(str)", "Future(int, str)", "Tuple(int, str)",
    "__torch__.torch.classes.foo.Bar", "__torch__.foo.Bar",
]
SUFFIXES = ["", "?", "[]", "[]?", "?[]", "[][]", "??", "[2]", "[1]?", "[0]", "[]?[]", "?[]?", "[-1]", "[2][]",
            "[x]", "[2147483648]"]
ALIASES = ["(a)", "(a!)", "!", "(a -> *)", "(a! -> a|b)", "(*)", "(a|b)", "(b|a)", "(a|a)", "(a|*)", "(*|a)",
           "(a!)!", "!!", "(a -> )", "($0)", "(a", "()", "(!)", "(a!)[]", "![]", "[](a!)", "[]!", "(a)[](b)",
           "?(a)", "(a)?", "!?", "?!", "(a)?[]", "(a)[]?", "[]!?"]
DEFAULTS = {
    "int": ["0", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "1.5", "None",
            "True", '"a"', "float", "long", "complex", "strided", "Mean", "contiguous_format", "preserve_format",
            "x", "1e3", "-0", "0x10", "007", "1j", "inf"],
    "SymInt": ["0", "-1", "None", "1.0"],
    "float": ["1", "1.", "1.5", ".5", "5.", "1e-5", "1e-05", "1E5", "-2.5", "1e400", "inf", "-inf", "nan", "None",
              "True", "1j", "0.1", "1e10", "1e16", "123456789012345678", "-0.", "2.5e+3", "1.0000000000000001e-05",
              "3.14159265358979", "1e-320"],
    "complex": ["1j", "1.5j", "-2j", "0j", "1", "1.5", "None"],
    "bool": ["True", "False", "None", "1", "true"],
    "str": ['"a"', "'a'", '""', '"a\\nb"', "'\\t'", '"\\x41"', '"\\101"', '"\\377"', '"\\u00e9"', '"caf\u00e9"',
            '"\\\\"', "'\"'", '"\\\'"', '"a b"', "None", "a", '"\\q"', "'\\a\\b\\f\\v\\r'", '"\\0"', '"\\12"',
            '"\\1234"', '"\\8"'],
    "Scalar": ["1", "1.5", "-1", "True", "None", "1j", "inf", "1e5"],
    "ScalarType": ["6", "4", "0", "11", "99", "-1", "15", "float", "long", "complex", "float32", "None", "Float"],
    "Layout": ["0", "7", "8", "99", "strided", "None", "-1"],
    "MemoryFormat": ["0", "1", "3", "4", "99", "contiguous_format", "preserve_format", "None"],
    "Device": ['"cpu"', '"cuda:1"', '"meta"', "cpu", '"nope"', "None"],
    "Generator": ["None"], "Tensor": ["None", "0"], "Any": ["None", "1"], "Storage": ["None"],
    "Stream": ["None"], "QScheme": ["None"], "DeviceIndex": ["0", "-1"],
}
LIST_DEFAULTS = ["[]", "[1]", "[1, 2]", "[1,2]", "[1.5]", "[True, False]", "[-1, -2]", "1", "0", "1.5", "True",
                 "None", '["a"]', "[None]", "[[1]]", "[1, ]", "[float]"]


def type_cases() -> list[str]:
    out = []
    for t in BASE_TYPES + COMPOUND_TYPES:
        for s in SUFFIXES:
            out.append(f"f({t}{s} x) -> ()")
        out.append(f"f(Tensor x) -> {t}")
        out.append(f"f(Tensor x) -> ({t}, {t} y)")
    for t in ["Tensor", "int", "t", "Dict(str, Tensor)", "(Tensor, int)", "Future(Tensor)", "Union(int, str)"]:
        for a in ALIASES:
            out.append(f"f({t}{a} x) -> ()")
            out.append(f"f(Tensor x) -> {t}{a}")
    return out


def default_cases() -> list[str]:
    out = []
    for t, values in DEFAULTS.items():
        for v in values:
            out.append(f"f({t} x={v}) -> ()")
            out.append(f"f({t}? x={v}) -> ()")
    for t in ["int", "SymInt", "float", "bool", "str", "ScalarType", "Layout", "Tensor", "Scalar", "complex",
              "Device", "MemoryFormat"]:
        for n in ["", "2", "3", "1"]:
            for v in LIST_DEFAULTS:
                out.append(f"f({t}[{n}] x={v}) -> ()")
            out.append(f"f({t}[{n}]? x=None) -> ()")
            out.append(f"f({t}[{n}]? x=[]) -> ()")
    out += [f"f(int[2] x={v}) -> ()" for v in ["[1, 1]", "[3, 3]", "[1, 2]", "[1]", "[1, 1, 1]"]]
    out += [f"f(int[] x={v}) -> ()" for v in ["[1, 1]", "[2, 2, 2]"]]
    out += [f"f(float[2] x={v}) -> ()" for v in ["[1, 1]", "[1.5, 1.5]"]]
    return out


def signature_cases() -> list[str]:
    return [
        "f() -> ()", "f(*) -> ()", "f(*, *) -> ()", "f(Tensor x, *) -> ()", "f(*, Tensor x) -> ()",
        "f(*, Tensor x, *) -> ()", "f(Tensor x, *, Tensor y, *, Tensor z) -> ()", "f(...) -> ()",
        "f(Tensor x, ...) -> ...", "f(Tensor x) -> ...", "f(Tensor x) -> (Tensor, ...)", "f(...) -> (...)",
        "f(..., Tensor x) -> ()", "f(Tensor x=None, ...) -> ()", "f(Tensor x, *, ...) -> ()",
        "f(*, ...) -> ()", "f(..., ...) -> ()", "f(Tensor x) -> (..., Tensor)", "f(Tensor x) -> (...)",
        "f(Tensor x) -> ... y", "f(int x=1, Tensor y) -> ()", "f(int x=1, int[] y) -> ()",
        "f(int[] x=[1], int y) -> ()", "f(int x=1, *, Tensor y) -> ()", "f(int x=1, Tensor? y) -> ()",
        "f(Tensor x) -> Tensor y", "f(Tensor x) -> (Tensor a, Tensor b)", "f(Tensor x) -> (Tensor, Tensor b)",
        "f(Tensor x) -> (Tensor)", "f(Tensor x) -> (Tensor y)", "f(Tensor x) -> ((Tensor, Tensor))",
        "f(Tensor x) -> (Tensor, Tensor)[]", "f(Tensor x) -> Tensor[] y", "f(Tensor x, Tensor x) -> ()",
        "f(Tensor x) -> Tensor x", "f(Tensor x,) -> ()", "f(,) -> ()", "f(Tensor x) -> (Tensor,)",
        "f(Tensor x) ->", "f(Tensor x)", "f", "ns::f", "ns::f.o", "ns::f.default", "ns::f.__x",
        "ns::f.o(Tensor x) -> ()", "ns::f.default(Tensor x) -> ()", "ns:f(Tensor x) -> ()",
        "ns::ns2::f(Tensor x) -> ()", "ns::f.a.b(Tensor x) -> ()", "f.(Tensor x) -> ()", "1f(Tensor x) -> ()",
        "f(Tensor x) -> Tensor\n", "f(Tensor x) -> Tensor ", " f(Tensor x) -> Tensor", "f (Tensor x) -> ()",
        "f(Tensor\tx)\n->\n()", "f(Tensor x) - > ()", "f(Tensor x) -> Tensor # comment",
        "f(Tensor x) -> ()\nf(Tensor y) -> ()", "f(Tensor x) -> ()\n\n", "f(Tensor x) -> () \\\n",
        "f(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "f(Tensor(a) self) -> Tensor(a)",
        "f(Tensor(a!) self) -> Tensor(a!)", "f(Tensor! self) -> Tensor!", "f(Tensor! self) -> Tensor(a!)",
        "f(Tensor(a) x, Tensor(a) y) -> Tensor(a)", "f(Tensor x, Tensor! y, Tensor[]! z) -> (Tensor!, Tensor!)",
        "f(Tensor(a!)[] x) -> Tensor(a!)[]", "f(Tensor(b!)[] x, *, Tensor(a!) y) -> ()",
        "f(Tensor(a)[] x) -> Tensor(a)[]", "f(Tensor(a -> *) x) -> Tensor(a -> *)",
        "f(Tensor x, int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None, MemoryFormat? memory_format=contiguous_format) -> Tensor",
        "f(Tensor x, str reduce=\"mean\", *, bool include_self=True) -> Tensor",
        "f(Tensor x, float eps=1e-5, float momentum=0.1, bool cudnn_enabled=True) -> Tensor",
        "f(Tensor x, Scalar min=-inf, Scalar max=inf) -> Tensor",
        "f(Tensor x, float? scale=None, bool is_causal=False, *, float dropout_p=0.0) -> (Tensor, Tensor)",
        "f(Tensor(a!) x, Tensor? bias, int[] stride=1, SymInt[2] padding=0) -> Tensor(a!)",
        "f(Tensor x, Storage? s=None, Stream? st=None, complex c=1j) -> ()",
        "f(t self, t other) -> t", "f(t[] l, int i) -> t(*)", "f(t[](a!) self, t(c -> *) el) -> t[](a!)",
        "f(Dict(str, t) self, str key) -> t(*)", "f(Any self) -> Any", "f(Tensor x) -> NoneType",
        "f(Tensor x) -> None", "f(Tensor x) -> (None, int)", "f(None x=None) -> ()",
    ]


def corpus_variants() -> list[str]:
    """Real schemas rewritten with the shorthands C++ bindings use."""
    lines = [ln for ln in (HERE / "schemas.txt").read_text().splitlines() if ln.strip()]
    rng = random.Random(13)
    out = []
    for line in rng.sample(lines, 600):
        variant = line.replace("(a!)", "!").replace("(b!)", "!").replace("(c!)", "!")
        if variant != line:
            out.append(variant)
        out.append(line.replace(", *,", ",").replace("(*, ", "("))
    out += [ln for ln in rng.sample(lines, 200)]
    return out


def random_cases(n: int) -> list[str]:
    """Random argument lists over the type and default forms above."""
    rng = random.Random(9)
    types = BASE_TYPES[:20] + COMPOUND_TYPES[:14]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 4)):
            t = rng.choice(types) + rng.choice(SUFFIXES[:8])
            if rng.random() < 0.2:
                t = "Tensor" + rng.choice(ALIASES[:12]) + rng.choice(["", "?", "[]"])
            decl = f"{t} a{len(parts)}"
            base = t.split("[")[0].rstrip("?")
            if rng.random() < 0.3 and base in DEFAULTS:
                decl += "=" + rng.choice(DEFAULTS[base] + (LIST_DEFAULTS if "[" in t else []))
            parts.append(decl)
        if parts and rng.random() < 0.3:
            parts.insert(rng.randrange(len(parts) + 1), "*")
        rets = rng.choice(["()", "Tensor", "(Tensor, Tensor)", "Tensor!", "(Tensor a, int b)", "Tensor(a!)",
                           "..."])
        out.append(f"ns::r{_}({', '.join(parts)}) -> {rets}")
    return out


def main() -> None:
    cases = type_cases() + default_cases() + signature_cases() + corpus_variants() + random_cases(1500)
    seen = set()
    rows = []
    for schema in cases:
        if schema in seen:
            continue
        seen.add(schema)
        try:
            printed = str(torch._C.parse_schema(schema))
        except Exception:  # noqa: BLE001 - any failure is PyTorch rejecting the schema
            printed = None
        rows.append({"schema": schema, "torch": printed})
    out = HERE / "schema_diff.jsonl"
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} schemas ({sum(r['torch'] is not None for r in rows)} accepted by PyTorch "
          f"{torch.__version__}) -> {out}")


if __name__ == "__main__":
    main()
