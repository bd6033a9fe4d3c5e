"""Port of bitsandbytes' operator registrations (bitsandbytes-foundation/
bitsandbytes bitsandbytes/_ops.py and backends/{default,cpu}/ops.py): the
free torch.library.define with qualified names, register_fake on them
(optional outputs, data-dependent sizes, ScalarType? arguments), and
register_kernel for "cpu" and "default" (CompositeExplicitAutograd) with a
default kernel that calls two other operators. The ported code is in
ported/bitsandbytes_ops.py."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from _port import loaded

bnb = torch.ops.bitsandbytes


@pytest.fixture(scope="module")
def ops_module():
    with loaded("bitsandbytes_ops") as module:
        yield module


def test_quantized_linear_pipeline(ops_module):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((4, 16)).astype(np.float32))
    w = torch.from_numpy(rng.standard_normal((8, 16)).astype(np.float32))
    xq, x_stats, x_outliers = bnb.int8_vectorwise_quant(x)
    wq, w_stats, _ = bnb.int8_vectorwise_quant(w)
    assert xq.dtype == torch.int8 and x_stats.shape == (4,) and x_outliers is None
    np.testing.assert_allclose(bnb.int8_vectorwise_dequant(xq, x_stats).numpy(), x.numpy(), atol=0.02)
    out = bnb.int8_scaled_mm(xq, wq, x_stats, w_stats)
    assert out.dtype == torch.float16 and out.shape == (4, 8)
    np.testing.assert_allclose(out.numpy().astype(np.float32), x.numpy() @ w.numpy().T, atol=0.15)
    out32 = bnb.int8_scaled_mm(xq, wq, x_stats, w_stats, bias=torch.ones(8), dtype=torch.float32)
    assert out32.dtype == torch.float32
    np.testing.assert_allclose(out32.numpy(), x.numpy() @ w.numpy().T + 1, atol=0.15)


def test_outliers(ops_module):
    a = torch.tensor([[0.1, 9.0, -0.2], [0.3, 0.1, 8.0]])
    out, stats, cols = bnb.int8_vectorwise_quant(a, 6.0)
    assert cols.tolist() == [1, 2] and out.numpy()[0, 1] == 0


def test_fake_impls(ops_module):
    m = lambda *s, dtype=torch.float32: torch.empty(*s, dtype=dtype, device="meta")  # noqa: E731
    out, row_stats, cols = bnb.int8_vectorwise_quant(m(2, 3, 16))
    assert (out.shape, out.dtype, row_stats.shape, cols) == ((2, 3, 16), torch.int8, (6,), None)
    _, _, cols = bnb.int8_vectorwise_quant(m(2, 16), 6.0)
    assert cols.dim() == 1 and cols.dtype == torch.int64
    assert bnb.int8_linear_matmul(m(4, 16, dtype=torch.int8), m(8, 16, dtype=torch.int8)).dtype == torch.int32
    with pytest.raises(RuntimeError, match="A must be int8"):
        bnb.int8_linear_matmul(m(4, 16), m(8, 16, dtype=torch.int8))
    assert bnb.int8_scaled_mm(m(4, 16, dtype=torch.int8), m(8, 16, dtype=torch.int8), m(4), m(8),
                              dtype=torch.float32).dtype == torch.float32
    out, sub = bnb.int8_mixed_scaled_mm(m(4, 16), m(4, 16), m(8, 16), m(4), m(8))
    assert out.shape == (4, 8) and sub.dtype == torch.int64
    assert bnb.int8_mm_dequant(m(4, 8, dtype=torch.int32), m(4), m(8)).dtype == torch.float16


def test_kernel_registrations(ops_module):
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    assert has("bitsandbytes::int8_linear_matmul", "CPU")
    assert has("bitsandbytes::int8_scaled_mm", "CompositeExplicitAutograd")
    assert {"bitsandbytes/int8_linear_matmul/CPU", "bitsandbytes/int8_vectorwise_dequant/CompositeExplicitAutograd",
            "bitsandbytes/int8_linear_matmul/Meta"} <= torch.library._impls


def test_opcheck(ops_module):
    rng = np.random.default_rng(1)
    a8 = torch.from_numpy(rng.integers(-127, 128, (4, 16)).astype(np.int8))
    b8 = torch.from_numpy(rng.integers(-127, 128, (8, 16)).astype(np.int8))
    stats = torch.ones(4), torch.ones(8)
    for op, args in [(bnb.int8_linear_matmul.default, (a8, b8)),
                     (bnb.int8_vectorwise_quant.default, (torch.randn(4, 16),)),
                     (bnb.int8_vectorwise_dequant.default, (a8, stats[0])),
                     (bnb.int8_scaled_mm.default, (a8, b8, *stats))]:
        assert set(torch.library.opcheck(op, args).values()) == {"SUCCESS"}, op
