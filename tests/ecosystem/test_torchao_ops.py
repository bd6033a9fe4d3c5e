"""Port of torchao's operator wrappers (pytorch/ao torchao/ops.py):
torch.library.impl_abstract (the deprecated name of register_fake, with its
FutureWarning) on operators defined elsewhere, torch._check with lazy
messages and dtype identity checks (`t.dtype is torch.float16`), and
torch._custom_ops.get_ctx().create_unbacked_symint(). The ported code is in
ported/torchao_ops.py."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def ao():
    with contextlib.ExitStack() as stack:
        # torch.library.impl_abstract is deprecated: PyTorch warns FutureWarning at each use.
        with pytest.warns(FutureWarning, match="impl_abstract` was renamed to `opdispatch.library.register_fake"):
            module = stack.enter_context(loaded("torchao_ops"))
        yield module


def meta(*shape, dtype=torch.float16):
    return torch.empty(*shape, dtype=dtype, device="meta")


def test_fake_impls(ao):
    assert ao.fp16_to_fp6(meta(4, 8)).shape == (4, 6) and ao.fp16_to_fp6(meta(4, 8)).dtype == torch.uint8
    assert ao.prepack_fp6_weight(meta(8, 6, dtype=torch.int32)).shape == (8, 6)
    out = ao.fp16act_fp6weight_linear(meta(2, 32), meta(8, 6, dtype=torch.int32), meta(8))
    assert out.shape == (2, 8) and out.dtype == torch.float16
    assert ao.fp6_weight_dequant(meta(8, 6, dtype=torch.int32), meta(8)).shape == (8, 32)
    with pytest.warns(FutureWarning, match="create_unbacked_symint"):
        keep = ao.nms(meta(5, 4, dtype=torch.float32), meta(5, dtype=torch.float32), 0.5)
    assert keep.is_meta and keep.dim() == 1 and keep.dtype == torch.int64


@pytest.mark.parametrize("call, message", [
    (lambda ao: ao.fp16_to_fp6(meta(4, 8, dtype=torch.float32)), "weight must be FP16, got opdispatch.float32"),
    (lambda ao: ao.fp16_to_fp6(meta(4, 6)), "second dimension must be a multiple of 4, got 6"),
    (lambda ao: ao.fp16act_fp6weight_linear(meta(2, 32), meta(8, 5, dtype=torch.int32), meta(8)),
     "Dimensions mismatched"),
    (lambda ao: ao.fp6_weight_dequant(meta(8, 6, dtype=torch.int64), meta(8)), "weight must be INT32"),
    (lambda ao: ao.prepack_fp6_weight(meta(8, dtype=torch.int32)), "weight should be a 2d tensor, got 1D"),
])
def test_fake_impl_checks(ao, call, message):
    with pytest.raises(RuntimeError, match=message):
        call(ao)


def test_cpu_kernels_agree_with_their_fakes(ao):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((2, 32)).astype(np.float16))
    codes = rng.integers(-32, 32, size=(8, 32))
    fields = (codes + 32).astype(np.uint32).reshape(8, -1, 4)
    bits = (fields[..., 0] << 18) | (fields[..., 1] << 12) | (fields[..., 2] << 6) | fields[..., 3]
    packed = np.stack([(bits >> 16) & 255, (bits >> 8) & 255, bits & 255], -1).astype(np.uint8).reshape(8, 24)
    w = torch.from_numpy(packed.view(np.int32).copy())  # (8, 6): IC / 16 * 3 == 6 words per row
    scales = torch.from_numpy(np.full(8, 0.5, np.float16))
    out = ao.fp16act_fp6weight_linear(x, w, scales)
    expected = x.numpy().astype(np.float32) @ (codes * 0.5).T
    assert out.dtype == torch.float16 and out.shape == (2, 8)
    np.testing.assert_allclose(out.numpy().astype(np.float32), expected, rtol=1e-2, atol=1e-2)
    for op, args in [(torch.ops.torchao.fp16act_fp6weight_linear.default, (x, w, scales)),
                     (torch.ops.torchao.fp16_to_fp6.default, (torch.ones(4, 8, dtype=torch.float16),)),
                     (torch.ops.torchao.prepack_fp6_weight.default, (w,))]:
        assert set(torch.library.opcheck(op, args).values()) == {"SUCCESS"}, op
