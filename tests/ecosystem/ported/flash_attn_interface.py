# Ported from Dao-AILab/flash-attention: flash_attn/flash_attn_interface.py
# (the custom ops flashattn::_flash_attn_forward / _flash_attn_backward with
# their fake impls, FlashAttnFunc and flash_attn_func). Registration code as
# in flash-attn with the name map (torch -> opdispatch). Changes: the CUDA
# kernels (flash_attn_cuda.fwd / .bwd) are small NumPy kernels below;
# device_types "cuda" -> "cpu" (the port runs on cpu); the PyTorch version
# gate `torch.__version__ >= "2.4.0"` is the feature test it stands for
# (opdispatch has the 2.4 custom_op API); the head-size padding branch
# (nn.functional.pad, for head sizes not a multiple of 8) is left out.
from typing import Optional, Tuple

import numpy as np

import opdispatch as torch


def maybe_contiguous(x):
    return x.contiguous() if x is not None and x.stride(-1) != 1 else x


def round_multiple(x, m):
    return (x + m - 1) // m * m


class flash_attn_cuda:
    # NumPy stand-in for the flash_attn_2_cuda extension: exact attention on
    # (batch, seqlen, nheads, headdim) tensors, with the causal mask.
    @staticmethod
    def _probs(q, k, softmax_scale, causal):
        s = np.einsum("bqhd,bkhd->bhqk", q, k) * softmax_scale
        if causal:
            sq, sk = s.shape[-2:]
            s = np.where(np.arange(sk)[None, :] > np.arange(sq)[:, None] + (sk - sq), -np.inf, s)
        lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
        return np.exp(s - lse[..., None]), lse

    @staticmethod
    def fwd(q, k, v, out, alibi_slopes, dropout_p, softmax_scale, causal, window_size_left, window_size_right,
            softcap, return_softmax, gen):
        qn, kn, vn = q.numpy(), k.numpy(), v.numpy()
        p, lse = flash_attn_cuda._probs(qn, kn, softmax_scale, causal)
        o = np.einsum("bhqk,bkhd->bqhd", p, vn).astype(qn.dtype)
        out = torch.from_numpy(o)
        S_dmask = torch.from_numpy(p.astype(qn.dtype))
        rng_state = torch.zeros(2, dtype=torch.int64)
        return out, q, k, v, out, torch.from_numpy(lse.astype(np.float32)), S_dmask, rng_state

    @staticmethod
    def bwd(dout, q, k, v, out, softmax_lse, dq, dk, dv, alibi_slopes, dropout_p, softmax_scale, causal,
            window_size_left, window_size_right, softcap, deterministic, gen, rng_state):
        qn, kn, vn, on, don = q.numpy(), k.numpy(), v.numpy(), out.numpy(), dout.numpy()
        p, _ = flash_attn_cuda._probs(qn, kn, softmax_scale, causal)
        d = (don * on).sum(-1).transpose(0, 2, 1)  # (b, h, q)
        dp = np.einsum("bqhd,bkhd->bhqk", don, vn)
        ds = p * (dp - d[..., None])
        dq.numpy()[...] = np.einsum("bhqk,bkhd->bqhd", ds, kn) * softmax_scale
        dk.numpy()[...] = np.einsum("bhqk,bqhd->bkhd", ds, qn) * softmax_scale
        dv.numpy()[...] = np.einsum("bhqk,bqhd->bkhd", p, don)
        b, h, sq = d.shape
        softmax_d = np.zeros((b, h, round_multiple(sq, 128)), np.float32)
        softmax_d[..., :sq] = d
        return dq, dk, dv, torch.from_numpy(softmax_d)


if hasattr(torch.library, "custom_op"):  # flash-attn: torch.__version__ >= "2.4.0"
    _torch_custom_op_wrapper = torch.library.custom_op
    _torch_register_fake_wrapper = torch.library.register_fake
