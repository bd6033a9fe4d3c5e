"""The nn operators (convolution, pooling, normalisation, dropout, padding,
embedding, upsampling, distances, softmax, losses and their gradient
operators and decompositions) against PyTorch 2.13: every sample of
tests/opinfo/nn_*.py with the outputs (values, dtypes, shapes, strides),
gradients and mutated arguments PyTorch gave for it, as
tests/data/make_nn_torch.py recorded them in tests/data/nn_torch.json; the
same with non-contiguous inputs; schemas and tags; and the behaviour
around them (the dropout mask, decompositions, opdispatch.nn.functional)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import opdispatch
import opdispatch.nn.functional as F
from opdispatch import _C
from opdispatch.tracing import make_fx

DATA = json.loads((Path(__file__).parent / "data" / "nn_torch.json").read_text())
CASES = DATA["cases"]
#: Tolerances per dtype: float64 agrees to rounding, float32 and float16 to their precision.
TOLERANCE = {"float64": 1e-9, "float32": 2e-5, "float16": 2e-3}


def op_of(name: str) -> Any:
    base, _, overload = name.partition(".")
    return getattr(getattr(opdispatch.ops.od, base), overload or "default")


def _strided(t: Any) -> Any:
    """``t``'s values in a non-contiguous tensor (every other element of a wider one)."""
    wide = opdispatch.zeros(*t.shape, 2, dtype=t.dtype)
    view = wide.select(-1, 0)
    view.copy_(t)
    return view


def build(x: Any, leaves: list[Any], strided: bool = False) -> Any:
    """A recorded argument as opdispatch values; float arrays that are not
    constants become leaves that require grad (appended to ``leaves``)."""
    if isinstance(x, list):
        return [build(v, leaves, strided) for v in x]
    if isinstance(x, dict) and "scalar_type" in x:
        return getattr(opdispatch, x["scalar_type"])
    if isinstance(x, dict) and "array" in x:
        t = opdispatch.tensor(np.asarray(x["array"], dtype=x["dtype"]).reshape(x["shape"]))
        if strided and t.ndim:
            t = _strided(t)
        if t.dtype.is_floating_point and not x.get("const"):
            t = t.detach().requires_grad_()
            leaves.append(t)
        return t
    return x


def expect(actual: Any, recorded: dict[str, Any], what: str, strides: bool = True) -> None:
    assert str(actual.dtype) == "opdispatch." + recorded["dtype"], what
    assert list(actual.shape) == recorded["shape"], what
    if strides and actual.numel() > 1:
        assert list(actual.stride()) == recorded["stride"], what
    expected = np.asarray(recorded["array"], dtype=recorded["dtype"]).reshape(recorded["shape"])
    tol = TOLERANCE.get(recorded["dtype"], 0)
    np.testing.assert_allclose(actual.detach().numpy(), expected, rtol=tol, atol=tol, err_msg=what)


def _call(case: dict[str, Any], strided: bool = False) -> tuple[Any, list[Any], list[Any]]:
    leaves: list[Any] = []
    args = build(case["args"], leaves, strided)
    kwargs = {k: build(v, leaves, strided) for k, v in case["kwargs"].items()}
    result = op_of(case["op"])(*args, **kwargs)
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    return outs, leaves, [a for a in args if isinstance(a, opdispatch.Tensor)]


RECORDED = [pytest.param(c, id=f"{c['op']}-{c['index']}") for c in CASES if "outputs" in c]


@pytest.mark.parametrize("case", RECORDED)
def test_outputs_match_pytorch(case):
    outs, _, inputs = _call(case)
    assert len(outs) == len(case["outputs"])
    for i, (out, rec) in enumerate(zip(outs, case["outputs"])):
        if rec is not None:  # PyTorch's None: an output the mask did not ask for (Note [Gradients not asked for])
            expect(out, rec, f"output {i}")
    for i, (t, rec) in enumerate(zip(inputs, case["final_inputs"])):
        expect(t, rec, f"argument {i} after the call", strides=False)


#: Gradient operators whose own derivative PyTorch has and opdispatch does not (yet): TODO(#31).
SECOND_DERIVATIVES_MISSING = {"grid_sampler_2d_backward"}


@pytest.mark.parametrize("case", [p for p in RECORDED if "grads" in p.values[0]])
def test_gradients_match_pytorch(case):
    outs, leaves, _ = _call(case)
    if case["op"] in SECOND_DERIVATIVES_MISSING:
        with pytest.raises(RuntimeError, match="is not implemented in opdispatch"):
            opdispatch.autograd.grad([o for o in outs if o.numel()], leaves, allow_unused=True,
                                     grad_outputs=[opdispatch.ones_like(o) for o in outs if o.numel()])
        return
    chosen = case["differentiable_outputs"]
    diff = [o for i, (o, rec) in enumerate(zip(outs, case["outputs"])) if rec is not None
            and (chosen is None or i in chosen) and o.dtype.is_floating_point and o.requires_grad]
    cotangents = [build(c, []) .detach() for c in case["cotangents"]]
    assert len(diff) == len(cotangents)
    grads = opdispatch.autograd.grad(diff, leaves, cotangents, allow_unused=True)
    for i, (g, rec) in enumerate(zip(grads, case["grads"])):
        if rec is None:
            assert g is None or not np.any(g.numpy()), f"gradient {i}: PyTorch gives none"
        else:
            expect(g, rec, f"gradient of float input {i}", strides=False)


