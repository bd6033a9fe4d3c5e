"""opdispatch._C.parse_schema: the FunctionSchema / Argument / AliasInfo objects
Python sees (as torch._C.parse_schema), printing round trips over the
real-world corpus, and positioned errors for malformed schemas."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

import opdispatch
from opdispatch import _C

SCHEMAS = Path(__file__).resolve().parent / "data" / "schemas.txt"


def arg(schema: str, name: str):
    s = _C.parse_schema(schema)
    (found,) = [a for a in s.arguments if a.name == name]
    return found


# --- names ----------------------------------------------------------------------------


@pytest.mark.parametrize("text, name, overload", [
    ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "aten::add", "Tensor"),
    ("aten::relu(Tensor self) -> Tensor", "aten::relu", ""),
    ("foo(Tensor x) -> Tensor", "foo", ""),
    ("my_ns::op_2.out_overload(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", "my_ns::op_2", "out_overload"),
])
def test_name_and_overload_name(text, name, overload):
    s = _C.parse_schema(text)
    assert s.name == name
    assert s.overload_name == overload


# --- arguments ------------------------------------------------------------------------


def test_arguments_and_returns():
    s = _C.parse_schema("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert [a.name for a in s.arguments] == ["self", "dim", "keepdim"]
    assert [a.type for a in s.arguments] == ["Tensor", "int", "bool"]
    assert [a.name for a in s.returns] == ["values", "indices"]
    assert [a.type for a in s.returns] == ["Tensor", "Tensor"]
    assert not any(a.kwarg_only for a in s.arguments)
    assert s.arguments[2].has_default_value() and not s.arguments[1].has_default_value()


def test_unnamed_and_empty_returns():
    s = _C.parse_schema("foo(Tensor x) -> Tensor")
    assert len(s.returns) == 1 and s.returns[0].name == "" and s.returns[0].type == "Tensor"
    s = _C.parse_schema("foo() -> ()")
    assert s.arguments == [] and s.returns == []
    s = _C.parse_schema("foo(Tensor x) -> (Tensor, int, float[])")
    assert [r.type for r in s.returns] == ["Tensor", "int", "float[]"]


@pytest.mark.parametrize("text, typ", [
    ("Tensor x", "Tensor"), ("Tensor? x", "Tensor?"), ("Tensor[] x", "Tensor[]"), ("Tensor?[] x", "Tensor?[]"),
    ("int x", "int"), ("SymInt x", "SymInt"), ("float x", "float"), ("bool x", "bool"), ("str x", "str"),
    ("Scalar x", "Scalar"), ("ScalarType x", "ScalarType"), ("Device x", "Device"), ("Layout x", "Layout"),
    ("MemoryFormat x", "MemoryFormat"), ("Generator? x", "Generator?"), ("Any x", "Any"),
    ("int[] x", "int[]"), ("SymInt[]? x", "SymInt[]?"), ("float[]? x", "float[]?"), ("bool[] x", "bool[]"),
    ("str[] x", "str[]"), ("Scalar[] x", "Scalar[]"), ("int? x", "int?"),
])
def test_argument_type_text(text, typ):
    a = _C.parse_schema(f"f({text}) -> ()").arguments[0]
    assert a.type == typ
    assert a.N is None
    assert a.name == "x"


@pytest.mark.parametrize("text, typ, n", [("int[2] x", "int[]", 2), ("SymInt[3] x", "SymInt[]", 3),
                                          ("bool[3] x", "bool[]", 3), ("int[1]? x", "int[]?", 1)])
def test_fixed_size_lists_have_N(text, typ, n):
    a = _C.parse_schema(f"f({text}) -> ()").arguments[0]
    assert a.type == typ
    assert a.N == n


def test_kwarg_only():
    s = _C.parse_schema("f(Tensor a, int b=1, *, Tensor(a!) out, bool c=False) -> ()")
    assert [a.kwarg_only for a in s.arguments] == [False, False, True, True]
    assert [a.is_out for a in s.arguments] == [False, False, True, False]


# --- default values ---------------------------------------------------------------------


@pytest.mark.parametrize("decl, expected", [
    ("int x=0", 0), ("int x=-1", -1), ("int x=200", 200),
    ("int x=9223372036854775807", 9223372036854775807),
    ("SymInt x=-100", -100),
    ("float x=1.", 1.0), ("float x=0.5", 0.5), ("float x=1e-08", 1e-08), ("float x=-2.5", -2.5),
    ("float x=1.0000000000000001e-05", 1e-05),
    ("bool x=True", True), ("bool x=False", False), ("bool? x=False", False),
    ("str x=\"linear\"", "linear"), ("str x='hi'", "hi"), ("str x=\" \"", " "), ("str? x=\"mean\"", "mean"),
    ("str x=\"\"", ""),
    ("Scalar x=1", 1), ("Scalar x=0.5", 0.5), ("Scalar x=2", 2),
    ("int[] x=[]", []), ("int[] x=[-2, -1]", [-2, -1]), ("int[1] x=[0]", [0]),
    ("int[2] x=1", [1, 1]), ("int[3] x=0", [0, 0, 0]), ("SymInt[2] x=[1, 1]", [1, 1]),
    ("float[] x=[1.0, 2.5]", [1.0, 2.5]), ("bool[3] x=[True, False, True]", [True, False, True]),
    ("int? x=None", None), ("Tensor? x=None", None), ("ScalarType? x=None", None), ("Device? x=None", None),
    ("Layout? x=None", None), ("Generator? x=None", None), ("str? x=None", None), ("int[]? x=None", None),
    ("MemoryFormat? x=0", 0), ("MemoryFormat x=contiguous_format", 0), ("int x=Mean", 1),
])
def test_default_values_as_python_values(decl, expected):
    a = _C.parse_schema(f"f({decl}) -> ()").arguments[0]
    assert a.has_default_value()
    v = a.default_value
    assert v == expected
    assert type(v) is type(expected)


@pytest.mark.parametrize("decl, dtype", [
    ("ScalarType x=float", opdispatch.float32), ("ScalarType x=long", opdispatch.int64),
    ("ScalarType? x=4", opdispatch.int64), ("ScalarType x=6", opdispatch.float32),
    ("ScalarType x=float64", opdispatch.float64), ("ScalarType x=bool", opdispatch.bool),
    ("ScalarType x=complex", opdispatch.complex64),
])
def test_scalartype_defaults_are_dtypes(decl, dtype):
    assert arg(f"f({decl}) -> ()", "x").default_value is dtype


def test_special_float_defaults():
    assert arg("f(float x=inf) -> ()", "x").default_value == math.inf
    assert arg("f(float x=-inf) -> ()", "x").default_value == -math.inf
    assert math.isnan(arg("f(float x=nan) -> ()", "x").default_value)


def test_no_default_is_none():
    a = arg("f(int x) -> ()", "x")
    assert not a.has_default_value()
    assert a.default_value is None


# --- alias annotations -----------------------------------------------------------------


def test_alias_info():
    s = _C.parse_schema(
        "f(Tensor(a!) x, Tensor(b) y, Tensor(c -> *) z, Tensor(a!)[] outs, Tensor w) -> (Tensor(a!), Tensor(b))")
    x, y, z, outs, w = s.arguments
    assert x.alias_info.is_write is True
    assert x.alias_info.before_set == {"alias::a"} and x.alias_info.after_set == {"alias::a"}
    assert y.alias_info.is_write is False
    assert y.alias_info.before_set == {"alias::b"} and y.alias_info.after_set == {"alias::b"}
    assert z.alias_info.is_write is False
    assert z.alias_info.before_set == {"alias::c"} and z.alias_info.after_set == {"alias::*"}
    # A list of aliased tensors: the annotation is on the element (PyTorch's representation).
    assert outs.alias_info.is_write is True
    assert outs.alias_info.before_set == set()
    assert [(c.is_write, c.before_set) for c in outs.alias_info.contained_types] == [(True, {"alias::a"})]
    assert w.alias_info is None
    assert s.returns[0].alias_info.is_write and s.returns[0].alias_info.before_set == {"alias::a"}
    assert not s.returns[1].alias_info.is_write
    assert s.is_mutable
    assert not _C.parse_schema("f(Tensor(a) x) -> Tensor(a)").is_mutable


# --- printing ----------------------------------------------------------------------------


def test_str_and_repr():
    text = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    s = _C.parse_schema(text)
    assert str(s) == text
    assert repr(s) == f"FunctionSchema({text})"
    assert str(s.arguments[2]) == "Scalar alpha=1"
    assert repr(s.arguments[0]) == "<Argument Tensor self>"


@pytest.mark.parametrize("given, printed", [
    ("f(ScalarType x=float) -> ()", "f(ScalarType x=6) -> ()"),  # PyTorch prints ScalarType defaults as ints
    ("f(MemoryFormat x=contiguous_format) -> ()", "f(MemoryFormat x=0) -> ()"),
    ("f(int x=Mean) -> ()", "f(int x=1) -> ()"),
    ("f(str x='hi') -> ()", 'f(str x="hi") -> ()'),
    ("f(float x=1.0) -> ()", "f(float x=1.) -> ()"),
    ("f(int[2] x=[3, 3]) -> ()", "f(int[2] x=3) -> ()"),
    ("f( Tensor  x ,int y ) ->  Tensor", "f(Tensor x, int y) -> Tensor"),
    ("f(Tensor x) -> (Tensor)", "f(Tensor x) -> Tensor"),
])
def test_canonical_printing(given, printed):
    s = _C.parse_schema(given)
    assert str(s) == printed
    assert _C.parse_schema(printed) == s


def test_every_corpus_schema_round_trips():
    lines = [ln for ln in SCHEMAS.read_text().splitlines() if ln.strip()]
    assert len(lines) == 3765
    mismatches = []
    for line in lines:
        s = _C.parse_schema(line)
        if str(s) != line:
            mismatches.append((line, str(s)))
        elif _C.parse_schema(str(s)) != s:
            mismatches.append((line, "re-parse differs"))
    assert mismatches == []


def test_equality_and_hash():
    a = _C.parse_schema("f(Tensor x, int y=1) -> Tensor")
    b = _C.parse_schema("f(Tensor  x,int y=1)->Tensor")
    c = _C.parse_schema("f(Tensor x, int y=2) -> Tensor")
    assert a == b and hash(a) == hash(b)
    assert a != c
    assert a != "f(Tensor x, int y=1) -> Tensor" and a != None  # noqa: E711
    assert a in [None, b]


# --- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text, message, position", [
    ("foo(Tensor x", "expected ')' but found end of input", 12),
    ("foo(Tensor x) ->", "expected a type but found end of input", 16),
    ("foo(Tensr x) -> Tensor", "unknown type 'Tensr'", 4),
    ("(Tensor x) -> Tensor", "expected an operator name but found '('", 0),
    ("", "expected an operator name but found end of input", 0),
    ("foo(int x=) -> Tensor", "expected a default value of type int for argument 'x' but found ')'", 10),
    ("foo(int x=1.5) -> Tensor", "expected a default value of type int for argument 'x' but found '1.5'", 10),
    ("foo(bool b=Maybe) -> ()", "expected a default value of type bool for argument 'b' but found 'Maybe'", 11),
    ("foo(Tensor x) -> Tensor a b", "expected end of input but found 'b'", 26),
    ("foo(Tensor x, *) -> Tensor", "expected ',' and a keyword-only argument after '*'", 15),
    ("foo(Tensor x, *, *, Tensor y) -> Tensor", "duplicate '*'", 17),
    ("foo(Tensor(a x) -> Tensor", "expected ')' but found 'x'", 13),
    ("ns::foo.(Tensor x) -> Tensor", "expected an overload name after '.'", 8),
    ("foo(str s=\"abc) -> ()", "unterminated string literal", 10),
    ("foo(Tensor x, int y=1, Tensor z) -> Tensor", "non-default argument 'z' follows default argument", 23),
])
def test_malformed_schema_raises_value_error_with_position(text, message, position):
    with pytest.raises(ValueError) as info:
        _C.parse_schema(text)
    msg = str(info.value)
    first, *rest = msg.split("\n")
    assert message in first, msg
    assert first.endswith(f"at position {position}:"), msg
    # The message shows the schema with a caret under the offending position.
    assert rest[0] == text
    assert rest[1] == " " * position + "^"


def test_parse_schema_needs_a_string():
    with pytest.raises(TypeError):
        _C.parse_schema(None)
