"""Port of PyTorch's traced control-flow tests (pytorch/pytorch
test/functorch/test_control_flow.py, TestControlFlowTraced): cond, nested
cond and map traced with make_fx (real and fake), replayed through
graph.forward, with the branches as submodules (named_modules). The ported
functions are in ported/control_flow_tracing.py; expected values are what
the PyTorch 2.13 form gives. One difference: PyTorch's cond and map_impl
return a list, so its graphs have a getitem node after them; opdispatch's
return the branch's own output (README, differences)."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from opdispatch.tracing import make_fx
from _port import loaded


@pytest.fixture(scope="module")
def cf():
    with loaded("control_flow_tracing") as module:
        yield module


def close(a, b):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_cond_traced_not_nested(cf):
    x = torch.randn(4)
    graph = make_fx(cf.not_nested)(x, torch.tensor(False))
    close(graph.forward(x, torch.tensor(True)), cf.true_fn(x))
    close(graph.forward(x, torch.tensor(False)), cf.false_fn(x))
    # PyTorch 2.13: ['x_1', 'y_1', 'true_graph_0', 'false_graph_0', 'cond', 'getitem', 'output'].
    assert [n.name for n in graph.graph.nodes] == ["x_1", "y_1", "true_graph_0", "false_graph_0", "cond", "output"]
    assert [name for name, _ in graph.named_modules()] == ["", "true_graph_0", "false_graph_0"]


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_cond_nested_traced(cf, tracing_mode):
    x = torch.randn(4)
    graph = make_fx(cf.nested, tracing_mode=tracing_mode)(x, torch.tensor(False), torch.tensor(False))
    for p1 in (True, False):
        for p2 in (True, False):
            close(graph.forward(x, torch.tensor(p1), torch.tensor(p2)),
                  cf.nested(x, torch.tensor(p1), torch.tensor(p2)))
    assert [name for name, _ in graph.named_modules()] == [
        "", "true_graph_0", "true_graph_0.true_graph_0", "true_graph_0.false_graph_0", "false_graph_0"]


@pytest.mark.parametrize("tracing_mode", ["real", "fake"])
def test_map_traced(cf, tracing_mode):
    xs, y = torch.ones(3, 2, 2), torch.ones(2)
    gm = make_fx(cf.mapped, tracing_mode=tracing_mode)(xs, y)
    close(gm(xs, y), xs + y)
    # PyTorch 2.13: ['xs_1', 'y_1', 'body_graph_0', 'map_impl', 'getitem', 'output'].
    assert [n.name for n in gm.graph.nodes] == ["xs_1", "y_1", "body_graph_0", "map_impl", "output"]
    assert gm.body_graph_0.code.splitlines()[0] == "def forward(self, arg0_1, arg1_1):"
