"""Port of xformers' tiled matmul (facebookresearch/xformers
xformers/ops/tiled_matmul.py): a custom op taking and returning Tensor[]
(grids of tiles flattened), int[] arguments, a fake impl, and a
register_autograd formula that saves a variable number of tensors and
returns a list of gradients per Tensor[] input by calling the op itself.
The ported code is in ported/xformers_tiled_matmul.py."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch as torch
from _port import loaded


@pytest.fixture(scope="module")
def xf():
    with loaded("xformers_tiled_matmul") as module:
        yield module


def _grid(rows, cols, rng, requires_grad=False):
    # Tile (i, j) of a grid with row sizes rows and column sizes cols.
    return [[torch.from_numpy(rng.standard_normal((r, c))).requires_grad_(requires_grad) for c in cols]
            for r in rows]


def _dense(grid):
    return np.block([[t.detach().numpy() for t in row] for row in grid])


def test_tiled_matmul_equals_the_dense_product(xf):
    rng = np.random.default_rng(0)
    a, b = _grid([2, 3], [4, 1], rng), _grid([4, 1], [5, 2], rng)
    c = xf.tiled_matmul(a, b)
    assert [[t.shape for t in row] for row in c] == [[(2, 5), (2, 2)], [(3, 5), (3, 2)]]
    np.testing.assert_allclose(_dense(c), _dense(a) @ _dense(b), rtol=1e-12)


def test_gradients_of_every_tile(xf):
    rng = np.random.default_rng(1)
    a, b = _grid([2, 3], [4, 1], rng, True), _grid([4, 1], [5, 2], rng, True)
    c = xf.tiled_matmul(a, b)
    weights = [[torch.from_numpy(rng.standard_normal(t.shape)) for t in row] for row in c]
    loss = sum((t * w).sum() for row_c, row_w in zip(c, weights) for t, w in zip(row_c, row_w))
    loss.backward()
    g = np.block([[w.numpy() for w in row] for row in weights])
    expected_a = g @ _dense(b).T
    expected_b = _dense(a).T @ g
    np.testing.assert_allclose(_dense([[t.grad for t in row] for row in a]), expected_a, rtol=1e-12)
    np.testing.assert_allclose(_dense([[t.grad for t in row] for row in b]), expected_b, rtol=1e-12)


def test_gradcheck(xf):
    rng = np.random.default_rng(2)
    tiles = [t for row in _grid([2], [3, 2], rng, True) + _grid([3, 2], [2], rng, True) for t in row]

    def f(a0, a1, b0, b1):
        return xf.tiled_matmul([[a0, a1]], [[b0], [b1]])[0][0]

    assert torch.autograd.gradcheck(f, tuple(tiles))


def test_fake_impl_and_opcheck(xf):
    m = [torch.empty(2, 3, device="meta"), torch.empty(2, 4, device="meta")]
    n = [torch.empty(3, 5, device="meta"), torch.empty(3, 1, device="meta"),
         torch.empty(4, 5, device="meta"), torch.empty(4, 1, device="meta")]
    out = torch.ops.xformers_python.tiled_matmul_fwd(m, n, [2], [5, 1], [3, 4])
    assert [t.shape for t in out] == [(2, 5), (2, 1)] and out[0].is_meta
    # Upstream's fake flattens with len(ks) columns where it means len(ns): it only works when they agree.
    with pytest.raises(AssertionError):
        torch.ops.xformers_python.tiled_matmul_fwd(m, n[::2], [2], [5], [3, 4])
    rng = np.random.default_rng(3)
    a = [t for row in _grid([2, 3], [4, 1], rng, True) for t in row]
    b = [t for row in _grid([4, 1], [5, 2], rng, True) for t in row]
    result = torch.library.opcheck(xf.tiled_matmul_fwd, (a, b, [2, 3], [5, 2], [4, 1]))
    assert set(result.values()) == {"SUCCESS"}
