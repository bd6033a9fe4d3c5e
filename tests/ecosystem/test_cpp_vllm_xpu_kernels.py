"""vLLM's XPU kernels library (vllm-project/vllm-xpu-kernels,
csrc/torch_bindings.cpp), ported with the name map: `Tensor!` / `Tensor!?`
schemas, `ops.impl(name, kXPU, &fn)` and `kCPU` in one library, an impl
without a key, two DEF libraries named through macros (_C and
_C_cache_ops), REGISTER_EXTENSION; built against the installed headers.
Tensors reach the XPU kernels as upstream's do on Intel GPUs with shared
memory: get_xpu_view_from_cpu_tensor gives an xpu tensor over a NumPy
array, so results are read from the array."""
from __future__ import annotations

import math
import sysconfig

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops

from _cpp_ports import build

SOURCES = ["csrc/torch_bindings.cpp", "csrc/activation.cpp", "csrc/layernorm.cpp", "csrc/pos_encoding_kernels.cpp",
           "csrc/cache.cpp", "csrc/attention/merge_attn_states.cpp", "csrc/utils/mem_cpy.cpp",
           "csrc/tensor_utils.cpp"]


@pytest.fixture(scope="module", autouse=True)
def extension():
    # What vllm-xpu-kernels' build passes: the extension's name, and Python's headers for REGISTER_EXTENSION.
    return build("vllm_xpu_kernels", SOURCES, ["-DOPDISPATCH_EXTENSION_NAME=_C",
                                               f"-I{sysconfig.get_paths()['include']}"])


def xpu(a: np.ndarray) -> opdispatch.Tensor:
    """An xpu tensor over `a`'s memory (writes by the kernels land in `a`)."""
    x = ops._C.get_xpu_view_from_cpu_tensor(opdispatch.from_numpy(a))
    assert str(x.device) == "xpu" and _C._dispatch_keys(x) == _C.DispatchKeySet(_C.DispatchKey.XPU)
    return x


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def silu(x):
    return x / (1 + np.exp(-x))


# --- registration ----------------------------------------------------------------------


def test_schemas_keys_and_the_two_libraries():
    # As PyTorch 2.13 prints them (torch._C.parse_schema).
    assert str(ops._C.silu_and_mul.default._schema) == "_C::silu_and_mul(Tensor($0! -> ) result, Tensor input) -> ()"
    assert str(ops._C.rotary_embedding.default._schema) == (
        "_C::rotary_embedding(Tensor positions, Tensor($0! -> ) query, Tensor($1! -> )? key, int head_size, "
        "Tensor cos_sin_cache, bool is_neox) -> ()")
    has = _C._dispatch_has_kernel_for_dispatch_key
    assert has("_C::silu_and_mul", "XPU") and not has("_C::silu_and_mul", "CPU")
    assert has("_C::get_xpu_view_from_cpu_tensor", "CPU")
    assert has("_C::xpu_memcpy_sync", "CompositeImplicitAutograd")  # ops.impl(name, fn): no key
    assert has("_C_cache_ops::swap_blocks", "XPU") and has("_C_cache_ops::swap_blocks_batch", "CPU")


def test_an_xpu_op_called_with_cpu_tensors_names_the_missing_key():
    with pytest.raises(NotImplementedError, match=r"_C::silu_and_mul.*CPU"):
        ops._C.silu_and_mul(opdispatch.from_numpy(rand(2, 4)), opdispatch.from_numpy(rand(2, 8)))


# --- the kernels, through the XPU key ------------------------------------------------------


