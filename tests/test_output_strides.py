"""The strides of outputs that follow their inputs' layout
(python/opdispatch/_builtins/_output_strides.py, Note [Output strides]),
on cpu and meta alike, with the strides PyTorch 2.13 gives for the same
calls (each expected value printed by the snippet in its comment, run in a
PyTorch venv)."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as od
from opdispatch import _C


def cpu(shape, strides):
    """A float32 cpu tensor of ``shape`` and ``strides`` (in elements) holding 0, 1, 2, ... in logical order."""
    t = od.empty_strided(shape, strides)
    t.numpy()[...] = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return t


def both(shape, strides):
    """The cpu tensor of ``cpu`` and a meta tensor of the same geometry."""
    return cpu(shape, strides), _C.empty_strided(shape, strides, device="meta")


F = ((3, 4), (1, 3))  # torch.ones(4, 3).t()
C = ((3, 4), (4, 1))

CALLS = [
    # (F + C).stride(), (C + F).stride(): the first operand whose strides order two dimensions decides
    ("F + C", lambda f, c: f + c, [F, C], (1, 3)),
    ("C + F", lambda f, c: f + c, [C, F], (4, 1)),
    # (F + torch.ones(4)).stride(): a broadcast operand orders nothing
    ("F + row", lambda f, r: f + r, [F, ((4,), (1,))], (1, 3)),
    # torch.ones(2, 3, 4).permute(2, 0, 1) * 2: dense, so its own strides
    ("permuted * 2", lambda p: p * 2, [((4, 2, 3), (1, 12, 4))], (1, 12, 4)),
    # (torch.ones(3, 8)[:, ::2].t() + 1).stride(): not dense; dense in the order of its strides
    ("spread + 1", lambda s: s + 1, [((4, 3), (2, 8))], (1, 4)),
    # torch.ones(2, 4, 5, 3).permute(0, 3, 1, 2): channels-last inputs give a channels-last output
    ("channels_last sin", lambda x: x.sin(), [((2, 3, 4, 5), (60, 1, 15, 3))], (60, 1, 15, 3)),
    # torch.ones(4, 1).expand(4, 3) + torch.ones(3, 4).t(): the expanded operand orders nothing
    ("expanded + F", lambda e, f: e + f, [((4, 3), (1, 0)), ((4, 3), (1, 4))], (1, 4)),
    # F.relu(), torch.where(F > 0, F, C)
    ("relu", lambda f: f.relu(), [F], (1, 3)),
    ("where", lambda f, c: od.where(f > 0, f, c), [F, C], (1, 3)),
    # torch.pow(2.0, F): PyTorch allocates pow.Scalar's output C-contiguous
    ("pow.Scalar", lambda f: od.ops.od.pow.Scalar(2.0, f), [F], (4, 1)),
]


@pytest.mark.parametrize("name, call, geometries, expected", CALLS, ids=[c[0] for c in CALLS])
def test_elementwise_output_strides_are_pytorchs_on_cpu_and_meta(name, call, geometries, expected):
    pairs = [both(*g) for g in geometries]
    on_cpu = call(*[p[0] for p in pairs])
    on_meta = call(*[p[1] for p in pairs])
    assert on_cpu.stride() == expected
    assert on_meta.is_meta and on_meta.stride() == expected
    reference = call(*[od.from_numpy(np.ascontiguousarray(p[0].numpy())) for p in pairs])
    np.testing.assert_array_equal(on_cpu.numpy(), reference.numpy())


def test_contiguous_inputs_give_contiguous_outputs():
    # (torch.ones(3, 4) + torch.ones(4)).stride(), torch.ones(3, 4).sin().stride(), ...relu().stride()
    c, row = cpu(*C), cpu((4,), (1,))
    assert (c + row).stride() == c.sin().stride() == c.relu().stride() == (4, 1)


LIKE = [
    ("zeros_like", od.zeros_like), ("empty_like", od.empty_like), ("ones_like", od.ones_like),
    ("full_like", lambda x: od.ops.od.full_like(x, 2)), ("clone", lambda x: x.clone()),
    ("_to_copy", lambda x: x.to(od.float64)),
]


@pytest.mark.parametrize("name, make", LIKE, ids=[n for n, _ in LIKE])
@pytest.mark.parametrize("geometry, expected", [
    # [f(x).stride() for f in (torch.zeros_like, ..., torch.clone, lambda x: x.to(torch.float64))] for
    # x = torch.ones(4, 3).t() (dense: its own strides), torch.ones(3, 8)[:, ::2].t() (not dense: dense in the
    # order of its strides) and torch.ones(2, 3, 4).permute(2, 0, 1)
    (F, (1, 3)), (((4, 3), (2, 8)), (1, 4)), (((4, 2, 3), (1, 12, 4)), (1, 12, 4)),
], ids=["column_major", "spread", "permuted"])
def test_copies_preserve_the_layout_on_cpu_and_meta(name, make, geometry, expected):
    x, m = both(*geometry)
    assert make(x).stride() == expected
    assert make(m).stride() == expected
    if name not in ("empty_like", "zeros_like", "ones_like", "full_like"):
        np.testing.assert_array_equal(make(x).numpy(), x.numpy())


def test_contiguous_and_reshape_copy_to_c_order():
    # torch.zeros_like(F, memory_format=torch.contiguous_format).stride(), F.contiguous().stride(),
    # F.clone(memory_format=torch.contiguous_format).stride(), F.reshape(12) (a copy) and back
    x = cpu(*F)
    assert od.ops.od.zeros_like(x, memory_format=0).stride() == x.contiguous().stride() == (4, 1)
    assert od.ops.od.clone(x, memory_format=0).stride() == (4, 1)
    np.testing.assert_array_equal(x.reshape(12).numpy(), np.arange(12, dtype=np.float32))


SPREAD = ((3, 4), (8, 2))  # torch.ones(3, 8)[:, ::2]
EXPANDED = ((3, 4), (1, 0))  # torch.ones(3, 1).expand(3, 4)

COPIES = [
    # torch.ops.aten.copy(x, torch.zeros(3, 4)).stride(): self's strides, dense or not, unless self overlaps itself
    ("copy spread", lambda x: od.ops.od.copy(x, od.zeros(3, 4)), SPREAD, (8, 2)),
    ("copy column_major", lambda x: od.ops.od.copy(x, od.zeros(3, 4)), F, (1, 3)),
    ("copy expanded", lambda x: od.ops.od.copy(x, od.zeros(3, 4)), EXPANDED, (4, 1)),
    # torch.select_scatter(x, torch.zeros(4), 0, 1), torch.slice_scatter(x, torch.zeros(3, 2), 1, 0, 2)
    ("select_scatter", lambda x: od.ops.od.select_scatter(x, od.zeros(4), 0, 1), SPREAD, (8, 2)),
    ("slice_scatter", lambda x: od.ops.od.slice_scatter(x, od.zeros(3, 2), 1, 0, 2), SPREAD, (8, 2)),
    # torch.ops.aten.index_put(F, [torch.tensor([0])], torch.tensor(5.)), torch.flip(F, [0]), torch.ops.aten.fill(F, 2.)
    ("index_put", lambda x: od.ops.od.index_put(x, [od.tensor([0])], od.tensor(5.0)), F, (1, 3)),
    ("flip", lambda x: od.ops.od.flip(x, [0]), F, (1, 3)),
    ("fill", lambda x: od.ops.od.fill.Scalar(x, 2.0), F, (1, 3)),
]


@pytest.mark.parametrize("name, call, geometry, expected", COPIES, ids=[c[0] for c in COPIES])
def test_copies_of_self_keep_its_strides_on_cpu_and_meta(name, call, geometry, expected):
    x, m = both(*geometry)
    assert call(x).stride() == expected
    assert call(m).stride() == expected