@pytest.mark.parametrize("case", RECORDED)
def test_non_contiguous_inputs_give_the_same_outputs(case):
    outs, _, inputs = _call(case, strided=True)
    assert any(not t.is_contiguous() for t in inputs if t.numel() > 1) or all(t.numel() <= 1 for t in inputs)
    for i, (out, rec) in enumerate(zip(outs, case["outputs"])):
        if rec is not None:
            expect(out, rec, f"output {i}", strides=False)


@pytest.mark.parametrize("name", sorted(DATA["schemas"]))
def test_schema_and_tags_are_pytorchs(name):
    recorded = DATA["schemas"][name]
    overload = op_of(name)
    assert str(overload._schema) == recorded["schema"].replace("aten::", "od::", 1)
    assert sorted(t.name for t in overload.tags) == recorded["tags"]


def test_every_nn_sample_was_recorded():
    """tests/data/nn_torch.json is current: rerun tests/data/make_nn_torch.py after changing an nn sample."""
    import importlib
    import pkgutil

    import op_db  # noqa: F401  (imports every family module of opinfo first)
    import opinfo

    samples = {(info.name, i) for m in pkgutil.iter_modules(opinfo.__path__) if m.name.startswith("nn")
               for info in importlib.import_module(f"opinfo.{m.name}").OPS for i in range(len(info.samples))}
    assert {(c["op"], c["index"]) for c in CASES} == samples
    assert all("outputs" in c or "error" in c for c in CASES)


# --- dropout's mask ---------------------------------------------------------------------------------------------


def test_native_dropout_keeps_about_1_minus_p_and_scales_what_it_keeps():
    opdispatch.manual_seed(0)
    x = opdispatch.ones(200, 100, dtype=opdispatch.float64)
    out, mask = opdispatch.ops.od.native_dropout(x, 0.3, True)
    kept = mask.numpy()
    assert mask.dtype == opdispatch.bool and abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_array_equal(out.numpy(), np.where(kept, 1 / 0.7, 0.0))
    opdispatch.manual_seed(0)
    again = opdispatch.ops.od.native_dropout(x, 0.3, True)[1].numpy()
    np.testing.assert_array_equal(again, kept)  # the generator of rand/randn: manual_seed repeats the mask


def test_native_dropout_gradient_uses_the_forward_mask():
    x = opdispatch.ones(4, 5, dtype=opdispatch.float64, requires_grad=True)
    out, mask = opdispatch.ops.od.native_dropout(x, 0.5, True)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), mask.numpy() * 2.0)


def test_native_dropout_refuses_a_probability_outside_0_1():
    with pytest.raises(RuntimeError, match="od::native_dropout: dropout probability has to be between 0 and 1"):
        opdispatch.ops.od.native_dropout(opdispatch.ones(2), 1.5, True)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        F.dropout(opdispatch.ones(2), -0.1)


# --- decompositions -----------------------------------------------------------------------------------------------


def _traced(fn: Any, *args: Any) -> list[str]:
    """The operators make_fx records for ``fn`` on inputs that require grad:
    CompositeImplicitAutograd decompositions run at the Autograd key, so the
    graph holds what they call (as PyTorch's make_fx graphs do)."""
    gm = make_fx(fn)(*[a.detach().requires_grad_() for a in args])
    # Left out: getitem nodes, and the od::detach of an output a formula saves (PyTorch's nodes save them unrecorded).
    return [str(n.target) for n in gm.nodes if n.op == "call_function" and str(n.target).startswith("od.")
            and str(n.target) != "od.detach.default"]


#: (decomposition, its input's shape, PyTorch 2.13's make_fx graph of the same call with aten. read as od.)
W = opdispatch.randn(2, 3, 3, 3)
TARGET = opdispatch.tensor([0, 1, 2, 1])  # made outside the traced calls (inside, make_fx records it)
DECOMPOSITIONS = [
    (lambda x: opdispatch.ops.od.conv2d(x, W, None, [1, 1], [1, 1]), (2, 3, 4, 4), ["od.convolution.default"]),
    (lambda x: opdispatch.ops.od.conv2d(x, W), (3, 4, 4),
     ["od.unsqueeze.default", "od.convolution.default", "od.squeeze.dim"]),
    (lambda x: opdispatch.ops.od.max_pool2d(x, [2, 2]), (2, 3, 4, 4), ["od.max_pool2d_with_indices.default"]),
    (lambda x: opdispatch.ops.od.layer_norm(x, [4]), (2, 3, 4), ["od.native_layer_norm.default"]),
    (lambda x: opdispatch.ops.od.group_norm(x, 3), (2, 3, 4, 4), ["od.native_group_norm.default"]),
    (lambda x: opdispatch.ops.od.softmax.int(x, 1), (4, 3), ["od._softmax.default"]),
    (lambda x: opdispatch.ops.od.log_softmax.int(x, 1, opdispatch.float64), (4, 3),
     ["od._to_copy.default", "od._log_softmax.default"]),
    (lambda x: opdispatch.ops.od.cross_entropy_loss(x, TARGET), (4, 3),
     ["od._log_softmax.default", "od.nll_loss_forward.default"]),
    (lambda x: opdispatch.ops.od.dropout(x, 0.5, False), (4, 3), []),
]


