"""The pointwise operators of issue 31 (atan2, division with a rounding mode,
fmod, remainder, clamp, bitwise and logical operators, erf, elu, gelu,
hardtanh, leaky_relu, their backward operators, fill and copy) against
PyTorch 2.13: values, dtypes and shapes (contiguous and transposed inputs,
0-d and empty, mixed dtypes), float64 gradients, errors, schemas and tags, as
tests/data/make_pointwise_torch.py recorded them in
tests/data/pointwise_torch.json. Samples for the value, gradcheck and Meta
tests: tests/opinfo/pointwise.py."""
from __future__ import annotations

import json
import operator
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opdispatch
from opdispatch import _C

TORCH = json.loads((Path(__file__).parent / "data" / "pointwise_torch.json").read_text())
TOLERANCE = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-10}


def op(name: str) -> _C._DispatchOperator:
    base, _, overload = name.partition(".")
    return _C._DispatchOperator("od::" + base, overload)


def make(spec: Any, requires_grad: bool = False) -> Any:
    """A tensor argument from its recorded form (see make_pointwise_torch.py); anything else as it is."""
    if not isinstance(spec, dict):
        return spec
    # Through NumPy's cast: negative values wrap into uint8 as torch.tensor wraps them.
    x = opdispatch.tensor(np.array(spec["values"]).astype(spec["dtype"]))
    if spec["t"] and x.dim() == 2:
        x = x.transpose(0, 1).contiguous().transpose(0, 1)
        assert not x.is_contiguous()
    if requires_grad and x.dtype.is_floating_point:
        x = x.detach().requires_grad_()
    return x


def expected_array(values: Any, dtype: str) -> np.ndarray:
    def number(v: Any) -> Any:
        if isinstance(v, list):
            return [number(x) for x in v]
        return float(v) if isinstance(v, str) else v

    return np.asarray(number(values), dtype=np.dtype(dtype))


def assert_close(got: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    if dtype in TOLERANCE:
        tol = TOLERANCE[dtype]
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected)


def case_id(case: dict) -> str:
    def show(x: Any) -> str:
        if isinstance(x, dict):
            return x["dtype"] + ("T" if x["t"] else "") + str(list(np.shape(x["values"])))
        return repr(x)

    return f"{case['op']}({', '.join([show(a) for a in case['args']] + [f'{k}={show(v)}' for k, v in case['kwargs'].items()])})"


CASES = [pytest.param(case, id=case_id(case)) for case in TORCH["cases"]]


@pytest.mark.parametrize("case", CASES)
def test_values_dtypes_and_errors_match_pytorch(case):
    args = [make(a) for a in case["args"]]
    kwargs = {k: make(v) for k, v in case["kwargs"].items()}
    if "error" in case:
        kind, message = case["error"]
        with pytest.raises(getattr(__builtins__, kind, None) or RuntimeError) as info:
            op(case["op"])(*args, **kwargs)
        if kind == "RuntimeError":  # same words, after PyTorch's "torch.clamp: "-style prefix
            # (PyTorch names a dtype "long int" in some messages, "Long" in others: opdispatch always "Long".)
            expected = re.sub(r"^torch\.\w+: ", "", message).replace("long int", "Long")
            assert expected in str(info.value)
        return
    out = op(case["op"])(*args, **kwargs)
    assert str(out.dtype) == "opdispatch." + case["dtype"]
    assert list(out.shape) == case["shape"]
    assert_close(out.numpy(), expected_array(case["values"], case["dtype"]), case["dtype"])
    if "out" in kwargs:
        assert out is kwargs["out"]


GRAD_CASES = [pytest.param(case, id=case_id(case)) for case in TORCH["cases"] if "grads" in case or "grad_error" in case]


@pytest.mark.parametrize("case", GRAD_CASES)
def test_float64_gradients_match_pytorch(case):
    args = [make(a, requires_grad=True) for a in case["args"]]
    kwargs = {k: make(v, requires_grad=True) for k, v in case["kwargs"].items()}
    leaves = [x for x in [*args, *kwargs.values()] if isinstance(x, opdispatch.Tensor) and x.requires_grad]
    out = op(case["op"])(*args, **kwargs).sum()
    if "grad_error" in case:  # PyTorch has no derivative for this operator
        with pytest.raises(RuntimeError, match=re.escape(case["grad_error"].replace("aten::", "od::"))):
            out.backward()
        return
    out.backward()
    assert len(leaves) == len(case["grads"])
    for leaf, expected in zip(leaves, case["grads"]):
        if expected is None:  # PyTorch: unused; here the formula may give zeros
            assert leaf.grad is None or not leaf.grad.numpy().any()
        else:
            assert_close(leaf.grad.numpy(), expected_array(expected, "float64"), "float64")


INPLACE_OPERATORS = {"iand", "ior", "ixor", "ifloordiv", "imod"}
CALLS = [pytest.param(c, id=f"{c['kind']}-{c['name']}-{i}") for i, c in enumerate(TORCH["calls"])]


@pytest.mark.parametrize("call", CALLS)
def test_methods_functions_and_python_operators_match_pytorch(call):
    """The same method, public function or Python operator call on opdispatch tensors as the recorded one
    on PyTorch's (methods and functions call od operators through the dispatcher)."""
    values = [make(a) for a in call["args"]]
    kwargs = {k: make(v) for k, v in call["kwargs"].items()}
    name = call["name"]
    fn = {"method": lambda: getattr(values[0], name)(*values[1:], **kwargs),
          "function": lambda: getattr(opdispatch, name)(*values, **kwargs),
          "operator": lambda: getattr(operator, name)(*values)}[call["kind"]]
    if "error" in call:
        with pytest.raises(RuntimeError, match=re.escape(call["error"][1])):
            fn()
        return
    out = fn()
    if "dtype_result" in call:
        assert out is getattr(opdispatch, call["dtype_result"])
        return
    assert str(out.dtype) == "opdispatch." + call["dtype"] and list(out.shape) == call["shape"]
    assert_close(out.numpy(), expected_array(call["values"], call["dtype"]), call["dtype"])
    if name in INPLACE_OPERATORS or (call["kind"] == "method" and name.endswith("_")):
        assert out is values[0]  # in place: the same tensor


@pytest.mark.parametrize("name", sorted(TORCH["schemas"]))
def test_schema_and_tags_are_pytorchs(name):
    base, _, overload = name.partition(".")
    overload_op = getattr(getattr(opdispatch.ops.od, base), overload or "default")
    assert str(overload_op._schema) == "od::" + TORCH["schemas"][name]
    assert sorted(t.name for t in overload_op.tags) == TORCH["tags"][name]


def test_copy_has_no_derivative_as_in_pytorch():
    x = opdispatch.ones(3, requires_grad=True)
    out = op("copy")(opdispatch.zeros(3), x)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative for od::copy is not implemented"):
        out.sum().backward()


def test_out_variant_refuses_inputs_that_require_grad():
    x = opdispatch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
        op("atan2.out")(x, x, out=opdispatch.empty(3))
