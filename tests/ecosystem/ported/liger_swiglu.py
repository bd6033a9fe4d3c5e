# Written after linkedin/Liger-Kernel src/liger_kernel/ops/swiglu.py
# (LigerSiLUMulFunction, the fused SwiGLU activation silu(a) * b): an
# autograd.Function whose forward and backward are decorated with
# ensure_contiguous, flatten to rows, run a fused kernel, and save the
# inputs; the backward kernel recomputes silu(a) and writes the gradients
# into the saved inputs' memory, as Liger's does to save memory. The Triton
# kernels are NumPy row kernels of our own. The PyTorch 2.13 form (the same
# calls, torch names) ran first.
import functools

import numpy as np

import opdispatch as torch


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        def maybe_to_contiguous(x):
            return x.contiguous() if isinstance(x, torch.Tensor) else x

        args = [maybe_to_contiguous(arg) for arg in args]
        kwargs = {k: maybe_to_contiguous(v) for k, v in kwargs.items()}
        return fn(ctx, *args, **kwargs)

    return wrapper


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _swiglu_forward_kernel(a_rows, b_rows, c_rows):
    a32 = a_rows.astype(np.float32)
    c_rows[...] = a32 * _sigmoid(a32) * b_rows


def _swiglu_backward_kernel(dc_rows, a_rows, b_rows):
    a32 = a_rows.astype(np.float32)
    sig_a = _sigmoid(a32)
    silu_a = a32 * sig_a
    db_rows = dc_rows * silu_a
    da_rows = dc_rows * (silu_a * (1 - sig_a) + sig_a) * b_rows
    a_rows[...] = da_rows
    b_rows[...] = db_rows


def swiglu_forward(a, b):
    ori_shape = a.shape
    n_cols = ori_shape[-1]
    a = a.view(-1, n_cols)
    b = b.view(-1, n_cols)
    c = torch.empty_like(a)
    _swiglu_forward_kernel(a.detach().numpy(), b.detach().numpy(), c.numpy())
    return a, b, c.view(*ori_shape)


def swiglu_backward(a, b, dc):
    ori_shape = dc.shape
    n_cols = ori_shape[-1]
    dc = dc.view(-1, n_cols)
    _swiglu_backward_kernel(dc.numpy(), a.detach().numpy(), b.detach().numpy())
    return a.view(*ori_shape), b.view(*ori_shape)


class LigerSiLUMulFunction(torch.autograd.Function):
    @staticmethod
    @ensure_contiguous
    def forward(ctx, a, b):
        a, b, c = swiglu_forward(a, b)
        ctx.save_for_backward(a, b)
        return c

    @staticmethod
    @ensure_contiguous
    def backward(ctx, dc):
        a, b = ctx.saved_tensors
        a, b = swiglu_backward(a, b, dc)
        return a, b