@pytest.mark.parametrize("fn,shape,expected", DECOMPOSITIONS)
def test_decompositions_call_what_pytorch_calls(fn, shape, expected):
    assert _traced(fn, opdispatch.randn(*shape)) == expected


def test_decompose_returns_the_decomposition():
    x, w = opdispatch.randn(1, 3, 5, 5), opdispatch.randn(2, 3, 3, 3)
    direct = opdispatch.ops.od.convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    decomposed = opdispatch.ops.od.conv2d.default.decompose(x, w)
    np.testing.assert_array_equal(decomposed.numpy(), direct.numpy())
    assert opdispatch.ops.od.convolution.default.decompose(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0],
                                                           1) is NotImplemented


def test_batch_norm_picks_the_operator_for_its_case():
    x = opdispatch.randn(4, 3, 2)
    mean, var = opdispatch.zeros(3), opdispatch.ones(3)
    assert _traced(lambda x: opdispatch.ops.od.batch_norm(x, None, None, mean, var, True, 0.1, 1e-5, False),
                   x) == ["od._native_batch_norm_legit.default"]
    assert _traced(lambda x: opdispatch.ops.od.batch_norm(x, None, None, mean, var, False, 0.1, 1e-5, False),
                   x) == ["od._native_batch_norm_legit_no_training.default"]
    assert _traced(lambda x: opdispatch.ops.od.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
                   x) == ["od._native_batch_norm_legit.no_stats"]
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        opdispatch.ops.od.batch_norm(x, None, None, None, None, False, 0.1, 1e-5, False)


# --- opdispatch.nn.functional -----------------------------------------------------------------------------------


def test_functional_conv2d_same_padding_pads_the_end_of_even_kernels_as_pytorch():
    # PyTorch 2.13: F.conv2d(x, w, padding="same") with a 4x4 kernel pads 1 before and 2 after (constant_pad_nd
    # of the extra one, then convolution with padding 1).
    x, w = opdispatch.randn(1, 2, 6, 6), opdispatch.randn(3, 2, 4, 4)
    assert _traced(lambda x: F.conv2d(x, w, padding="same"), x) == ["od.constant_pad_nd.default",
                                                                      "od.convolution.default"]
    out = F.conv2d(x, w, padding="same")
    padded = F.pad(x, [1, 2, 1, 2])
    np.testing.assert_allclose(out.numpy(), F.conv2d(padded, w).numpy(), rtol=1e-6)


def test_functional_max_pool2d_returns_indices_on_request():
    x = opdispatch.tensor([[[[1.0, 5.0], [3.0, 2.0]]]])
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    assert out.item() == 5.0 and indices.item() == 1 and F.max_pool2d(x, 2).item() == 5.0


def test_functional_batch_norm_refuses_one_value_per_channel_when_training():
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F.batch_norm(opdispatch.randn(1, 3), None, None, training=True)


def test_functional_cross_entropy_and_nll_loss_take_reduction_names():
    logits, target = opdispatch.randn(4, 3), opdispatch.tensor([0, 2, 1, 1])
    per_sample = F.cross_entropy(logits, target, reduction="none")
    assert per_sample.shape == (4,)
    np.testing.assert_allclose(F.cross_entropy(logits, target).item(), per_sample.numpy().mean(), rtol=1e-6)
    np.testing.assert_allclose(F.nll_loss(F.log_softmax(logits, 1), target, reduction="sum").item(),
                               per_sample.numpy().sum(), rtol=1e-6)
    with pytest.raises(ValueError, match="'average' is not a valid value for reduction"):
        F.cross_entropy(logits, target, reduction="average")


def test_functional_relu_inplace_writes_its_input():
    x = opdispatch.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]


def test_functional_names_are_pytorchs():
    torch_names = set(DATA["functional"])
    assert set(F.__all__) <= torch_names


def test_meta_tensors_flow_through_a_whole_cnn_step():
    x = opdispatch.empty(8, 1, 8, 8, device="meta")
    w = opdispatch.empty(4, 1, 3, 3, device="meta", requires_grad=True)
    y = F.max_pool2d(F.relu(F.batch_norm(F.conv2d(x, w, padding=1), None, None, training=True)), 2)
    loss = F.cross_entropy(F.linear(y.flatten(1), opdispatch.empty(10, 64, device="meta")),
                           opdispatch.empty(8, dtype=opdispatch.int64, device="meta"))
    loss.backward()
    assert w.grad.is_meta and w.grad.shape == (4, 1, 3, 3)
    assert _C._dispatch_has_kernel_for_dispatch_key("od::convolution_backward", "Meta")
