"""The Core ATen unary operators of _builtins/unary_math.py against PyTorch
2.13: values, gradients, dtypes of integer and bool inputs, schemas and tags,
as tests/data/unary_math_torch.json recorded them from PyTorch (float64
inputs). Samples for the value, gradcheck and Meta tests: tests/opinfo/unary_math.py."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import opdispatch
from opdispatch import _C

TORCH = json.loads((Path(__file__).parent / "data" / "unary_math_torch.json").read_text())


def op(name: str):
    return _C._DispatchOperator("od::" + name, "")


@pytest.mark.parametrize("name", sorted(TORCH["cases"]))
def test_values_and_gradients_match_pytorch(name):
    case = TORCH["cases"][name]
    x = opdispatch.tensor(case["input"], dtype=opdispatch.float64, requires_grad=case["grad"] is not None)
    out = op(name)(x)
    np.testing.assert_allclose(out.detach().numpy(), case["output"], rtol=1e-12, atol=0)
    if case["grad"] is not None:
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), case["grad"], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(TORCH["integers"]))
def test_integer_inputs_keep_pytorchs_dtype_and_values(name):
    dtype, values = TORCH["integers"][name]
    out = op(name)(opdispatch.tensor([-2, 0, 3]))
    assert str(out.dtype) == f"opdispatch.{dtype}" and out.numpy().tolist() == values


@pytest.mark.parametrize("name", sorted(TORCH["bools"]))
def test_bool_inputs(name):
    out = op(name)(opdispatch.tensor([True, False]))
    assert out.dtype == opdispatch.bool and out.numpy().tolist() == TORCH["bools"][name]


@pytest.mark.parametrize("name", sorted(TORCH["predicates"]))
def test_predicates(name):
    values, expected = TORCH["predicates"][name]
    out = op(name)(opdispatch.tensor([float(v) for v in values]))
    assert out.dtype == opdispatch.bool and out.numpy().tolist() == expected


@pytest.mark.parametrize("name", sorted(TORCH["schemas"]))
def test_schema_and_tags_are_pytorchs(name):
    overload = getattr(opdispatch.ops.od, name).default
    assert str(overload._schema) == TORCH["schemas"][name]
    assert sorted(t.name for t in overload.tags) == TORCH["tags"][name]


@pytest.mark.parametrize("name", ["acos", "floor", "isnan", "rsqrt"])
def test_methods_and_functions_reach_the_operator(name):
    x = opdispatch.tensor([0.25, 4.0])
    expected = op(name)(x).numpy()
    np.testing.assert_array_equal(getattr(x, name)().numpy(), expected)
    np.testing.assert_array_equal(getattr(opdispatch, name)(x).numpy(), expected)


def test_nan_where_pytorch_gives_nan():
    out = op("acos")(opdispatch.tensor([2.0, -1.0], dtype=opdispatch.float64)).numpy()
    assert math.isnan(out[0]) and out[1] == pytest.approx(math.pi)
