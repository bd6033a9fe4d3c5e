"""Every built-in operator on meta tensors gives the shapes, dtypes and
strides it gives on cpu, without touching data: on every OpInfo sample and
its variants (each dtype of OpInfo.dtypes, non-contiguous; tests/opinfo/_cases.py)."""
from __future__ import annotations

import pytest

import opdispatch
from opdispatch import _C
from op_db import OPS, instantiate
from opinfo._cases import cases

CASES = [pytest.param(case, id=case.id) for info in OPS for case in cases(info)]


def _tensors(out: object) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("case", CASES)
def test_meta_matches_cpu(case):
    info = case.info
    cpu_args, cpu_kwargs = instantiate(case.sample, "cpu")
    meta_args, meta_kwargs = instantiate(case.sample, "meta")
    if info.meta_raises is not None:  # a data-dependent output size
        with pytest.raises(info.meta_raises):
            info.op(*meta_args, **meta_kwargs)
        return
    try:
        cpu_out = _tensors(info.op(*cpu_args, **cpu_kwargs))
    except Exception as on_cpu:  # a variant the operator rejects: on meta too, with the same error
        with pytest.raises(type(on_cpu)) as on_meta:
            info.op(*meta_args, **meta_kwargs)
        assert str(on_meta.value) == str(on_cpu)
        return
    if not isinstance(cpu_out[0], opdispatch.Tensor):  # a Python scalar: metadata on meta too, or data it lacks
        base, _, overload = info.name.partition(".")
        if opdispatch.Tag.data_dependent_output in getattr(getattr(opdispatch.ops.od, base), overload or "default").tags:
            with pytest.raises(RuntimeError, match="cannot be called on meta tensors"):
                info.op(*meta_args, **meta_kwargs)
        else:
            assert _tensors(info.op(*meta_args, **meta_kwargs)) == cpu_out
        return
    meta_out = _tensors(info.op(*meta_args, **meta_kwargs))
    assert len(cpu_out) == len(meta_out)
    for c, m in zip(cpu_out, meta_out):
        assert m.is_meta and str(m.device) == "meta"
        assert (m.shape, m.dtype, m.stride()) == (c.shape, c.dtype, c.stride())
    if info.inplace:
        assert meta_out[0] is meta_args[0] and cpu_out[0] is cpu_args[0]


def test_every_od_operator_has_samples():
    defined = {name for name in _C._dispatch_get_all_op_names() if name.startswith("od::")}
    covered = {"od::" + info.name for info in OPS}
    assert defined == covered


@pytest.mark.parametrize("call", [
    lambda d: opdispatch.ones(2, 3, device=d) + opdispatch.ones(4, device=d),
    lambda d: opdispatch.ones(2, 3, device=d) @ opdispatch.ones(2, 3, device=d),
    lambda d: opdispatch.ones(2, 3, device=d).view(4),
    lambda d: opdispatch.ones(2, 3, device=d)[5],
    lambda d: opdispatch.ones(2, 3, device=d).sum(2),
    lambda d: opdispatch.cat([opdispatch.ones(2, 3, device=d), opdispatch.ones(2, 2, device=d)]),
    lambda d: opdispatch.ones(3, dtype=opdispatch.int64, device=d).add_(opdispatch.ones(3, device=d)),
], ids=["broadcast", "matmul", "view", "select", "dim", "cat", "inplace-dtype"])
def test_meta_raises_what_cpu_raises(call):
    with pytest.raises(Exception) as on_cpu:
        call("cpu")
    with pytest.raises(type(on_cpu.value)) as on_meta:
        call("meta")
    assert str(on_meta.value) == str(on_cpu.value)


def test_meta_tensors_have_no_data():
    t = opdispatch.ones(2, 3, device="meta") * 2
    with pytest.raises(RuntimeError, match="meta"):
        t.numpy()
    with pytest.raises(NotImplementedError, match="meta"):
        t.to("cpu")
    assert repr(t) == "tensor(..., device='meta', size=(2, 3), dtype=opdispatch.float32)"


def test_meta_views_share_nothing_but_metadata():
    base = opdispatch.zeros(4, 6, device="meta")
    view = base.t()[1:3]
    assert view.shape == (2, 4) and view.stride() == (1, 6) and view.storage_offset() == 1
    assert view._version == base._version


def test_autograd_runs_on_meta():
    x = opdispatch.ones(2, 3, device="meta", requires_grad=True)
    y = (x * x).sum()
    y.backward()
    assert x.grad.is_meta and x.grad.shape == (2, 3)
