"""Port of PyTorch's LoggingTensor test utilities (pytorch/pytorch
torch/testing/_internal/logging_tensor.py): a wrapper subclass and a mode
that log each operator call, rendered by capture_logs with short tensor ids,
dtype abbreviations and shapes; the subclass prints through
Tensor.__repr__(tensor_contents=...). The ported code is in
ported/logging_tensor.py; the expected logs are what the original gives on
PyTorch 2.13 for the same program, with the operator's module
"torch._ops.aten" as opdispatch names it ("opdispatch.ops.od")."""
from __future__ import annotations

import logging

import pytest

import opdispatch as torch
from opdispatch.utils._dtype_abbrs import dtype_abbrs
from _port import loaded


@pytest.fixture(scope="module")
def lt():
    with loaded("logging_tensor") as module:
        yield module


@pytest.fixture(autouse=True)
def _propagating_between_tests():
    # capture_logs leaves the logger non-propagating, and pytest attaches its own capture handler to such
    # loggers at each test's start; that handler cannot format these records (their args are the call's).
    yield
    logging.getLogger("LoggingTensor").propagate = True


def test_a_logging_tensor_logs_each_call_with_ids_types_and_shapes(lt):
    with lt.capture_logs() as logs:
        a = lt.LoggingTensor(torch.arange(6.0).reshape(2, 3))
        b = a.view(3, 2).sum(0)
        c = a.transpose(0, 1).relu()
    assert logs == [
        "$1: f32[3, 2] = opdispatch.ops.od.view.default($0, ['3', '2'])",
        "$2: f32[2] = opdispatch.ops.od.sum.dim_IntList($1, ['0'])",
        "$3: f32[3, 2] = opdispatch.ops.od.transpose.int($0, 0, 1)",
        "$4: f32[3, 2] = opdispatch.ops.od.relu.default($3)",
    ]
    assert type(b) is type(c) is lt.LoggingTensor and b.elem.tolist() == [6.0, 9.0]


def test_inputs_and_the_forward_of_a_graph_are_logged(lt):
    with lt.capture_logs() as logs:
        x = lt.LoggingTensor(torch.tensor([3.0]), requires_grad=True)
        lt.log_input("x", x)
        y = x * x
        grad_y = lt.LoggingTensor(torch.tensor([1.0]))
        lt.log_input("grad_y", grad_y)
        (g,) = torch.autograd.grad((y,), (x,), (grad_y,))
    assert g.elem.tolist() == [6.0]
    assert logs[:3] == [
        "$0: f32[1] = input('x')",
        "$1: f32[1] = opdispatch.ops.od.mul.Tensor($0, $0)",
        "$2: f32[1] = input('grad_y')",
    ]


def test_the_mode_logs_calls_on_plain_tensors(lt):
    with lt.capture_logs_with_logging_tensor_mode() as logs:
        p = torch.ones(2, 3)
        p.relu().neg()
        p.transpose(0, 1)
    # PyTorch's binding fills ones' defaults in (device=..., pin_memory=False); its later lines are these.
    assert logs[1:] == [
        "$1: f32[2, 3] = opdispatch.ops.od.relu.default($0)",
        "$2: f32[2, 3] = opdispatch.ops.od.neg.default($1)",
        "$3: f32[3, 2] = opdispatch.ops.od.transpose.int($0, 0, 1)",
    ]


def test_the_reentrant_variant_and_printing(lt):
    with lt.capture_logs() as logs:
        b = lt.LoggingTensorReentrant(torch.tensor([1.0, -2.0])).abs().sum()
    assert logs == ["$1: f32[2] = opdispatch.ops.od.abs.default($0)",
                    "$2: f32[] = opdispatch.ops.od.sum.default($1)"]
    assert b.elem.item() == 3.0
    with lt.capture_logs() as logs:
        text = repr(lt.LoggingTensor(torch.tensor([3.0]), requires_grad=True))
    assert logs == []  # printing runs no operator, as in PyTorch
    # PyTorch 2.13: "LoggingTensor(tensor([3.]), requires_grad=True)" (it leaves the default dtype out).
    assert text == "LoggingTensor(tensor([3.], dtype=opdispatch.float32), dtype=opdispatch.float32, requires_grad=True)"


def test_every_dtype_has_an_abbreviation():
    dtypes = {v for v in vars(torch).values() if isinstance(v, torch.dtype)}
    assert set(dtype_abbrs) == dtypes
    assert (dtype_abbrs[torch.float32], dtype_abbrs[torch.int64], dtype_abbrs[torch.bool]) == ("f32", "i64", "b8")
