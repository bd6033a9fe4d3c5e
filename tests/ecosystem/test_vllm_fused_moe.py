"""Port of vLLM's direct_register_custom_op (vllm-project/vllm
vllm/utils/torch_utils.py) and the fused-MoE operators it registers
(vllm/model_executor/layers/fused_moe/fused_moe.py): infer_schema on long
signatures with PEP 604 optionals, Library.define + impl at the platform's
dispatch key, Library._register_fake, an in-place op whose fake returns
None, and calls through torch.ops.vllm with keyword arguments. The ported
code is in ported/vllm_fused_moe.py."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from opdispatch import library
from _port import loaded


@pytest.fixture(scope="module")
def vllm():
    with loaded("vllm_fused_moe") as module:
        yield module


def _reference(x, w1, w2, weights, ids, activation="silu"):
    n = w2.shape[2]
    out = np.zeros_like(x)
    for m in range(x.shape[0]):
        for j in range(ids.shape[1]):
            h = x[m] @ w1[ids[m, j]].T
            gate = h[:n]
            act = gate / (1 + np.exp(-gate)) if activation == "silu" else 0.5 * gate * (
                1 + np.tanh(0.7978845608 * (gate + 0.044715 * gate ** 3)))
            out[m] += weights[m, j] * ((act * h[n:]) @ w2[ids[m, j]].T)
    return out


def _inputs(tokens=4, hidden=8, inter=6, experts=3, topk=2, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((tokens, hidden)).astype(np.float32)
    w1 = rng.standard_normal((experts, 2 * inter, hidden)).astype(np.float32)
    w2 = rng.standard_normal((experts, hidden, inter)).astype(np.float32)
    weights = rng.random((tokens, topk)).astype(np.float32)
    ids = np.stack([rng.permutation(experts)[:topk] for _ in range(tokens)]).astype(np.int64)
    return x, w1, w2, weights, ids


def test_schemas_inferred_from_the_signatures(vllm):
    schema = str(torch.ops.vllm.inplace_fused_experts.default._schema)
    assert schema.startswith("vllm::inplace_fused_experts(Tensor(a0!) hidden_states, Tensor w1, Tensor w2, ")
    assert 'str activation="silu"' in schema and "str? ocp_mx_scheme=None" in schema
    assert "SymInt[]? block_shape=None" in schema and "SymInt global_num_experts=-1" in schema and "Tensor? w2_bias=None) -> ()" in schema
    assert str(torch.ops.vllm.outplace_fused_experts.default._schema).endswith("Tensor? w2_bias=None) -> Tensor")
    assert {"vllm/inplace_fused_experts/CPU", "vllm/inplace_fused_experts/Meta",
            "vllm/outplace_fused_experts/CPU", "vllm/outplace_fused_experts/Meta"} <= library._impls


@pytest.mark.parametrize("activation", ["silu", "gelu"])
def test_outplace_and_inplace_results(vllm, activation):
    x, w1, w2, weights, ids = _inputs()
    expected = _reference(x, w1, w2, weights, ids, activation)
    kwargs = dict(hidden_states=torch.from_numpy(x.copy()), w1=torch.from_numpy(w1), w2=torch.from_numpy(w2),
                  topk_weights=torch.from_numpy(weights), topk_ids=torch.from_numpy(ids), activation=activation)
    out = vllm.dispatch_fused_experts_func(False)(**kwargs)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    assert np.array_equal(kwargs["hidden_states"].numpy(), x)  # out of place
    version = kwargs["hidden_states"]._version
    result = vllm.dispatch_fused_experts_func(True)(**kwargs)
    assert result is kwargs["hidden_states"] and result._version == version + 1  # Tensor(a0!): bumped once
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-5, atol=1e-5)


def test_fake_impls_on_meta(vllm):
    x, w1, w2, weights, ids = _inputs()
    meta = [torch.empty(*a.shape, dtype=torch.from_numpy(a).dtype, device="meta") for a in (x, w1, w2, weights, ids)]
    out = torch.ops.vllm.outplace_fused_experts(*meta)
    assert out.is_meta and out.shape == x.shape
    assert torch.ops.vllm.inplace_fused_experts(*meta, activation="gelu") is None


def test_opcheck(vllm):
    x, w1, w2, weights, ids = _inputs()
    args = tuple(torch.from_numpy(a) for a in (x, w1, w2, weights, ids))
    assert set(torch.library.opcheck(torch.ops.vllm.outplace_fused_experts.default, args).values()) == {"SUCCESS"}
    assert set(torch.library.opcheck(torch.ops.vllm.inplace_fused_experts.default, args).values()) == {"SUCCESS"}


def test_registering_twice_names_both_sites(vllm):
    with pytest.raises(RuntimeError, match="vllm::outplace_fused_experts"):
        vllm.direct_register_custom_op(op_name="outplace_fused_experts", op_func=vllm.outplace_fused_experts)
