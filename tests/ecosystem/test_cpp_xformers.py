"""xFormers' attention operator definitions and its sputnik SDDMM CPU kernel
(facebookresearch/xformers, xformers/csrc/attention/attention.cpp, sddmm.cpp,
cpu/sddmm.cpp), ported with the name map: fragments of one namespace in
several files, OPDISPATCH_SELECTIVE_SCHEMA/_NAME with OPDISPATCH_FN,
optional and tuple-returning schemas; built against the installed headers
and checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops

from _cpp_ports import build, t

SOURCES = ["xformers/csrc/attention/attention.cpp", "xformers/csrc/attention/sddmm.cpp",
           "xformers/csrc/attention/cpu/sddmm.cpp"]


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("xformers", SOURCES)


def csr(mask: np.ndarray):
    rows, cols = np.nonzero(mask)
    offsets = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int32)
    return rows.astype(np.int32), offsets, cols.astype(np.int32)


def test_the_fragments_define_the_operators_with_upstreams_schemas():
    names = {n for n in _C._dispatch_get_all_op_names() if n.startswith("xformers::")}
    assert names >= {"xformers::sddmm_sputnik", "xformers::efficient_attention_forward_cutlass",
                     "xformers::_cutlass_rand_uniform"}
    assert str(ops.xformers.efficient_attention_forward_small_k.default._schema) == (
        "xformers::efficient_attention_forward_small_k(Tensor query, Tensor key, Tensor value, bool compute_logsumexp, "
        "Tensor? attn_bias, float p) -> (Tensor, Tensor, int, int)")
    assert _C._dispatch_has_kernel_for_dispatch_key("xformers::sddmm_sputnik", "CPU")


@pytest.mark.parametrize("seed", [0, 1])
def test_sddmm_matches_the_masked_matmul(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((2, 5, 3)).astype(np.float32), rng.standard_normal((2, 4, 3)).astype(np.float32)
    mask = rng.uniform(size=(5, 4)) < 0.5
    rows, offsets, cols = csr(mask)
    out = ops.xformers.sddmm_sputnik(t(a), t(b), t(rows), t(offsets), t(cols))
    expected = np.einsum("bik,bjk->bij", a, b)[:, rows, cols]
    assert out.shape == (2, len(cols))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)


def test_sddmm_checks_its_arguments():
    a = np.zeros((2, 5, 3), np.float32)
    rows, offsets, cols = csr(np.ones((5, 4), bool))
    with pytest.raises(RuntimeError, match="b must be a contiguous tensor"):
        transposed = opdispatch.from_numpy(np.zeros((2, 3, 4), np.float32).transpose(0, 2, 1))
        ops.xformers.sddmm_sputnik(t(a), transposed, t(rows), t(offsets), t(cols))


def test_operators_with_only_cuda_kernels_upstream_have_none_here():
    q = t(np.zeros((1, 2, 4), np.float32))
    with pytest.raises(NotImplementedError, match="xformers::efficient_attention_forward_small_k"):
        ops.xformers.efficient_attention_forward_small_k(q, q, q, False, None, 0.0)
