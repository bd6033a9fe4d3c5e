"""Argument errors PyTorch raises as RuntimeError: opdispatch raises them as
ArgumentValueError / ArgumentTypeError, which are the Python-convention
ValueError / TypeError and also RuntimeError, so ported code that catches
RuntimeError still does (issue 28, item 3). The PyTorch column is the type
PyTorch 2.13 raises for the same call under torch's names (checked side by
side); each message names the operator or API and the argument."""
from __future__ import annotations

import pytest

import opdispatch
from opdispatch import _C

od = opdispatch.ops.od

# (call, the type PyTorch 2.13 raises, opdispatch's type, a part of opdispatch's message)
CASES = [
    (lambda: opdispatch.empty(2, device="bogus"), RuntimeError, _C.ArgumentValueError,
     "od::empty.memory_format(): argument 'device' (position 4): unknown device 'bogus'"),
    (lambda: opdispatch.zeros(2, device="cpu:x"), RuntimeError, _C.ArgumentValueError,
     "argument 'device' (position 4): invalid device index in 'cpu:x'"),
    (lambda: opdispatch.ones(2).to("bogus"), RuntimeError, _C.ArgumentValueError, "unknown device 'bogus'"),
    (lambda: od.empty.memory_format([2], device="bogus"), RuntimeError, _C.ArgumentValueError,
     "argument 'device' (position 4): unknown device 'bogus'"),
    (lambda: opdispatch.device("bogus"), RuntimeError, _C.ArgumentValueError, "unknown device 'bogus'"),
    (lambda: opdispatch.device(""), RuntimeError, _C.ArgumentValueError, "unknown device ''"),
    (lambda: opdispatch.device("cpu", -2), RuntimeError, _C.ArgumentValueError,
     "device index must be in [0, 127], got -2"),
    (lambda: opdispatch.device("cpu:0", 1), RuntimeError, _C.ArgumentValueError,
     "device type 'cpu:0' already has an index"),
    (lambda: od.add.Tensor(opdispatch.ones(1), "x"), RuntimeError, _C.ArgumentTypeError,
     "od::add.Tensor(): argument 'other' (position 2) must be Tensor, not str"),
    (lambda: od.add.Tensor(opdispatch.ones(1)), RuntimeError, _C.ArgumentTypeError,
     "od::add.Tensor() missing value for argument 'other'"),
    (lambda: od.add.Tensor(opdispatch.ones(1), opdispatch.ones(1), foo=1), RuntimeError, _C.ArgumentTypeError,
     "od::add.Tensor() got an unexpected keyword argument 'foo'"),
    (lambda: od.add.Tensor(opdispatch.ones(1), opdispatch.ones(1), 1, 2, 3), RuntimeError, _C.ArgumentTypeError,
     "od::add.Tensor() takes 2 positional arguments but 5 were given"),
    (lambda: od.add.Tensor(opdispatch.ones(1), opdispatch.ones(1), self=1), RuntimeError, _C.ArgumentTypeError,
     "od::add.Tensor() got multiple values for argument 'self'"),
    (lambda: od.empty.memory_format([2], device=1.5), RuntimeError, _C.ArgumentTypeError,
     "argument 'device' (position 4) must be Device?, not float"),
    # PyTorch's Python argument parser raises TypeError for these; ours is that and a RuntimeError too.
    (lambda: opdispatch.empty(2, dtype="float32"), TypeError, _C.ArgumentTypeError,
     "empty(): argument 'dtype' must be opdispatch.dtype, not str"),
    (lambda: opdispatch.ones(1.5), TypeError, _C.ArgumentTypeError,
     "argument 'size' (position 1) must be SymInt[], not list: element 0 is float"),
    (lambda: opdispatch.empty(2, layout="strided"), TypeError, _C.ArgumentTypeError,
     "argument 'layout' (position 3) must be Layout?, not str"),
]


@pytest.mark.parametrize("call,torch_type,ours,message", CASES, ids=[c[3][:40] for c in CASES])
def test_argument_errors_are_caught_as_pytorch_raises_them(call, torch_type, ours, message):
    with pytest.raises(torch_type) as info:
        call()
    assert type(info.value) is ours and message in str(info.value)


def test_the_classes_keep_the_python_convention():
    assert issubclass(_C.ArgumentValueError, ValueError) and issubclass(_C.ArgumentValueError, RuntimeError)
    assert issubclass(_C.ArgumentTypeError, TypeError) and issubclass(_C.ArgumentTypeError, RuntimeError)
    with pytest.raises(ValueError, match="unknown device 'bogus'"):
        opdispatch.empty(2, device="bogus")
    with pytest.raises(TypeError, match="must be Tensor, not str"):
        od.add.Tensor(opdispatch.ones(1), "x")


_T = opdispatch.ones(2)
# Public factories and methods given an int or str dtype. PyTorch 2.13 raises TypeError for each, with
# "<name>(): argument 'dtype' must be torch.dtype, not <type>" where the function has one signature (for
# arange, rand, randn, randperm, to and sum, whose several signatures give "received an invalid combination of
# arguments"); the od operators below them take a ScalarType's int, as torch.ops.aten's do.
DTYPE_CALLS = {
    "ones": lambda d: opdispatch.ones(2, dtype=d), "zeros": lambda d: opdispatch.zeros(2, dtype=d),
    "empty": lambda d: opdispatch.empty(2, dtype=d), "full": lambda d: opdispatch.full((2,), 1.0, dtype=d),
    "arange": lambda d: opdispatch.arange(3, dtype=d), "tensor": lambda d: opdispatch.tensor([1, 2], dtype=d),
    "rand": lambda d: opdispatch.rand(2, dtype=d), "randn": lambda d: opdispatch.randn(2, dtype=d),
    "randperm": lambda d: opdispatch.randperm(3, dtype=d),
    "empty_strided": lambda d: opdispatch.empty_strided((2,), (1,), dtype=d),
    "ones_like": lambda d: opdispatch.ones_like(_T, dtype=d), "zeros_like": lambda d: opdispatch.zeros_like(_T, dtype=d),
    "empty_like": lambda d: opdispatch.empty_like(_T, dtype=d), "to": lambda d: _T.to(dtype=d),
    "full_like": lambda d: opdispatch.full_like(_T, 1, dtype=d),
    "sum": lambda d: _T.sum(dtype=d), "new_ones": lambda d: _T.new_ones(2, dtype=d),
    "new_zeros": lambda d: _T.new_zeros(2, dtype=d), "new_empty": lambda d: _T.new_empty(2, dtype=d),
    "new_full": lambda d: _T.new_full((2,), 1, dtype=d), "new_tensor": lambda d: _T.new_tensor([1], dtype=d),
}


@pytest.mark.parametrize("name", DTYPE_CALLS)
@pytest.mark.parametrize("dtype", [6, 1, "float32"])
def test_public_functions_refuse_a_dtype_that_is_not_a_dtype(name, dtype):
    with pytest.raises(TypeError) as info:
        DTYPE_CALLS[name](dtype)
    assert type(info.value) is _C.ArgumentTypeError
    assert str(info.value) == f"{name}(): argument 'dtype' must be opdispatch.dtype, not {type(dtype).__name__}"
    assert DTYPE_CALLS[name](None).dtype is (opdispatch.int64 if name in ("arange", "tensor", "randperm")
                                            else opdispatch.float32)
    assert od.ones.default([2], dtype=6).dtype is opdispatch.float32  # the operator takes the int, as aten::ones