else:
    def custom_op_wrapper(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
        def wrap(func):
            def inner(*args, **kwargs):
                return func(*args, **kwargs)
            return inner
        if fn is None:
            return wrap
        return wrap(fn)
    def register_fake_wrapper(op, fn=None, /, *, lib=None, _stacklevel=1):
        def wrap(func):
            def inner(*args, **kwargs):
                return func(*args, **kwargs)
            return inner
        if fn is None:
            return wrap
        return wrap(fn)
    _torch_custom_op_wrapper = custom_op_wrapper
    _torch_register_fake_wrapper = register_fake_wrapper


@_torch_custom_op_wrapper("flashattn::_flash_attn_forward", mutates_args=("q", "k", "v"), device_types="cpu")
def _flash_attn_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p: float,
    softmax_scale: float,
    causal: bool,
    window_size_left: int,
    window_size_right: int,
    softcap: float,
    alibi_slopes: Optional[torch.Tensor],
    return_softmax: bool
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    q, k, v = [maybe_contiguous(x) for x in (q, k, v)]
    out, q_padded, k_padded, v_padded, out_padded, softmax_lse, S_dmask, rng_state = flash_attn_cuda.fwd(
        q,
        k,
        v,
        None,
        alibi_slopes,
        dropout_p,
        softmax_scale,
        causal,
        window_size_left,
        window_size_right,
        softcap,
        return_softmax,
        None,
    )
    q, k, v = q_padded, k_padded, v_padded
    if not return_softmax:
        S_dmask = torch.empty((0,), dtype=q.dtype, device=q.device, layout=q.layout)
    return out_padded, softmax_lse, S_dmask, rng_state


@_torch_register_fake_wrapper("flashattn::_flash_attn_forward")
def _flash_attn_forward_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    dropout_p: float,
    softmax_scale: float,
    causal: bool,
    window_size_left: int,
    window_size_right: int,
    softcap: float,
    alibi_slopes: Optional[torch.Tensor],
    return_softmax: bool
) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    q, k, v = [maybe_contiguous(x) for x in (q, k, v)]
    batch_size, seqlen_q, num_heads, head_size = q.shape
    seqlen_k = k.shape[1]
    out = torch.empty_like(q)
    softmax_lse = torch.empty((batch_size, num_heads, seqlen_q), dtype=torch.float32, device=q.device, layout=q.layout)
    p = torch.empty((0,), dtype=q.dtype, device=q.device, layout=q.layout)
    if return_softmax:
        p = torch.empty((batch_size, num_heads, round_multiple(seqlen_q, 128), round_multiple(seqlen_k, 128)), dtype=q.dtype, device=q.device, layout=q.layout)
    rng_state = torch.empty((2,), dtype=torch.int64, device=q.device)

    return out, softmax_lse, p, rng_state


try:
    _wrapped_flash_attn_forward = torch.ops.flashattn._flash_attn_forward
except AttributeError:
    _wrapped_flash_attn_forward = _flash_attn_forward


