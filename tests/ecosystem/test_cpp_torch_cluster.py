"""torch_cluster's CPU kernels (rusty1s/pytorch_cluster @ 3d1d9e39), ported
with the name map, each registered as upstream does with
`torch::RegisterOperators().op("torch_cluster::<name>", &fn)` (the older
registration API, inferring the schema), checked with AT_ASSERTM / AT_ERROR:

- voxel grid clustering (csrc/grid.cpp, cpu/grid_cpu.cpp, cpu/utils.h): min/max
  with a dim, true_divide, toType, cumprod, cat, narrow, *= and sum;
- farthest point sampling (csrc/fps.cpp, cpu/fps_cpu.cpp): x[i], pow_, sum
  over a dim, ceil, cumsum, argmax, the two-tensor min, parallel_for.
- Graclus matching (csrc/graclus.cpp, cpu/graclus_cpu.cpp): full, randperm,
  AT_DISPATCH_ALL_TYPES_AND2(Half, BFloat16, ...);
- neighbour sampling (csrc/sampler.cpp, cpu/sampler_cpu.cpp): randperm and
  from_blob(data, sizes, options).clone().
- random walks (csrc/rw.cpp, cpu/rw_cpu.cpp): rand, empty with options,
  parallel_for with at::internal::GRAIN_SIZE.

Built against the installed headers; the values, schemas and messages are
PyTorch 2.13's for upstream's code built with torch."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops
from opdispatch.utils._python_dispatch import TorchDispatchMode

from _cpp_ports import build, t

SOURCES = ["csrc/grid.cpp", "csrc/cpu/grid_cpu.cpp", "csrc/fps.cpp", "csrc/cpu/fps_cpu.cpp", "csrc/graclus.cpp",
           "csrc/cpu/graclus_cpu.cpp", "csrc/sampler.cpp", "csrc/cpu/sampler_cpu.cpp", "csrc/rw.cpp", "csrc/cpu/rw_cpu.cpp"]


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("torch_cluster", SOURCES)


POS = np.array([[0.5, 1.0], [2.7, 0.2], [4.0, 3.9], [1.1, 2.2], [3.3, 0.0]], np.float32)
SIZE = np.array([1.5, 2.0], np.float32)


def test_register_operators_infers_upstreams_schema_as_a_catch_all_kernel():
    assert str(ops.torch_cluster.grid.default._schema) == (  # PyTorch 2.13's inferred schema
        "torch_cluster::grid(Tensor _0, Tensor _1, Tensor? _2, Tensor? _3) -> Tensor _0")
    assert _C._dispatch_has_kernel_for_dispatch_key("torch_cluster::grid", "CompositeImplicitAutograd")


@pytest.mark.parametrize("pos, size, start, end, expected", [  # PyTorch 2.13's values for upstream's code
    (POS, SIZE, None, None, [0, 1, 5, 3, 1]),
    (POS, SIZE, np.zeros(2, np.float32), np.full(2, 6.0, np.float32), [0, 1, 7, 5, 2]),
    (np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.9, 0.2, 0.7], [0.5, 0.5, 0.5]]), np.full(3, 0.5), None, None,
     [0, 26, 10, 13]),
    (np.arange(10.0, dtype=np.float32).reshape(5, 2, 1), np.array([2.0, 3.0], np.float32), None, None,
     [0, 1, 7, 13, 14]),
    (np.array([[1.0], [2.5], [7.0], [4.0]], np.float32), np.array([2.0], np.float32), None, None, [0, 0, 3, 1]),
])
def test_grid_numbers_each_points_voxel(pos, size, start, end, expected):
    out = ops.torch_cluster.grid(t(pos), t(size), None if start is None else t(start), None if end is None else t(end))
    assert out.dtype == opdispatch.int64
    assert out.tolist() == expected


def test_a_size_per_dimension_is_checked_with_at_assertm():
    # PyTorch 2.13: 'size.numel() == pos.size(1) INTERNAL ASSERT FAILED at "<file>":18, please report a bug to
    # PyTorch. Input mismatch'; opdispatch's internal assert words the place its own way, with the same condition
    # and message.
    with pytest.raises(RuntimeError, match=r"INTERNAL ASSERT FAILED at .*grid_cpu\.cpp:\d+: size\.numel\(\) == "
                                           r"pos\.size\(1\)\. Input mismatch$"):
        ops.torch_cluster.grid(t(POS), t(np.ones(1, np.float32)), None, None)


class _Record(TorchDispatchMode):
    """A mode that appends the name of each operator it sees to ``seen``."""

    def __init__(self, seen):
        super().__init__()
        self.seen = seen

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def test_the_kernels_calls_are_od_operators_a_mode_sees():
    seen = []
    with _Record(seen):  # requires_grad: the catch-all kernel runs above the Python key, so its calls reach the mode
        out = ops.torch_cluster.grid(opdispatch.from_numpy(POS).requires_grad_(), t(SIZE), None, None)
    assert out.tolist() == [0, 1, 5, 3, 1]
    for name in ("od.min.dim", "od.max.dim", "od.cumprod.default", "od.cat.default", "od.div.Tensor"):
        assert name in seen, (name, seen)


# --- fps ---------------------------------------------------------------------------------------------------------

FPS_SRC = np.array([[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0], [0.2, 0.1], [3.0, 2.0], [2.5, -1.0], [0.0, 0.0]],
                   np.float32)


def test_fps_schema_is_upstreams():
    assert str(ops.torch_cluster.fps.default._schema) == (  # PyTorch 2.13's inferred schema
        "torch_cluster::fps(Tensor _0, Tensor _1, Tensor _2, bool _3) -> Tensor _0")


@pytest.mark.parametrize("src, ptr, ratio, expected", [  # PyTorch 2.13's values for upstream's code
    (FPS_SRC, [0, 4, 8], np.array(0.5, np.float32), [0, 3, 4, 5]),
    (FPS_SRC, [0, 8], np.array(0.6, np.float32), [0, 5, 6, 3, 1]),
    (FPS_SRC.astype(np.float64), [0, 4, 8], np.array([0.25, 0.75], np.float32), [0, 4, 5, 6]),
    (np.arange(12.0, dtype=np.float32).reshape(6, 2, 1) ** 1.5, [0, 2, 6], np.array(1.0, np.float32),
     [0, 1, 2, 5, 4, 3]),
])
def test_fps_keeps_the_farthest_points_of_each_example(src, ptr, ratio, expected):
    out = ops.torch_cluster.fps(t(src), t(np.array(ptr)), t(ratio), False)
    assert out.dtype == opdispatch.int64
    assert out.tolist() == expected


def test_fps_with_a_random_start_keeps_one_point_of_each_example_first():
    out = ops.torch_cluster.fps(t(FPS_SRC), t(np.array([0, 4, 8])), t(np.array(0.5, np.float32)), True).tolist()
    assert len(out) == 4 and 0 <= out[0] < 4 and 4 <= out[2] < 8  # the start is rand()'s; the rest follows from it


def test_fps_checks_ptr_with_at_assertm():
    # PyTorch 2.13: 'ptr.dim() == 1 INTERNAL ASSERT FAILED at "<file>":20, ... Input mismatch'.
    with pytest.raises(RuntimeError, match=r"INTERNAL ASSERT FAILED at .*fps_cpu\.cpp:\d+: ptr\.dim\(\) == 1\. "
                                           r"Input mismatch$"):
        ops.torch_cluster.fps(t(FPS_SRC), t(np.array([[0, 8]])), t(np.array(0.5, np.float32)), False)


def test_fps_calls_are_od_operators_a_mode_sees():
    seen = []
    with _Record(seen):  # requires_grad: the catch-all kernel runs above the Python key, so its calls reach the mode
        out = ops.torch_cluster.fps(opdispatch.from_numpy(FPS_SRC).requires_grad_(), t(np.array([0, 4, 8])),
                                    t(np.array(0.5, np.float32)), False)
    assert out.tolist() == [0, 3, 4, 5]
    # pow_ of a tensor requiring grad is recorded as pow and copy_ (Autograd's in-place formula); min.other is
    # CompositeImplicitAutograd, so the mode sees the minimum it calls, as PyTorch's modes do.
    for name in ("od.select.int", "od.pow.Tensor_Scalar", "od.copy_.default", "od.ceil.default", "od.cumsum.default",
                 "od.argmax.default", "od.minimum.default"):
        assert name in seen, (name, seen)


# --- graclus and neighbor_sampler: random (randperm, rand()), so the graphs are ones whose result does not depend on
# the draws; PyTorch 2.13's values for upstream's code on the same graphs.

def test_graclus_and_sampler_schemas_are_upstreams():
    assert str(ops.torch_cluster.graclus.default._schema) == (
        "torch_cluster::graclus(Tensor _0, Tensor _1, Tensor? _2) -> Tensor _0")
    assert str(ops.torch_cluster.neighbor_sampler.default._schema) == (
        "torch_cluster::neighbor_sampler(Tensor _0, Tensor _1, int _2, float _3) -> Tensor _0")


def test_graclus_matches_the_pairs_of_a_graph_of_pairs():
    rowptr, col = np.array([0, 1, 2, 3, 4, 4]), np.array([1, 0, 3, 2])  # 0-1, 2-3, and 4 alone
    assert ops.torch_cluster.graclus(t(rowptr), t(col), None).tolist() == [0, 0, 2, 2, 4]


# A square 0-1-3-2-0 whose edges 0-1 and 2-3 weigh 5 and the others 1: in any visiting order each node picks its
# heavy edge, so the pairs are {0, 1} and {2, 3}.
SQUARE = (np.array([0, 2, 4, 6, 8]), np.array([1, 2, 0, 3, 0, 3, 1, 2]), np.array([5, 1, 5, 1, 1, 5, 1, 5]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8])
def test_graclus_follows_the_heaviest_edges(dtype):
    rowptr, col, weight = SQUARE
    out = ops.torch_cluster.graclus(t(rowptr), t(col), t(weight.astype(dtype)))
    assert out.tolist() == [0, 0, 2, 2]


def test_graclus_checks_the_weights_with_at_assertm():
    # PyTorch 2.13: 'optional_weight.value().numel() == col.numel() INTERNAL ASSERT FAILED at "<file>":13, ...'.
    rowptr, col, _ = SQUARE
    with pytest.raises(RuntimeError, match=r"INTERNAL ASSERT FAILED at .*graclus_cpu\.cpp:\d+: "
                                           r"optional_weight\.value\(\)\.numel\(\) == col\.numel\(\)\. Input mismatch$"):
        ops.torch_cluster.graclus(t(rowptr), t(col), t(np.ones(3, np.float32)))


def test_graclus_refuses_complex_weights_as_at_dispatch_does():
    rowptr, col, weight = SQUARE
    with pytest.raises(NotImplementedError, match="^\"graclus_cpu\" not implemented for 'ComplexFloat'$"):
        ops.torch_cluster.graclus(t(rowptr), t(col), t(weight.astype(np.complex64)))


@pytest.mark.parametrize("count, factor", [(10, 1.0), (0, 1.0), (3, 0.0)])
def test_neighbor_sampler_takes_every_edge_when_asked_for_all(count, factor):
    # Nodes 0, 1, 3 have edges 0..1, 2..4 and 5; asked for at least their degree, each gives all its edges, in
    # randperm's order (PyTorch 2.13 gave [1, 0, 3, 4, 2, 5] and [0, 1, 3, 2, 4, 5]).
    out = ops.torch_cluster.neighbor_sampler(t(np.array([0, 1, 3])), t(np.array([0, 2, 5, 5, 6])), count, factor)
    assert out.dtype == opdispatch.int64
    ids = out.tolist()
    assert sorted(ids[:2]) == [0, 1] and sorted(ids[2:5]) == [2, 3, 4] and ids[5:] == [5]


def test_neighbor_sampler_picks_few_edges_without_replacement():
    out = ops.torch_cluster.neighbor_sampler(t(np.array([0])), t(np.array([0, 10])), 2, 1.0).tolist()
    assert len(out) == 2 and len(set(out)) == 2 and all(0 <= e < 10 for e in out)


# --- random_walk: on a cycle 0 -> 1 -> 2 -> 0 (one edge each) and a node 3 without edges every walk is determined.

def test_random_walk_schema_is_upstreams():
    assert str(ops.torch_cluster.random_walk.default._schema) == (  # PyTorch 2.13's inferred schema
        "torch_cluster::random_walk(Tensor _0, Tensor _1, Tensor _2, int _3, float _4, float _5) -> (Tensor _0, "
        "Tensor _1)")


@pytest.mark.parametrize("p, q", [(1.0, 1.0), (2.0, 0.5)])  # uniform (rand), and node2vec's rejection sampling
def test_random_walk_follows_the_only_edges(p, q):
    nodes, edges = ops.torch_cluster.random_walk(t(np.array([0, 1, 2, 3, 3])), t(np.array([1, 2, 0])),
                                                 t(np.array([0, 2, 3])), 4, p, q)
    # PyTorch 2.13's values for upstream's code.
    assert nodes.tolist() == [[0, 1, 2, 0, 1], [2, 0, 1, 2, 0], [3, 3, 3, 3, 3]]
    assert edges.tolist() == [[0, 1, 2, 0], [2, 0, 1, 2], [-1, -1, -1, -1]]


def test_random_walk_steps_stay_on_edges():
    rowptr, col = np.array([0, 3, 5, 6, 8]), np.array([1, 2, 3, 0, 2, 3, 0, 1])
    nodes, edges = ops.torch_cluster.random_walk(t(rowptr), t(col), t(np.array([0, 1, 2, 3] * 5)), 6, 1.0, 1.0)
    for walk, taken in zip(nodes.tolist(), edges.tolist()):
        for a, b, e in zip(walk, walk[1:], taken):
            assert rowptr[a] <= e < rowptr[a + 1] and col[e] == b


def test_random_walk_checks_with_at_assertm():
    # PyTorch 2.13: 'col.dim() == 1 INTERNAL ASSERT FAILED at "<file>":..., please report a bug to PyTorch. Input
    # mismatch'.
    with pytest.raises(RuntimeError, match=r"INTERNAL ASSERT FAILED at .*rw_cpu\.cpp:\d+: col\.dim\(\) == 1\. "
                                           r"Input mismatch$"):
        ops.torch_cluster.random_walk(t(np.array([0, 1])), t(np.array([[0]])), t(np.array([0])), 2, 1.0, 1.0)
