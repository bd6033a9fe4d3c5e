"""A user-defined higher-order operator: an operator that takes a function.
``apply_twice(f, x)`` computes f(f(x)); it gets a kernel for eager calls and
one for fake tensors, and make_fx records it as one node with its function
as a subgraph. The pattern of PyTorch's HigherOrderOperator authors.

    python examples/higher_order_op.py
"""
from __future__ import annotations

import opdispatch
from opdispatch._C import DispatchKey
from opdispatch._ops import HigherOrderOperator
from opdispatch._subclasses.fake_tensor import FakeTensorMode


class ApplyTwice(HigherOrderOperator):
    def __init__(self) -> None:
        super().__init__("apply_twice")

    def __call__(self, f, x):
        return super().__call__(f, x)


apply_twice = ApplyTwice()


@apply_twice.py_impl(DispatchKey.CompositeExplicitAutograd)
def apply_twice_eager(f, x):
    return f(f(x))


@apply_twice.py_impl(FakeTensorMode)
def apply_twice_fake(mode, f, x):
    with mode:
        return f(f(x))


x = opdispatch.tensor([0.5, 1.0])
print("eager:", apply_twice(lambda t: t * 3, x))
with FakeTensorMode() as mode:
    fake = apply_twice(lambda t: t.sin(), mode.from_tensor(x))
print("fake:", type(fake).__name__, tuple(fake.shape))
print("registered as:", opdispatch.ops.higher_order.apply_twice)
