"""Port of executorch's executorch_call_delegate (pytorch/executorch
exir/delegate.py): a user-defined HigherOrderOperator with fallthrough keys,
a dense kernel, autograd_not_implemented(deferred_error=True), a fake
function (_higher_order_ops.utils.register_fake) and a make_fx tracing rule
written with disable_proxy_modes_tracing, tracer.root.register_module,
tracer.unwrap_proxy, tracer.create_proxy and track_tensor_tree. The ported
code is in ported/executorch_delegate.py; every expected value below is
what its PyTorch 2.13 form gives."""
from __future__ import annotations

import pytest

import opdispatch as torch
from opdispatch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from opdispatch.tracing import make_fx
from _port import loaded


@pytest.fixture(scope="module")
def et():
    with loaded("executorch_delegate") as module:
        yield module


@pytest.fixture
def lowered(et):
    return et.LoweredBackendModule(lambda x, y: (x * y, x + y), "numpy_backend")


def test_eager_call_runs_the_lowered_program(et, lowered):
    out = et.executorch_call_delegate(lowered, torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    assert [t.tolist() for t in out] == [[3.0, 8.0], [4.0, 6.0]]


def test_make_fx_records_one_node_and_the_module(et, lowered):
    # PyTorch 2.13: nodes x_1, y_1, lowered_module_0 (get_attr), executorch_call_delegate, getitem,
    # getitem_1, sin, output; the replay on ([0.5, 1.0], [2.0, 2.0]) gives sin([1.0, 2.0]).
    gm = make_fx(lambda x, y: et.executorch_call_delegate(lowered, x, y)[0].sin())(
        torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    assert [(n.name, n.op) for n in gm.graph.nodes] == [
        ("x_1", "placeholder"), ("y_1", "placeholder"), ("lowered_module_0", "get_attr"),
        ("executorch_call_delegate", "call_function"), ("getitem", "call_function"),
        ("getitem_1", "call_function"), ("sin", "call_function"), ("output", "output")]
    assert gm.graph.nodes[3].target is et.executorch_call_delegate
    assert gm.lowered_module_0 is lowered
    assert gm(torch.tensor([0.5, 1.0]), torch.tensor([2.0, 2.0])).tolist() == pytest.approx([0.841471, 0.909297],
                                                                                           abs=1e-6)


def test_the_fake_function_runs_under_fake_tensor_mode(et, lowered):
    with FakeTensorMode() as mode:
        out = et.executorch_call_delegate(lowered, mode.from_tensor(torch.ones(2)), mode.from_tensor(torch.ones(2)))
    assert [type(t) for t in out] == [FakeTensor, FakeTensor] and [tuple(t.shape) for t in out] == [(2,), (2,)]
    gm = make_fx(lambda x, y: et.executorch_call_delegate(lowered, x, y), tracing_mode="fake")(
        torch.ones(2), torch.ones(2))
    assert [n.name for n in gm.graph.nodes] == [
        "x_1", "y_1", "lowered_module_0", "executorch_call_delegate", "getitem", "getitem_1", "output"]


def test_autograd_is_deferred_to_backward(et, lowered):
    outs = et.executorch_call_delegate(lowered, torch.ones(2, requires_grad=True), torch.ones(2))
    assert [t.requires_grad for t in outs] == [True, True]
    with pytest.raises(RuntimeError, match="Autograd not implemented for executorch_call_delegate"):
        outs[0].sum().backward()


def test_the_first_argument_must_be_a_lowered_module(et):
    with pytest.raises(ValueError, match="must be a LoweredBackendModule"):
        make_fx(lambda x: et.executorch_call_delegate(lambda x: x, x))(torch.ones(2))
