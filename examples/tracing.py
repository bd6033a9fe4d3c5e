"""Tracing a function into a graph with make_fx, and running a model on fake
tensors (shapes, no data) with FakeTensorMode: what compilers and memory
planners built on PyTorch's dispatcher do.

    python examples/tracing.py
"""
from __future__ import annotations

import opdispatch
from opdispatch._subclasses.fake_tensor import FakeTensorMode
from opdispatch.tracing import make_fx


def mlp(x: opdispatch.Tensor, w1: opdispatch.Tensor, w2: opdispatch.Tensor) -> opdispatch.Tensor:
    return ((x @ w1).relu() @ w2).log_softmax(-1)


opdispatch.manual_seed(0)
x, w1, w2 = opdispatch.randn(2, 4), opdispatch.randn(4, 8), opdispatch.randn(8, 3)
graph = make_fx(mlp)(x, w1, w2)
print(graph.code.strip())
same = (graph(x, w1, w2) - mlp(x, w1, w2)).abs().max().item()
print("replay matches eager:", same == 0.0)

with FakeTensorMode() as mode:
    big = mode.from_tensor(opdispatch.empty(4096, 4))  # no 4096x4 data is ever computed
    out = mlp(big, mode.from_tensor(w1), mode.from_tensor(w2))
print("fake output:", type(out).__name__, tuple(out.shape), out.dtype)