@_torch_custom_op_wrapper("flashattn::_flash_attn_backward", mutates_args=("dq", "dk", "dv"), device_types="cpu")
def _flash_attn_backward(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    softmax_lse: torch.Tensor,
    dq: Optional[torch.Tensor],
    dk: Optional[torch.Tensor],
    dv: Optional[torch.Tensor],
    dropout_p: float,
    softmax_scale: float,
    causal: bool,
    window_size_left: int,
    window_size_right: int,
    softcap: float,
    alibi_slopes: Optional[torch.Tensor],
    deterministic: bool,
    rng_state: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    # dq, dk, dv are allocated by us so they should already be contiguous
    dout, q, k, v, out = [maybe_contiguous(x) for x in (dout, q, k, v, out)]
    (
        dq_unpadded,
        dk_unpadded,
        dv_unpadded,
        softmax_d,
    ) = flash_attn_cuda.bwd(
        dout,
        q,
        k,
        v,
        out,
        softmax_lse,
        dq,
        dk,
        dv,
        alibi_slopes,
        dropout_p,
        softmax_scale,
        causal,
        window_size_left,
        window_size_right,
        softcap,
        deterministic,
        None,
        rng_state,
    )
    dq, dk, dv = dq_unpadded, dk_unpadded, dv_unpadded
    return softmax_d


@_torch_register_fake_wrapper("flashattn::_flash_attn_backward")
def _flash_attn_backward_fake(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    softmax_lse: torch.Tensor,
    dq: Optional[torch.Tensor],
    dk: Optional[torch.Tensor],
    dv: Optional[torch.Tensor],
    dropout_p: float,
    softmax_scale: float,
    causal: bool,
    window_size_left: int,
    window_size_right: int,
    softcap: float,
    alibi_slopes: Optional[torch.Tensor],
    deterministic: bool,
    rng_state: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    dout, q, k, v, out = [maybe_contiguous(x) for x in (dout, q, k, v, out)]
    if dq is None:
        dq = torch.empty_like(q)
    if dk is None:
        dk = torch.empty_like(k)
    if dv is None:
        dv = torch.empty_like(v)
    batch_size, seqlen_q, num_heads, _ = q.shape
    head_size = dout.shape[3]
    softmax_d = torch.empty((batch_size, num_heads, round_multiple(seqlen_q, 128)), device=q.device, dtype=torch.float32)
    if head_size % 8 != 0:
        dq = dq[..., :head_size]
        dk = dk[..., :head_size]
        dv = dv[..., :head_size]

    return softmax_d


try:
    _wrapped_flash_attn_backward = torch.ops.flashattn._flash_attn_backward
except AttributeError:
    _wrapped_flash_attn_backward = _flash_attn_backward


class FlashAttnFunc(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        q,
        k,
        v,
        dropout_p,
        softmax_scale,
        causal,
        window_size,
        softcap,
        alibi_slopes,
        deterministic,
        return_softmax,
    ):
        if softmax_scale is None:
            softmax_scale = q.shape[-1] ** (-0.5)
        head_size_og = q.size(3)
        out_padded, softmax_lse, S_dmask, rng_state = _wrapped_flash_attn_forward(
            q,
            k,
            v,
            dropout_p,
            softmax_scale,
            causal=causal,
            window_size_left=window_size[0],
            window_size_right=window_size[1],
            softcap=softcap,
            alibi_slopes=alibi_slopes,
            return_softmax=return_softmax and dropout_p > 0,
        )
        ctx.save_for_backward(q, k, v, out_padded, softmax_lse, rng_state)
        ctx.dropout_p = dropout_p
        ctx.softmax_scale = softmax_scale
        ctx.causal = causal
        ctx.window_size = window_size
        ctx.softcap = softcap
        ctx.alibi_slopes = alibi_slopes
        ctx.deterministic = deterministic
        out = out_padded[..., :head_size_og]
        return out if not return_softmax else (out, softmax_lse, S_dmask)

    @staticmethod
    def backward(ctx, dout, *args):
        q, k, v, out, softmax_lse, rng_state = ctx.saved_tensors
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        _wrapped_flash_attn_backward(
            dout,
            q,
            k,
            v,
            out,
            softmax_lse,
            dq,
            dk,
            dv,
            ctx.dropout_p,
            ctx.softmax_scale,
            ctx.causal,
            ctx.window_size[0],
            ctx.window_size[1],
            ctx.softcap,
            ctx.alibi_slopes,
            ctx.deterministic,
            rng_state=rng_state,
        )
        dq = dq[..., : dout.shape[-1]]  # We could have padded the head dimension
        dk = dk[..., : dout.shape[-1]]
        dv = dv[..., : dout.shape[-1]]
        return dq, dk, dv, None, None, None, None, None, None, None, None


def flash_attn_func(
    q,
    k,
    v,
    dropout_p=0.0,
    softmax_scale=None,
    causal=False,
    window_size=(-1, -1),  # -1 means infinite context window
    softcap=0.0,  # 0.0 means deactivated
    alibi_slopes=None,
    deterministic=False,
    return_attn_probs=False,
):
    return FlashAttnFunc.apply(
        q,
        k,
        v,
        dropout_p,
        softmax_scale,
        causal,
        window_size,
        softcap,
        alibi_slopes,
        deterministic,
        return_attn_probs,
    )
