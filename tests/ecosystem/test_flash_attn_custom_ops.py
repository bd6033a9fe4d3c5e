"""Port of flash-attention's Python operator layer (Dao-AILab/flash-attention
flash_attn/flash_attn_interface.py): custom ops with fake impls (one that
declares its inputs mutable, one that writes gradients into Optional
tensors), called through torch.ops inside an autograd.Function whose forward
saves tensors and whose backward calls the backward op. The ported code is
in ported/flash_attn_interface.py."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def fa():
    with loaded("flash_attn_interface") as module:
        yield module


def _attention(q, k, v, causal):
    scale = q.shape[-1] ** -0.5
    s = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhqk,bkhd->bqhd", p, v)


def _qkv(dtype=np.float64, seed=0, requires_grad=True):
    rng = np.random.default_rng(seed)
    return [torch.from_numpy(rng.standard_normal((2, 5, 3, 8)).astype(dtype)).requires_grad_(requires_grad)
            for _ in range(3)]


@pytest.mark.parametrize("causal", [False, True])
def test_forward_matches_attention(fa, causal):
    q, k, v = _qkv(requires_grad=False)
    out = fa.flash_attn_func(q, k, v, causal=causal)
    np.testing.assert_allclose(out.numpy(), _attention(q.numpy(), k.numpy(), v.numpy(), causal), rtol=1e-10)
    out, lse, probs = fa.flash_attn_func(q, k, v, causal=causal, return_attn_probs=True)
    assert lse.shape == (2, 3, 5) and lse.dtype == torch.float32 and probs.shape == (0,)


@pytest.mark.parametrize("causal", [False, True])
def test_backward_through_the_function_and_the_backward_op(fa, causal):
    q, k, v = _qkv()
    out = fa.flash_attn_func(q, k, v, causal=causal)
    assert out.grad_fn.name() == "FlashAttnFuncBackward"
    assert torch.autograd.gradcheck(lambda a, b, c: fa.flash_attn_func(a, b, c, causal=causal), (q, k, v))


def test_fake_impls(fa):
    q, k, v = (torch.empty(2, 5, 3, 8, device="meta") for _ in range(3))
    out, lse, p, rng = torch.ops.flashattn._flash_attn_forward(q, k, v, 0.0, 0.5, False, -1, -1, 0.0, None, False)
    assert (out.shape, lse.shape, lse.dtype, p.shape, rng.dtype) == ((2, 5, 3, 8), (2, 3, 5), torch.float32, (0,),
                                                                     torch.int64)
    _, _, p, _ = torch.ops.flashattn._flash_attn_forward(q, k, v, 0.1, 0.5, False, -1, -1, 0.0, None, True)
    assert p.shape == (2, 3, 128, 128)
    d = torch.ops.flashattn._flash_attn_backward(out, q, k, v, out, lse, None, None, None, 0.0, 0.5, False, -1, -1,
                                                 0.0, None, False)
    assert d.is_meta and d.shape == (2, 3, 128) and d.dtype == torch.float32


def test_schemas(fa):
    fwd = str(torch.ops.flashattn._flash_attn_forward.default._schema)
    assert fwd.startswith("flashattn::_flash_attn_forward(Tensor(a0!) q, Tensor(a1!) k, Tensor(a2!) v, float dropout_p")
    assert fwd.endswith("-> (Tensor, Tensor, Tensor, Tensor)")
    bwd = str(torch.ops.flashattn._flash_attn_backward.default._schema)
    assert "Tensor(a6!)? dq, Tensor(a7!)? dk, Tensor(a8!)? dv" in bwd and bwd.endswith("Tensor? rng_state=None) -> Tensor")


def test_backward_op_writes_the_gradient_buffers(fa):
    q, k, v = _qkv(requires_grad=False)
    out, lse, _, rng = torch.ops.flashattn._flash_attn_forward(q, k, v, 0.0, 8 ** -0.5, False, -1, -1, 0.0, None,
                                                               False)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    versions = [t._version for t in (dq, dk, dv)]
    torch.ops.flashattn._flash_attn_backward(torch.ones_like(out), q, k, v, out, lse, dq, dk, dv, 0.0, 8 ** -0.5,
                                             False, -1, -1, 0.0, None, False, rng_state=rng)
    assert [t._version for t in (dq, dk, dv)] == [n + 1 for n in versions]
    assert np.allclose(dv.numpy().sum(axis=1), np.ones((2, 3, 8)) * 5)  # each query's probs sum to 1