@pytest.mark.parametrize("op, ref", [
    ("silu_and_mul", lambda a, b: silu(a) * b),
    ("mul_and_silu", lambda a, b: a * silu(b)),
    ("gelu_and_mul", lambda a, b: 0.5 * a * (1 + np.vectorize(math.erf)(a / np.sqrt(2))) * b),
])
def test_gated_activations_write_into_the_callers_out(op, ref):
    x = rand(3, 2, 8)
    out = np.zeros((3, 2, 4), np.float32)
    o = xpu(out)
    assert getattr(ops._C, op)(o, xpu(x)) is None
    np.testing.assert_allclose(out, ref(x[..., :4], x[..., 4:]), rtol=1e-5, atol=1e-6)
    assert o._version == 1  # Tensor! is Tensor(a!): the dispatcher bumps it


def test_fatrelu_and_gelu_quick():
    x = rand(4, 6, seed=1)
    out = np.zeros((4, 3), np.float32)
    ops._C.fatrelu_and_mul(xpu(out), xpu(x), 0.1)
    np.testing.assert_allclose(out, np.where(x[:, :3] > 0.1, x[:, :3], 0) * x[:, 3:], rtol=1e-6)
    q = np.zeros_like(x)
    ops._C.gelu_quick(xpu(q), xpu(x))
    np.testing.assert_allclose(q, x / (1 + np.exp(-1.702 * x)), rtol=1e-5)


