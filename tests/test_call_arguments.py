"""The arguments of a Python call (Note [Python call arguments] in
csrc/python/PythonCall.h): a call that reaches a Python kernel hands it the
caller's objects where an IValue round trip would give back the same object,
and the converted values elsewhere. Every case here checks that the kernel
sees exactly what that round trip would give it: PyTorch's convention."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C
from _helpers import tensor

DK = _C.DispatchKey


@pytest.fixture
def recorder(lib, ns):
    """An operator whose CPU kernel records the (args, kwargs) it receives and returns its first argument."""
    calls = []

    def define(schema: str, key: str = "CPU"):
        lib.define(schema)
        name = schema.split("(", 1)[0]

        def kernel(*args, **kwargs):
            calls.append((args, kwargs))
            return args[0]

        lib.impl(name, kernel, key)
        base, _, overload = name.partition(".")
        return getattr(getattr(getattr(opdispatch.ops, ns), base), overload or "default")

    return define, calls


def test_positional_tensor_reaches_the_kernel_as_the_same_object(recorder):
    define, calls = recorder
    op = define("f(Tensor x) -> Tensor")
    x = tensor([1.0])
    assert op(x) is x
    assert calls[-1] == ((x,), {}) and calls[-1][0][0] is x


def test_keyword_arguments_arrive_positionally(recorder):
    define, calls = recorder
    op = define("f(Tensor x, int n) -> Tensor")
    x = tensor([1.0])
    op(x, n=3)
    assert calls[-1] == ((x, 3), {})


def test_trailing_arguments_equal_to_their_defaults_are_dropped(recorder):
    define, calls = recorder
    op = define("f(Tensor x, int n=2, bool flag=False) -> Tensor")
    x = tensor([1.0])
    op(x, 2, False)  # both equal their defaults: dropped, as PyTorch does
    assert calls[-1] == ((x,), {})
    op(x, 2, True)  # the last one differs: everything passes through
    assert calls[-1] == ((x, 2, True), {})
    op(x, 5)
    assert calls[-1] == ((x, 5), {})


def test_keyword_only_arguments_arrive_as_keywords_unless_default(recorder):
    define, calls = recorder
    op = define("f(Tensor x, *, float scale=1.0) -> Tensor")
    x = tensor([1.0])
    op(x)
    assert calls[-1] == ((x,), {})
    op(x, scale=2.5)
    assert calls[-1] == ((x,), {"scale": 2.5})


def test_values_the_round_trip_would_convert_are_converted(recorder):
    define, calls = recorder
    op = define("f(Tensor x, float a, int b, Scalar s) -> Tensor")
    x = tensor([1.0])
    op(x, 3, True, np.int64(4))  # int for float, bool for int, NumPy int for Scalar
    args = calls[-1][0]
    assert args[1] == 3.0 and type(args[1]) is float
    assert args[2] == 1 and type(args[2]) is int
    assert args[3] == 4 and type(args[3]) is int
    op(x, 1.5, True, 2.5)  # only the bool needs converting
    assert calls[-1][0][2] == 1 and type(calls[-1][0][2]) is int
    op(x, 1.5, 7, 2.5)  # already the right Python types: passed as they are
    assert calls[-1][0][1:] == (1.5, 7, 2.5)


def test_lists_arrive_as_new_lists_of_the_same_tensors(recorder):
    define, calls = recorder
    op = define("f(Tensor x, Tensor[] ys) -> Tensor")
    x, y = tensor([1.0]), tensor([2.0])
    op(x, (y, x))  # a tuple arrives as a list, with the same tensor objects
    args = calls[-1][0]
    assert isinstance(args[1], list) and args[1][0] is y and args[1][1] is x


def test_tensor_subclasses_keep_their_class_and_identity(recorder):
    define, calls = recorder
    op = define("f(Tensor x) -> Tensor")

    class MyTensor(opdispatch.Tensor):
        pass

    sub = _C._make_subclass(MyTensor, tensor([1.0]))
    assert op(sub) is sub
    assert type(calls[-1][0][0]) is MyTensor


def test_tls_guards_choose_the_kernel(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: tensor([1.0]), "CPU")
    lib.impl("f", lambda x: tensor([2.0]), "PrivateUse1")
    op = getattr(opdispatch.ops, ns).f.default
    x = tensor([0.0])
    assert op(x).tolist() == [1.0]
    with _C._IncludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
        assert op(x).tolist() == [2.0]
        with _C._ExcludeDispatchKeyGuard(_C.DispatchKeySet(DK.PrivateUse1)):
            assert op(x).tolist() == [1.0]
    with _C._ExcludeDispatchKeyGuard(_C.DispatchKeySet(DK.CPU)), pytest.raises(NotImplementedError):
        op(x)


def test_wrong_argument_types_fail_the_same_way(recorder):
    define, calls = recorder
    op = define("f(Tensor x, int n) -> Tensor")
    with pytest.raises(TypeError, match=r"argument 'n' \(position 2\) must be int, not str"):
        op(tensor([1.0]), "three")
    with pytest.raises(TypeError, match="takes 2 positional arguments but 3 were given"):
        op(tensor([1.0]), 1, 2)
    assert calls == []


def test_wrong_results_are_checked(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: 3, "CPU")
    with pytest.raises(TypeError, match=r"returned int for return 0 but the schema declares Tensor"):
        getattr(opdispatch.ops, ns).f(tensor([1.0]))


def test_exceptions_pass_through_unchanged(lib, ns):
    class Boom(Exception):
        pass

    def kernel(x):
        raise Boom("from the kernel")

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", kernel, "CPU")
    with pytest.raises(Boom, match="from the kernel") as info:
        getattr(opdispatch.ops, ns).f(tensor([1.0]))
    assert any(frame.name == "kernel" for frame in info.traceback)


def test_mutated_arguments_get_their_versions_bumped_positional_or_keyword(lib, ns):
    lib.define("f_(Tensor(a!) x, int n=1) -> Tensor(a!)")
    lib.impl("f_", lambda x, n=1: x, "CPU")
    op = getattr(opdispatch.ops, ns).f_.default
    x = tensor([1.0])
    op(x)
    assert x._version == 1
    op(x, n=5)
    assert x._version == 2


def test_kernels_with_keyset_get_a_cached_keyset_object(lib, ns):
    seen = []

    def kernel(keyset, x):
        seen.append(keyset)
        return x

    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", kernel, "CPU", with_keyset=True)
    op = getattr(opdispatch.ops, ns).f.default
    x = tensor([1.0])
    op(x)
    op(x)
    assert seen[0] is seen[1] and seen[0].has(DK.CPU)


def test_redispatch_uses_the_given_keyset(lib, ns):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: tensor([1.0]), "CPU")
    op = getattr(opdispatch.ops, ns).f.default

    def autograd_kernel(keyset, x):
        return op.redispatch(keyset & _C._after_autograd_keyset, x)

    lib.impl("f", autograd_kernel, "AutogradCPU", with_keyset=True)
    x = tensor([0.0])
    x.requires_grad = True
    assert op(x).tolist() == [1.0]
    with pytest.raises(TypeError, match="must be a DispatchKeySet"):
        op.redispatch("CPU", x)


def test_a_single_overload_packet_call_passes_the_objects(recorder, ns):
    define, calls = recorder
    define("g(Tensor x) -> Tensor")
    x = tensor([1.0])
    assert getattr(opdispatch.ops, ns).g(x) is x
    assert calls[-1][0][0] is x


def test_symbool_and_qscheme_arguments_are_passable(recorder):
    # PyTorch's argument parser takes a bool for SymBool and an int for QScheme
    # (it has no Python qscheme values it can convert).
    define, calls = recorder
    op = define("f(Tensor x, SymBool b, QScheme q, SymBool[] bs) -> Tensor")
    x = tensor([1.0])
    op(x, True, 2, [False, True])
    assert calls[-1] == ((x, True, 2, [False, True]), {})
    with pytest.raises(TypeError, match=r"argument 'b' \(position 2\) must be SymBool, not str"):
        op(x, "yes", 0, [])
    with pytest.raises(TypeError, match=r"argument 'q' \(position 3\) must be QScheme, not float"):
        op(x, False, 1.5, [])


def test_a_default_before_a_given_argument_arrives_as_its_value(recorder):
    define, calls = recorder
    op = define("f(Tensor x, int n=2, bool flag=False) -> Tensor")
    x = tensor([1.0])
    op(x, flag=True)
    assert calls[-1] == ((x, 2, True), {})


def test_a_list_argument_arrives_as_a_new_list(recorder):
    # The kernel may change the list it gets without changing the caller's.
    define, calls = recorder
    op = define("f(Tensor x, int[] sizes) -> Tensor")
    x, sizes = tensor([1.0]), [1, 2]
    op(x, sizes)
    got = calls[-1][0][1]
    assert got == [1, 2] and got is not sizes


def test_values_that_do_not_convert_fail_naming_the_argument(recorder):
    define, calls = recorder
    op = define("f(Tensor x, int n, str s) -> Tensor")
    x = tensor([1.0])
    with pytest.raises((OverflowError, ValueError), match="'n'"):
        op(x, 2**70, "a")
    with pytest.raises((TypeError, ValueError, UnicodeError), match="'s'|surrogate"):
        op(x, 1, "\ud800")
    assert calls == []



def test_operators_and_packets_are_called_through_vectorcall(recorder):
    # No args tuple per call: the Python subclasses inherit the C types' vectorcall entry.
    py_tpflags_have_vectorcall = 1 << 11
    define, _ = recorder
    op = define("f(Tensor x) -> Tensor")
    assert type(op).__flags__ & py_tpflags_have_vectorcall
    assert type(op.overloadpacket).__flags__ & py_tpflags_have_vectorcall
