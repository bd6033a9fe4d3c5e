"""Regression tests for the fault classes of issue 9 (items 2, 3, 4, 6) and
issue 15 (a misspelled keyword): whatever a caller passes and whatever a
kernel returns, a call ends in a result or in a TypeError / ValueError /
OverflowError naming the operator and the argument -- never a crash, a
SystemError, a silently wrapped integer, or a message that names neither.

Each class is checked for every argument type it concerns, for Python
kernels (with the fast path for positional calls) and for C++ kernels
(tests/fuzz/call_binding_kernels.cpp, which also checks that every argument
arrives with the IValue kind its schema type promises). The fuzz target
tests/fuzz/fuzz_call_binding.py explores the same space at random.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, _custom_ops, cpp_extension, library

FUZZ = Path(__file__).resolve().parent / "fuzz"
LIMIT = "(from -2**63 to 2**63 - 1)"


@pytest.fixture(scope="module")
def binding_ext():
    """The call_binding C++ extension (its kernels check every argument's IValue kind)."""
    return cpp_extension.load("call_binding", [FUZZ / "call_binding_kernels.cpp"])


class Boom(Exception):
    pass


class Index:
    """An object with __index__ returning (or raising) ``result``."""

    def __init__(self, result):
        self.result = result

    def __index__(self):
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


class BadSequence:
    """A sequence whose __len__ returns or raises ``length``; items 1, 2, 3."""

    def __init__(self, length):
        self.length = length

    def __len__(self):
        if isinstance(self.length, BaseException):
            raise self.length
        return self.length

    def __getitem__(self, i):
        if i >= 3:
            raise IndexError(i)
        return i + 1


@pytest.fixture(params=["python", "cpp"])
def make_op(request, ns, lib, binding_ext):
    """make_op(signature) -> (callable packet, qualified name, calls): defines
    ns::f<n> with a Python kernel recording its calls, or the checking C++ kernel."""
    counter = iter(range(1000))
    calls = []

    def make(signature: str, python_kernel=None):
        name = f"f{next(counter)}"
        lib.define(name + signature)
        if request.param == "python":
            lib.impl(name, python_kernel or (lambda *a, **k: calls.append((a, k)) or _C.empty((0,))),
                     "CompositeExplicitAutograd")
        else:
            opdispatch.ops.call_binding.install(f"{ns}::{name}", "CompositeExplicitAutograd")
        return getattr(getattr(opdispatch.ops, ns), name), f"{ns}::{name}", calls

    make.kernel = request.param
    yield make
    opdispatch.ops.call_binding.uninstall_all()


def call_forms(op):
    """The ways a caller reaches an operator: the packet, the overload, and the boxed handle."""
    handle = _C._dispatch_find_schema_or_throw(op.default._name, "")
    return [op, op.default, handle.call_boxed]


# --- issue 9 item 3: integers beyond int64 ------------------------------------------------------

TOO_BIG = [
    (np.uint64(2**64 - 1), "the value 18446744073709551615 (numpy.uint64) does not fit in int64"),
    (2**63, "the value 9223372036854775808 does not fit in int64"),
    (-2**63 - 1, "the value -9223372036854775809 does not fit in int64"),
    (Index(2**70), "the value 1180591620717411303424 (Index) does not fit in int64"),
    (10**5000, "an int of 16610 bits does not fit in int64"),
]

#: (signature, how a too-big int `v` is passed for argument 'a').
INT_LIKE = [
    ("(Tensor x, int a) -> Tensor", lambda v: v),
    ("(Tensor x, SymInt a) -> Tensor", lambda v: v),
    ("(Tensor x, int? a=None) -> Tensor", lambda v: v),
    ("(Tensor x, Scalar a) -> Tensor", lambda v: v),
    ("(Tensor x, Scalar? a=None) -> Tensor", lambda v: v),
    ("(Tensor x, int[] a) -> Tensor", lambda v: [1, v]),
    ("(Tensor x, SymInt[] a) -> Tensor", lambda v: (v,)),
    ("(Tensor x, int[2] a) -> Tensor", lambda v: v),
    ("(Tensor x, int[]? a=None) -> Tensor", lambda v: [v]),
    ("(Tensor x, Scalar[] a) -> Tensor", lambda v: [1.5, v]),
    ("(Tensor x, int[][] a) -> Tensor", lambda v: [[1], [2, v]]),
    ("(Tensor x, *, Layout? a=None) -> Tensor", lambda v: v),
    ("(Tensor x, *, MemoryFormat? a=None) -> Tensor", lambda v: v),
    ("(Tensor x, ScalarType? a=None) -> Tensor", lambda v: v),
]


@pytest.mark.parametrize("signature, wrap", INT_LIKE, ids=[s for s, _ in INT_LIKE])
@pytest.mark.parametrize("value, message", TOO_BIG, ids=["uint64", "2**63", "-2**63-1", "__index__", "huge"])
def test_integers_beyond_int64_raise_overflow_naming_the_argument(make_op, signature, wrap, value, message):
    op, name, calls = make_op(signature)
    x = _C.empty((2,))
    positional = signature.index("*") > signature.index("a") if "*" in signature else True
    for call in call_forms(op):
        if positional:
            with pytest.raises(OverflowError) as info:
                call(x, wrap(value))  # positional: the fast path for Python kernels
            assert str(info.value) == f"{name}(): argument 'a' (position 2): {message} {LIMIT}"
        with pytest.raises(OverflowError) as info:
            call(x, a=wrap(value))
        assert str(info.value) == f"{name}(): argument 'a' (position 2): {message} {LIMIT}"
    assert calls == []  # no kernel ran


@pytest.mark.parametrize("value", [2**63 - 1, -2**63, np.int64(-2**63), np.uint64(2**63 - 1), Index(2**63 - 1)])
def test_the_int64_limits_themselves_pass(make_op, value):
    seen = []
    op, _, _ = make_op("(Tensor x, int a, int[] b) -> Tensor",
                       lambda x, a, b: seen.append((a, b)) or _C.empty((0,)))
    op(_C.empty((1,)), value, [value])
    if make_op.kernel == "python":
        assert seen == [(int(value.__index__()), [int(value.__index__())])]
        assert type(seen[0][0]) is int


def test_a_float_argument_takes_big_ints_by_value(make_op):
    """float accepts ints beyond int64 (as PyTorch); only ints beyond a double's range overflow."""
    seen = []
    op, name, _ = make_op("(Tensor x, float a) -> Tensor", lambda x, a: seen.append(a) or _C.empty((0,)))
    op(_C.empty((1,)), 2**70)
    op(_C.empty((1,)), Index(2**64))
    if make_op.kernel == "python":
        assert seen == [float(2**70), float(2**64)]
    with pytest.raises(OverflowError, match=rf"^{name}\(\): argument 'a' \(position 2\) must be float, not int: "
                                            r"converting it raised OverflowError: int too large to convert to float"):
        op(_C.empty((1,)), 10**400)


@pytest.mark.parametrize("returns, result, message", [
    ("int", 2**80, "the value 1208925819614629174706176 does not fit in int64"),
    ("int", np.uint64(2**64 - 1), "the value 18446744073709551615 (numpy.uint64) does not fit in int64"),
    ("int[]", [1, -2**64], "the value -18446744073709551616 does not fit in int64"),
    ("Scalar", Index(2**64), "the value 18446744073709551616 (Index) does not fit in int64"),
    ("SymInt?", 2**63, "the value 9223372036854775808 does not fit in int64"),
])
def test_python_kernel_results_beyond_int64_raise_overflow(lib, ns, returns, result, message):
    lib.define(f"r(Tensor x) -> {returns}")
    lib.impl("r", lambda x: result, "CPU")
    with pytest.raises(OverflowError) as info:
        getattr(opdispatch.ops, ns).r(_C.empty((1,)))
    assert str(info.value) == f"{ns}::r: return 0 of the Python kernel registered at CPU: {message} {LIMIT}"


@pytest.mark.parametrize("factory", [
    lambda: opdispatch.empty(2**64),
    lambda: opdispatch.zeros((2, 2**63)),
    lambda: opdispatch.ones([np.uint64(2**64 - 1)]),
    lambda: opdispatch.full((2**64,), 1.0),
    lambda: opdispatch.ones(2).reshape(2**64),
    lambda: opdispatch.ones(2).view(-2**63 - 1),
])
def test_tensor_factory_and_view_sizes_beyond_int64(factory):
    with pytest.raises(OverflowError, match=r"^od::\w+(\.\w+)?\(\): argument '\w+' \(position \d\): the value -?\d+ .*"
                                            r"does not fit in int64"):
        factory()


def test_tensor_api_sizes_beyond_int64():
    with pytest.raises(OverflowError, match=r"^empty\(\): shape\[1\]: the value 18446744073709551616 does not fit"):
        _C.empty((2, 2**64))
    with pytest.raises(OverflowError, match=r"^empty_strided\(\): stride\[0\]: the value 9223372036854775808"):
        _C.empty_strided((2,), (2**63,))
    with pytest.raises(OverflowError, match=r"^_as_strided\(\): storage_offset: the value 18446744073709551616"):
        _C._as_strided(_C.empty((2,)), (1,), (1,), 2**64)
    with pytest.raises(OverflowError, match="the value 18446744073709551616 does not fit"):
        _C.empty((2,)).size(2**64)


# --- issue 9 item 4: size arithmetic (the tensor-level checks are in tests/cpp/test_CheckedArithmetic.cpp) ----


@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("make, message", [
    (lambda d: _C.empty((2**62 + 4,), device=d), "byte extent of a tensor with sizes [4611686018427387908]"),
    (lambda d: _C.empty((2**32, 2**32), dtype=opdispatch.uint8, device=d), "contiguous strides of sizes"),
    (lambda d: _C.empty((0, 2**62, 2**62), device=d), "contiguous strides of sizes [0, 4611686018427387904"),
    (lambda d: _C.empty_strided((3, 3), (2**62, 2**62), opdispatch.uint8, d), "byte extent"),
    (lambda d: _C._as_strided(_C.empty((2,), device=d), (2**62,), (2**62,), 0), "byte extent"),
    (lambda d: _C._as_strided(_C.empty((2,), device=d), (2,), (1,), 2**62), "byte offset"),
    (lambda d: opdispatch.ones(2, device=d).expand(2**62, 2**62, 2), "number of elements"),
])
def test_sizes_whose_arithmetic_overflows_are_refused(device, make, message):
    with pytest.raises(RuntimeError) as info:
        make(device)
    assert message in str(info.value) and "overflow" in str(info.value)


def test_views_cannot_reach_past_their_storage():
    x = _C.empty((2,))
    # Before the checks, this extent wrapped around to a small number and passed.
    with pytest.raises(RuntimeError, match="byte extent"):
        _C._as_strided(x, (2**62 + 1,), (2,), 0)
    with pytest.raises(IndexError, match="reaches byte 12 of its storage, which has 8 bytes"):
        _C._as_strided(x, (3,), (1,), 0)
    assert _C._as_strided(x, (0, 5), (1, 2**62), 100).numel() == 0  # no elements, no bytes (as PyTorch)


def test_a_huge_but_valid_allocation_raises_memory_error():
    with pytest.raises(MemoryError):
        _C.empty((2**62,), dtype=opdispatch.uint8)
    meta = _C.empty((2**63 - 1,), dtype=opdispatch.uint8, device="meta")  # meta allocates nothing
    assert meta.numel() == 2**63 - 1


def test_from_numpy_counts_bytes_by_strides():
    """2**59 broadcast elements over 8 bytes: numel fits int64, the extent is 8 bytes."""
    a = np.broadcast_to(np.float64(1.5), (2**30, 2**29))
    with pytest.warns(UserWarning, match="not writable"):
        t = opdispatch.from_numpy(a)
    assert t.numel() == 2**59 and t.stride() == (0, 0)
    assert t.numpy(force=True).strides == (0, 0) and t.numpy(force=True)[2**30 - 1, 5] == 1.5
    with pytest.raises(RuntimeError, match="number of elements of a tensor with sizes"):
        _C._as_strided(t, (2**30, 2**29, 32), (0, 0, 0), 0)


def test_numpy_of_a_dimension_with_a_huge_stride():
    """A size-1 dimension may have a stride whose byte value overflows; NumPy gets 0 for it."""
    x = opdispatch.from_numpy(np.arange(2, dtype=np.float32))
    view = _C._as_strided(x, (1, 2), (2**62, 1), 0)
    a = view.numpy()
    assert a.strides == (0, 4) and a.tolist() == [[0.0, 1.0]]


# --- issue 9 item 2: values C++ gives Python ----------------------------------------------------------


def test_a_str_default_that_is_not_utf8_never_crashes(lib, ns, make_op):
    """Whatever the parser decides for such defaults (refuse, or keep the
    bytes), using one raises a ValueError naming the argument."""
    try:
        op, name, calls = make_op(r"(Tensor x, str s='\377', int n=1) -> Tensor")
    except ValueError as e:
        assert "'s'" in str(e) or "\\377" in str(e)
        return
    schema = op.default._schema
    with pytest.raises(ValueError, match=r"^the default value of argument 's': the str value \"\\377\" is not valid "
                                         r"UTF-8"):
        schema.arguments[1].default_value
    x = _C.empty((1,))
    op(x)  # the default stays in C++: a Python kernel gets no value for it
    if make_op.kernel == "python":
        with pytest.raises(ValueError, match=rf"^{name}\(\): argument 's' \(position 2\): the str value \"\\377\" is "
                                             r"not valid UTF-8 and cannot become a Python str"):
            op(x, n=2)  # now it must be passed
        assert len(calls) == 1
    else:
        op(x, n=2)


def test_an_error_quoting_bytes_that_are_not_utf8_keeps_its_type_and_position():
    """A parse error quoting a literal that unescapes to the byte 0xff stays a
    ValueError with the argument and the position (found by fuzzing
    parse_schema; PyErr_SetString's strict decoding turned it into a
    UnicodeDecodeError)."""
    with pytest.raises(ValueError, match=r"argument 'a0': unknown device '\\xff'.* at position 18:") as info:
        _C.parse_schema('ns::r0(Device? a0="\\377") x')
    assert not isinstance(info.value, UnicodeError)


def test_an_error_quoting_a_nul_byte_keeps_its_position():
    """A parse error quoting a literal with a NUL byte keeps all of its
    message, the position included (found by fuzzing parse_schema: the
    message was passed on as a C string and ended at the NUL)."""
    with pytest.raises(ValueError, match=r"argument 'a0': unknown device '\x01\x00'.* at position 18:"):
        _C.parse_schema('ns::r0(Device? a0="\x01\x00") x')


def test_cpp_kernel_results_that_are_not_utf8(binding_ext):
    x = _C.empty((1,))
    with pytest.raises(ValueError, match=r"^call_binding::bad_utf8: return 0: the str value \"ok \\377\\376\" is not "
                                         r"valid UTF-8"):
        opdispatch.ops.call_binding.bad_utf8(x)
    with pytest.raises(ValueError, match=r"^call_binding::bad_utf8_list: return 0: the str value \"\\303\""):
        opdispatch.ops.call_binding.bad_utf8_list(x)


# --- issue 9 item 6: every argument type x every kind of wrong value ---------------------------------------

TYPES = ["Tensor", "Tensor?", "int", "int?", "SymInt", "float", "float?", "bool", "str", "str?", "Scalar", "Scalar?",
         "ScalarType", "ScalarType?", "Device", "Device?", "Layout", "MemoryFormat?", "int[]", "int[2]", "SymInt[]",
         "float[]", "bool[]", "str[]", "Scalar[]", "Tensor[]", "Tensor?[]", "int[]?", "Device[]", "int[][]"]

TENSOR = object()  # stands for a tensor (made per test)
WRONG = {
    "surrogate str": "\ud800",
    "str with escaped bytes": "cpu\udcff",
    "0-d ndarray": np.array(3),
    "2-d ndarray": np.zeros((2, 2)),
    "object ndarray": np.array([object()]),
    "object": object(),
    "bytes": b"\xff",
    "dict": {"a": 1},
    "complex": 1j,
    "nan": float("nan"),
    "__index__ raising": Index(Boom("no")),
    "__index__ raising ValueError": Index(ValueError("bad index")),
    "__index__ returning a float": Index(1.5),
    "__len__ raising": BadSequence(Boom("no len")),
    "__len__ lying": BadSequence(2**62),
    "list of surrogates": ["\udc80"],
    "nested wrong": [[object()]],
    "tensor": TENSOR,
}


@pytest.mark.parametrize("type_", TYPES)
@pytest.mark.parametrize("label", list(WRONG))
def test_wrong_values_raise_errors_naming_operator_and_argument(make_op, type_, label):
    op, name, _ = make_op(f"(Tensor x, {type_} arg) -> Tensor")
    value = WRONG[label]
    value = _C.empty((1,)) if value is TENSOR else value
    for call in call_forms(op):
        for args, kwargs in (((_C.empty((1,)), value), {}), ((_C.empty((1,)),), {"arg": value})):
            try:
                call(*args, **kwargs)
            except (TypeError, ValueError, OverflowError) as e:
                assert str(e).startswith(f"{name}(): argument 'arg' (position 2)"), str(e)
                assert "Unable to cast" not in str(e)


def test_a_wrong_value_keeps_the_original_error_as_its_cause(make_op):
    op, name, _ = make_op("(Tensor x, int[] arg) -> Tensor")
    with pytest.raises(TypeError) as info:
        op(_C.empty((1,)), np.array(3))
    assert str(info.value) == (f"{name}(): argument 'arg' (position 2) must be int[], not numpy.ndarray: converting "
                               f"it raised TypeError: iteration over a 0-d array")
    assert isinstance(info.value.__cause__, TypeError)
    with pytest.raises(ValueError) as info:
        op(_C.empty((1,)), [Index(ValueError("bad index"))])
    assert str(info.value).endswith("converting it raised ValueError: bad index")


@pytest.mark.parametrize("value", [np.ones(1), np.ones((1, 1)), np.array([object()])])
def test_float_arguments_take_no_ndarray_of_one_element(make_op, value):
    # NumPy before 2.4 converts a one-element array to a float (with a DeprecationWarning), 2.4 and later
    # raise: the argument is refused whatever NumPy does, as PyTorch's parser refuses it.
    op, name, calls = make_op("(Tensor x, float arg) -> Tensor")
    for call in call_forms(op):
        with pytest.raises(TypeError) as info:
            call(_C.empty((1,)), value)
        assert str(info.value) == f"{name}(): argument 'arg' (position 2) must be float, not numpy.ndarray"
    assert calls == []
    op(_C.empty((1,)), np.float32(2.5))  # a NumPy scalar stays a float


@pytest.mark.parametrize("type_", ["str", "Device", "str[]"])
def test_surrogate_strings_name_the_argument(make_op, type_):
    op, name, calls = make_op(f"(Tensor x, {type_} arg) -> Tensor")
    value = ["\ud800"] if type_.endswith("]") else "\ud800"
    with pytest.raises(ValueError) as info:
        op(_C.empty((1,)), value)
    assert str(info.value) == (f"{name}(): argument 'arg' (position 2): the str '\\ud800' is not valid text: it holds "
                               f"the lone surrogate \\ud800 at index 0, which UTF-8 cannot encode (pass text without "
                               f"surrogates, e.g. s.encode('utf-8', 'replace').decode())")
    assert calls == []


def test_python_kernel_results_of_the_wrong_kind_name_the_return(lib, ns):
    lib.define("r(Tensor x) -> str")
    lib.impl("r", lambda x: "\ud800", "CPU")
    with pytest.raises(ValueError, match=rf"^{ns}::r: return 0 of the Python kernel registered at CPU: the str "):
        getattr(opdispatch.ops, ns).r(_C.empty((1,)))
    lib.define("l(Tensor x) -> int[]")
    lib.impl("l", lambda x: np.array(1), "CPU")
    with pytest.raises(TypeError, match=rf"^{ns}::l: return 0 of the Python kernel registered at CPU must be int\[\], "
                                        r"not numpy.ndarray: converting it raised TypeError"):
        getattr(opdispatch.ops, ns).l(_C.empty((1,)))


def _legacy_op(ns: str) -> bool:
    """Defines ns::h with the legacy custom_op API (seed 001)."""
    _custom_ops.custom_op(f"{ns}::h", "(Tensor x) -> Tensor")
    return True


@pytest.mark.parametrize("register, message", [
    (lambda ns: library.Library(ns, "FRAGMENT").impl("f", 3, "CPU"), "impl of {ns}::f at dispatch key CPU"),
    (lambda ns: library.impl(f"{ns}::f", "cpu", 3), "impl of {ns}::f at dispatch key CPU"),
    (lambda ns: library.register_kernel(f"{ns}::f", "cpu", 3), "impl of {ns}::f at dispatch key CPU"),
    (lambda ns: library.register_fake(f"{ns}::f", 3), "register_fake for {ns}::f"),
    (lambda ns: library.register_autograd(f"{ns}::f", 3), "register_autograd for {ns}::f: backward"),
    (lambda ns: library.register_autograd(f"{ns}::f", lambda ctx, g: g, setup_context=3),
     "register_autograd for {ns}::f: setup_context"),
    (lambda ns: library.custom_op(f"{ns}::g", mutates_args=())(3), "custom_op {ns}::g"),
    (lambda ns: getattr(opdispatch.ops, ns).f.default.py_impl(_C.DispatchKey.CPU)(3), "py_impl for {ns}::f at CPU"),
    (lambda ns: library.Library("_", "IMPL", "CPU").fallback(3), "fallback for dispatch key CPU"),
    (lambda ns: _legacy_op(ns) and _custom_ops.impl_backward(f"{ns}::h")(3), "the backward impl of {ns}::h"),
    (lambda ns: _legacy_op(ns) and _custom_ops.impl_save_for_backward(f"{ns}::h")(3),
     "the save_for_backward impl of {ns}::h"),
])
def test_a_non_callable_kernel_names_the_operator(lib, ns, register, message):
    lib.define("f(Tensor x) -> Tensor")
    with pytest.raises(TypeError) as info:
        register(ns)
    assert str(info.value) == (message.format(ns=ns) + ": Input function is required to be a callable but found "
                               "type <class 'int'>; pass the function itself")
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CPU")


# --- issue 15 item 4: a misspelled keyword ----------------------------------------------------------------


def test_a_misspelled_keyword_is_reported_before_the_missing_argument(make_op):
    op, name, _ = make_op("(Tensor x, float factor, *, int steps=1) -> Tensor")
    for call in call_forms(op):
        with pytest.raises(TypeError) as info:
            call(_C.empty((1,)), fctor=2.0)
        assert str(info.value) == (f"{name}() got an unexpected keyword argument 'fctor'. Did you mean 'factor'? "
                                   f"Declaration: {name}(Tensor x, float factor, *, int steps=1) -> Tensor")
        with pytest.raises(TypeError, match=r"unexpected keyword argument 'step'\. Did you mean 'steps'\?"):
            call(_C.empty((1,)), 2.0, step=3)
        with pytest.raises(TypeError, match=r"unexpected keyword argument 'colour'\. Declaration"):
            call(_C.empty((1,)), 2.0, colour=3)  # nothing close: no suggestion
        with pytest.raises(TypeError, match=r"unexpected keyword argument '\\udc80x'\. Declaration"):
            call(_C.empty((1,)), 2.0, **{"\udc80x": 1})
        with pytest.raises(TypeError, match=r"missing value for argument 'factor'"):
            call(_C.empty((1,)), steps=2)  # all keywords known: the missing argument is the error


# --- what the fuzz target found -------------------------------------------------------------------------------


def test_a_lying_len_does_not_size_an_allocation(make_op):
    op, name, _ = make_op("(Tensor x, float[] arg) -> Tensor")
    op(_C.empty((1,)), BadSequence(2**62))  # iterated: items 1, 2, 3


class ClearsItsHolder:
    """An int whose __index__ empties the list or dict holding it."""

    def __init__(self, holder):
        self.holder = holder

    def __index__(self):
        self.holder.clear()
        return 7


def test_containers_changed_while_they_are_converted(make_op):
    """Converting an element runs Python code that may empty the list being
    read, or the dict of keyword arguments: the values of the call are the
    ones it began with (before, the converter read freed elements)."""
    seen = []
    op, _, _ = make_op("(Tensor x, int[] arg, int n=0) -> Tensor", lambda x, arg, n=0: seen.append((arg, n)) or x)
    items: list = [1, 2, 3]
    items.insert(1, ClearsItsHolder(items))
    op(_C.empty((1,)), items)
    kwargs: dict = {}
    kwargs["arg"] = [ClearsItsHolder(kwargs)]
    kwargs["n"] = int("123456789012")  # an int only the dict holds
    # A boxed handle's call gets this very dict (CPython passes an exact dict
    # on to a function taking **kwargs), as args tuple and kwargs dict.
    _C._dispatch_find_schema_or_throw(op.default._name, "").call_boxed(_C.empty((1,)), **kwargs)
    if make_op.kernel == "python":
        assert seen == [([1, 7, 2, 3], 0), ([7], 123456789012)]