def test_rms_norm_and_fused_add_rms_norm():
    x, w, res = rand(5, 16, seed=2), rand(16, seed=3), rand(5, 16, seed=4)

    def ref(v):
        return v / np.sqrt((v.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * w

    out = np.zeros_like(x)
    ops._C.rms_norm(xpu(out), xpu(x), xpu(w), 1e-6)
    np.testing.assert_allclose(out, ref(x), rtol=1e-5)
    inp, residual = x.copy(), res.copy()
    ops._C.fused_add_rms_norm(xpu(inp), xpu(residual), xpu(w), 1e-6)
    np.testing.assert_allclose(residual, x + res, rtol=1e-6)  # both arguments are written: Tensor! input, residual
    np.testing.assert_allclose(inp, ref(x + res), rtol=1e-5)


@pytest.mark.parametrize("is_neox", [True, False])
@pytest.mark.parametrize("with_key", [True, False])
def test_rotary_embedding_rotates_query_and_the_optional_key_in_place(is_neox, with_key):
    num_tokens, heads, head_size, rot_dim = 3, 2, 8, 8
    positions = np.array([0, 5, 2], np.int64)
    angles = np.random.default_rng(9).uniform(0, np.pi, (8, rot_dim // 2)).astype(np.float32)
    cache = np.concatenate([np.cos(angles), np.sin(angles)], axis=1)
    query, key = rand(num_tokens, heads * head_size, seed=5), rand(num_tokens, heads * head_size, seed=6)

    def ref(x):
        x = x.reshape(num_tokens, heads, head_size).copy()
        cos, sin = cache[positions, : rot_dim // 2][:, None], cache[positions, rot_dim // 2:][:, None]
        a = x[..., : rot_dim // 2] if is_neox else x[..., 0:rot_dim:2]
        b = x[..., rot_dim // 2: rot_dim] if is_neox else x[..., 1:rot_dim:2]
        a, b = a * cos - b * sin, b * cos + a * sin
        if is_neox:
            x[..., : rot_dim // 2], x[..., rot_dim // 2: rot_dim] = a, b
        else:
            x[..., 0:rot_dim:2], x[..., 1:rot_dim:2] = a, b
        return x.reshape(num_tokens, heads * head_size)

    q, k = query.copy(), key.copy()
    ops._C.rotary_embedding(xpu(positions), xpu(q), xpu(k) if with_key else None, head_size, xpu(cache), is_neox)
    np.testing.assert_allclose(q, ref(query), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(k, ref(key) if with_key else key, rtol=1e-5, atol=1e-6)


def test_merge_attn_states_with_and_without_the_lse_output():
    tokens, heads, size = 4, 2, 3
    po, so = rand(tokens, heads, size, seed=7), rand(tokens, heads, size, seed=8)
    pl, sl = rand(heads, tokens, seed=9), rand(heads, tokens, seed=10)
    pw, sw = np.exp(pl.T)[..., None], np.exp(sl.T)[..., None]
    out, lse = np.zeros_like(po), np.zeros_like(pl)
    ops._C.merge_attn_states(xpu(out), xpu(lse), xpu(po), xpu(pl), xpu(so), xpu(sl))
    np.testing.assert_allclose(out, (po * pw + so * sw) / (pw + sw), rtol=1e-5)
    np.testing.assert_allclose(lse, np.logaddexp(pl, sl), rtol=1e-5)
    out2 = np.zeros_like(po)
    ops._C.merge_attn_states(xpu(out2), None, xpu(po), xpu(pl), xpu(so), xpu(sl))
    np.testing.assert_allclose(out2, out, rtol=1e-6)


# --- the cache library and the pointer helpers -----------------------------------------------


def test_reshape_and_cache_flash_scatters_tokens_to_their_slots():
    num_blocks, block_size, heads, size = 3, 4, 2, 5
    key, value = rand(4, heads, size, seed=11), rand(4, heads, size, seed=12)
    slots = np.array([6, 0, -1, 11], np.int64)
    kc, vc = np.zeros((num_blocks, block_size, heads, size), np.float32), np.zeros(
        (num_blocks, block_size, heads, size), np.float32)
    scale = xpu(np.ones(1, np.float32))
    ops._C_cache_ops.reshape_and_cache_flash(xpu(key), xpu(value), xpu(kc), xpu(vc), xpu(slots), "auto", scale, scale)
    expected_k, expected_v = np.zeros_like(kc), np.zeros_like(vc)
    for t, s in enumerate(slots):
        if s >= 0:
            expected_k[s // block_size, s % block_size], expected_v[s // block_size, s % block_size] = key[t], value[t]
    np.testing.assert_array_equal(kc, expected_k)
    np.testing.assert_array_equal(vc, expected_v)
    with pytest.raises(RuntimeError, match="unsupported kv_cache_dtype 'fp8'"):
        ops._C_cache_ops.reshape_and_cache_flash(xpu(key), xpu(value), xpu(kc), xpu(vc), xpu(slots), "fp8", scale,
                                                 scale)


def test_swap_blocks_and_the_pointer_copies():
    src, dst = rand(4, 6, seed=13), np.zeros((3, 6), np.float32)
    ops._C_cache_ops.swap_blocks(xpu(src), xpu(dst), 6 * 4, opdispatch.from_numpy(np.array([[3, 0], [1, 2]])))
    np.testing.assert_array_equal(dst, [src[3], np.zeros(6), src[1]])

    a, b = rand(8, seed=14), np.zeros(8, np.float32)
    ops._C.xpu_memcpy_sync(b.ctypes.data, a.ctypes.data, 4 * 4, 2)
    np.testing.assert_array_equal(b, np.concatenate([a[:4], np.zeros(4)]))
    with pytest.raises(RuntimeError, match="kind must be 0"):
        ops._C.xpu_memcpy_sync(b.ctypes.data, a.ctypes.data, 4, 7)
    c = np.zeros(8, np.float32)
    t = lambda v: opdispatch.from_numpy(np.array(v, np.int64))  # noqa: E731
    ops._C_cache_ops.swap_blocks_batch(t([a.ctypes.data]), t([c.ctypes.data + 8]), t([8]))
    np.testing.assert_array_equal(c, [0, 0, a[0], a[1], 0, 0, 0, 0])


def test_weak_ref_tensor_shares_the_memory():
    a = rand(3)
    original = a.copy()
    r = ops._C.weak_ref_tensor(xpu(a))
    assert str(r.device) == "xpu" and r.shape == (3,)
    ops._C.gelu_quick(r, xpu(original))  # writes through the second handle, into `a`
    np.testing.assert_allclose(a, original / (1 + np.exp(-1.702 * original)), rtol=1e-5)
