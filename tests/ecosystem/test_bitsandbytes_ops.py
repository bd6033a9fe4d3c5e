"""Port of bitsandbytes' operator registrations (bitsandbytes-foundation/
bitsandbytes bitsandbytes/_ops.py and backends/{default,cpu}/ops.py): the
free torch.library.define with qualified names, register_fake on them
(optional outputs, data-dependent sizes, ScalarType? arguments), `.out`
overloads written with the `Tensor!` shorthand that return nothing, and
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


def int8_pair(seed: int = 1):
    rng = np.random.default_rng(seed)
    a8 = torch.from_numpy(rng.integers(-127, 128, (4, 16)).astype(np.int8))
    b8 = torch.from_numpy(rng.integers(-127, 128, (8, 16)).astype(np.int8))
    return a8, b8


def test_out_overload_schema(ops_module):
    # `Tensor! out`: a mutable argument in an alias set of its own, printed as PyTorch 2.13 prints it.
    schema = bnb.int8_linear_matmul.out._schema
    out = schema.arguments[2]
    assert out.alias_info.is_write and not schema.returns and schema.is_mutable
    assert str(schema) == "bitsandbytes::int8_linear_matmul.out(Tensor A, Tensor B, Tensor($0! -> ) out) -> ()"
    assert bnb.int8_linear_matmul.overloads() == ["default", "out"]
    assert [a.alias_info for a in bnb.dequantize_blockwise.out._schema.arguments[:-1]] == [None] * 5


def test_int8_linear_matmul_out(ops_module):
    a8, b8 = int8_pair()
    expected = a8.numpy().astype(np.int32) @ b8.numpy().astype(np.int32).T
    out = torch.empty(4, 8, dtype=torch.int32)
    version = out._version
    assert bnb.int8_linear_matmul.out(a8, b8, out) is None
    np.testing.assert_array_equal(out.numpy(), expected)
    assert out._version > version  # a mutable argument's version moves
    # The packet picks the overload from the arguments, keyword or positional.
    out2 = torch.zeros(4, 8, dtype=torch.int32)
    assert bnb.int8_linear_matmul(a8, b8, out=out2) is None
    np.testing.assert_array_equal(out2.numpy(), expected)
    # (The default kernel's check, as upstream's: out must be int32.)
    with pytest.raises(RuntimeError, match="Expected cond to be True"):
        bnb.int8_linear_matmul.out(a8, b8, torch.empty(4, 8))


def test_out_overload_fake_impls(ops_module):
    m = lambda *s, dtype=torch.float32: torch.empty(*s, dtype=dtype, device="meta")  # noqa: E731
    a8, b8 = m(4, 16, dtype=torch.int8), m(8, 16, dtype=torch.int8)
    assert bnb.int8_linear_matmul.out(a8, b8, m(4, 8, dtype=torch.int32)) is None
    with pytest.raises(RuntimeError, match=r"Expected out.shape == \(4, 8\), got \(4, 9\)"):
        bnb.int8_linear_matmul.out(a8, b8, m(4, 9, dtype=torch.int32))
    with pytest.raises(RuntimeError, match="Expected out.dtype == int32, got opdispatch.float32"):
        bnb.int8_linear_matmul.out(a8, b8, m(4, 8))
    with pytest.raises(RuntimeError, match="A must be int8"):
        bnb.int8_linear_matmul.out(m(4, 16), b8, m(4, 8, dtype=torch.int32))
    with pytest.warns(FutureWarning, match="_check_is_size"):
        assert bnb.dequantize_blockwise.out(m(3, 50, dtype=torch.uint8), m(3), m(256), 64, torch.float32,
                                            m(3, 50)) is None
        with pytest.raises(RuntimeError, match="Expected out.dtype == opdispatch.float16"):
            bnb.dequantize_blockwise.out(m(3, 50, dtype=torch.uint8), m(3), m(256), 64, torch.float16, m(3, 50))


def test_out_overload_opcheck(ops_module):
    a8, b8 = int8_pair(2)
    result = torch.library.opcheck(bnb.int8_linear_matmul.out, (a8, b8, torch.empty(4, 8, dtype=torch.int32)))
    assert set(result.values()) == {"SUCCESS"} and len(result) == 4
    assert {"bitsandbytes/int8_linear_matmul.out/CompositeExplicitAutograd", "bitsandbytes/int8_linear_matmul.out/Meta",
            "bitsandbytes/dequantize_blockwise.out/Meta"} <= torch.library._impls


@pytest.mark.filterwarnings("ignore:_check_is_size is deprecated")
def test_blockwise_round_trip(ops_module):
    rng = np.random.default_rng(3)
    code = torch.from_numpy(np.linspace(-1, 1, 256).astype(np.float32))
    a = torch.from_numpy(rng.standard_normal((3, 50)).astype(np.float32))
    q, absmax = bnb.quantize_blockwise(a, code, 64)
    assert (q.dtype, q.shape, absmax.shape) == (torch.uint8, (3, 50), (3,))
    np.testing.assert_allclose(absmax.numpy(), [np.abs(a.numpy().reshape(-1)[i:i + 64]).max() for i in (0, 64, 128)])
    back = bnb.dequantize_blockwise(q, absmax, code, 64, torch.float32)
    np.testing.assert_allclose(back.numpy(), a.numpy(), atol=absmax.numpy().max() / 255 + 1e-6)
    assert bnb.dequantize_blockwise(q, absmax, code, 64, torch.float16).dtype == torch.float16
    for op, args in [(bnb.quantize_blockwise.default, (a, code, 64)),
                     (bnb.dequantize_blockwise.default, (q, absmax, code, 64, torch.float32))]:
        assert set(torch.library.opcheck(op, args).values()) == {"SUCCESS"}, op
    # As upstream on CPU: the .out overload has kernels for accelerators only.
    with pytest.raises(NotImplementedError, match="dequantize_blockwise.out.*'CPU' backend"):
        bnb.dequantize_blockwise.out(q, absmax, code, 64, torch.float32, torch.empty(3, 50))
