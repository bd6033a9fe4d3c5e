"""Port of Liger-Kernel's fused SwiGLU (linkedin/Liger-Kernel
src/liger_kernel/ops/swiglu.py, LigerSiLUMulFunction): an autograd.Function
with ensure_contiguous-decorated forward and backward around fused row
kernels (NumPy here, Triton there), whose backward writes the gradients into
the saved inputs. The ported code is in ported/liger_swiglu.py; each check
below gave the same result on its PyTorch 2.13 form (forward and gradients
equal silu(a) * b's, the inputs overwritten by their gradients, a transposed
input made contiguous)."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def liger():
    with loaded("liger_swiglu") as module:
        yield module


def close(x, y):
    np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_forward_and_gradients_match_the_composite(liger):
    a0, b0 = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(2, 3, 4, dtype=torch.float64)
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    c = liger.LigerSiLUMulFunction.apply(a, b)
    ra, rb = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    rc = ra * ra.sigmoid() * rb
    close(c, rc)
    assert tuple(c.shape) == (2, 3, 4) and type(c.grad_fn).__name__ == "LigerSiLUMulFunctionBackward"
    g = torch.randn(2, 3, 4, dtype=torch.float64)
    c.backward(g)
    rc.backward(g)
    close(a.grad, ra.grad)
    close(b.grad, rb.grad)
    # As in Liger (and its PyTorch 2.13 form): the backward kernel stored the gradients in the inputs' memory.
    close(a, a.grad)
    close(b, b.grad)


def test_a_non_contiguous_input_is_made_contiguous(liger):
    at = torch.randn(5, 4).t().requires_grad_()
    bt = torch.randn(4, 5, requires_grad=True)
    ct = liger.LigerSiLUMulFunction.apply(at, bt)
    ct.sum().backward()
    assert tuple(ct.shape) == (4, 5) and tuple(at.grad.shape) == (4, 5) and not at.is_contiguous()
