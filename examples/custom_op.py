"""A custom operator with a fake (shape) kernel and an autograd formula, checked
by opcheck: the torch.library.custom_op pattern, on NumPy.

    python examples/custom_op.py
"""
from __future__ import annotations

import numpy as np

import opdispatch
from opdispatch.library import custom_op, opcheck


@custom_op("examples::softplus", mutates_args=())
def softplus(x: opdispatch.Tensor, beta: float) -> opdispatch.Tensor:
    """log(1 + exp(beta * x)) / beta, computed stably by NumPy."""
    return opdispatch.from_numpy(np.logaddexp(0, beta * x.numpy()) / beta)


@softplus.register_fake
def _(x, beta):
    return opdispatch.empty_like(x)


def setup_context(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * (x * ctx.beta).sigmoid(), None  # d/dx softplus = sigmoid(beta * x); beta gets no gradient


softplus.register_autograd(backward, setup_context=setup_context)

x = opdispatch.tensor([-2.0, 0.0, 3.0], requires_grad=True)
y = softplus(x, 2.0)
y.sum().backward()
print("softplus:", y.detach().numpy().round(4))
print("gradient:", x.grad.numpy().round(4))
print("on meta:", tuple(softplus(opdispatch.empty(5, 7, device="meta"), 1.0).shape))
print("opcheck:", opcheck(softplus, (opdispatch.randn(3), 1.5)))
