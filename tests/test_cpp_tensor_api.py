"""The ATen-style C++ Tensor API (issue 30) seen from Python through an
extension built with cpp_extension.load: TensorOptions and the factories,
metadata methods, the computing methods and operators (dispatcher calls of
`od` operators, so modes and autograd see them), TensorUtils' checks and the
CHECK_EQ family with ATen's messages."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import cpp_extension
from opdispatch.utils._python_dispatch import TorchDispatchMode

SOURCE = r"""
#include <opdispatch/library.h>

using namespace opdispatch;

// (x.t().contiguous() * 2 + 1 - x.t()) summed over dim 0, in x's dtype: methods, operators, a factory.
Tensor affine_colsum(const Tensor& x) {
  checkDim("affine_colsum", TensorArg(x, "x", 1), 2);
  Tensor t = x.transpose(0, 1).contiguous();
  Tensor y = t * 2.0 + 1.0 - x.transpose(0, 1);
  Tensor out = zeros({y.size(-1)}, y.options());
  out += y.sum({0});
  return out;
}

// The first `n` rows of x as a fresh float64 tensor, filled from a factory and narrow/copy_.
Tensor head_as_double(const Tensor& x, int64_t n) {
  OPDISPATCH_CHECK_LE(n, x.size(0), "asked for more rows than x has");
  Tensor out = empty({n, x.size(1)}, dtype(kDouble).device(x.device()));
  out.copy_(x.narrow(0, 0, n).to(kDouble));
  return out;
}

// Checks that x and w have the same type and x is contiguous, as ATen kernels do.
Tensor checked_mm(const Tensor& x, const Tensor& w) {
  TensorArg x_arg{x, "x", 1}, w_arg{w, "w", 2};
  checkAllSameType("checked_mm", {x_arg, w_arg});
  checkContiguous("checked_mm", x_arg);
  return x.mm(w);
}

// Metadata as a string, for checking from Python.
std::string describe(const Tensor& x) {
  return detail::str(x.ndimension(), " ", x.is_cpu(), " ", x.options(), " ", x.sizes());
}

Tensor describe_op(const Tensor& x) {
  OPDISPATCH_CHECK(false, describe(x));
  return x;
}

// The voxel of each point on a grid of cell sizes `size` spanning the points (torch_cluster's grid_cpu
// pattern): min/max with a dim, div with a rounding mode, true_divide + toType, cumprod, cat.
Tensor voxel_index(const Tensor& pos, const Tensor& size) {
  Tensor start = std::get<0>(pos.min(0));
  Tensor end = std::get<0>(max(pos, 0));
  Tensor num_voxels = (end - start).div(size, "floor").toType(kLong) + 1;
  num_voxels = num_voxels.cumprod(0);
  num_voxels = cat({ones({1}, num_voxels.options()), num_voxels}, 0).narrow(0, 0, size.size(0));
  Tensor out = (pos - start.unsqueeze(0)).true_divide(size.view({1, -1})).toType(kLong);
  out *= num_voxels.view({1, -1});
  return out.sum({1});
}

// x.div(y) in each rounding mode and by a Scalar, stacked as rows.
Tensor divide_modes(const Tensor& x, const Tensor& y) {
  return cat({x.div(y, "floor"), div(x, y, "trunc"), x.div(y, nullopt), x.div(2.0, "floor")}, 0).view({4, -1});
}

// Indices of each row's max and min (the first among equals), its argmax, and the flat argmax.
Tensor extreme_indices(const Tensor& x) {
  auto [values, indices] = x.max(1);
  OPDISPATCH_CHECK(values.scalar_type() == x.scalar_type() && indices.scalar_type() == kLong);
  return cat({indices, std::get<1>(min(x, 1, false)), x.argmax(1), argmax(x).unsqueeze(0), x.cumsum(1).argmax(1)});
}

// A random permutation of 0..n-1 in the default dtype (int64) and in int32.
Tensor permutations(int64_t n) {
  Tensor a = randperm(n);
  Tensor b = randperm(n, dtype(kInt));
  return cat({a, b.to(kLong)});
}

// x * x through parallel_for with `grain`.
Tensor squares(const Tensor& x, int64_t grain) {
  Tensor out = zeros({x.numel()}, dtype(kDouble));
  const double* in = x.const_data_ptr<double>();
  double* o = out.mutable_data_ptr<double>();
  OPDISPATCH_CHECK(!in_parallel_region());
  parallel_for(0, x.numel(), grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      o[i] = in[i] * in[i];
    }
  });
  return out;
}

// 2 * x for float, double and float16 (scalar_t Half computing in float), in x's dtype.
Tensor doubled(const Tensor& x) {
  Tensor in = x.contiguous();
  Tensor out = empty_like(in);
  OPDISPATCH_DISPATCH_FLOATING_TYPES_AND_HALF(in.scalar_type(), "doubled", [&] {
    const scalar_t* src = in.const_data_ptr<scalar_t>();
    scalar_t* dst = out.mutable_data_ptr<scalar_t>();
    for (int64_t i = 0; i < in.numel(); ++i) {
      dst[i] = src[i] * 2.0f;
    }
  });
  return out;
}

// The sum of x's elements as float64, for the integral and floating types and Half and Bool.
Tensor total(const Tensor& x) {
  Tensor in = x.contiguous();
  double sum = OPDISPATCH_DISPATCH_ALL_TYPES_AND2(kHalf, ScalarType::Bool, in.scalar_type(), "total", [&] {
    double acc = 0;
    const scalar_t* src = in.const_data_ptr<scalar_t>();
    for (int64_t i = 0; i < in.numel(); ++i) {
      acc += static_cast<double>(src[i]);
    }
    return acc;
  });
  return full({}, sum, dtype(kDouble));
}

// torch_cluster's fps names: x[i], pow_ / pow, ceil, and min / max of two tensors (methods and functions).
Tensor row_ops(const Tensor& x) {
  Tensor r = x[1].clone();
  OPDISPATCH_CHECK(r.pow_(2).is_same(r));
  Tensor c = r.ceil();
  return cat({min(c, x[0]), c.max(x[-1]), x[0].pow(x[2]), pow(x[0], 2), ceil(x[-1])});
}

// i * i for i < n, through from_blob over a vector (options: int64) and clone, as torch_cluster's sampler returns.
Tensor blob_squares(int64_t n) {
  std::vector<int64_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    values[static_cast<size_t>(i)] = i * i;
  }
  return from_blob(values.data(), {n}, dtype(kLong)).clone();
}

// A factory asked for kBFloat16, which names no opdispatch dtype.
Tensor bfloat16_zeros(int64_t n) { return zeros({n}, dtype(kBFloat16)); }

OPDISPATCH_LIBRARY(tapi, m) {
  m.def("bfloat16_zeros(int n) -> Tensor");
  m.def("row_ops(Tensor x) -> Tensor");
  m.def("blob_squares(int n) -> Tensor");
  m.def("voxel_index(Tensor pos, Tensor size) -> Tensor");
  m.def("divide_modes(Tensor x, Tensor y) -> Tensor");
  m.def("extreme_indices(Tensor x) -> Tensor");
  m.def("permutations(int n) -> Tensor");
  m.def("squares(Tensor x, int grain) -> Tensor");
  m.def("doubled(Tensor x) -> Tensor");
  m.def("total(Tensor x) -> Tensor");
  m.def("affine_colsum(Tensor x) -> Tensor");
  m.def("head_as_double(Tensor x, int n) -> Tensor");
  m.def("checked_mm(Tensor x, Tensor w) -> Tensor");
  m.def("describe(Tensor x) -> Tensor");
}

// An operator registered at CatchAll, C++'s older name of CompositeImplicitAutograd.
OPDISPATCH_LIBRARY_FRAGMENT(tapi, m) { m.def("catchall_double(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_IMPL(tapi, CatchAll, m) {
  m.impl("catchall_double", [](const Tensor& x) { return x * 2.0; });
}

OPDISPATCH_LIBRARY_IMPL(tapi, CompositeImplicitAutograd, m) {
  m.impl("affine_colsum", affine_colsum);
  m.impl("head_as_double", head_as_double);
  m.impl("checked_mm", checked_mm);
  m.impl("describe", describe_op);
  m.impl("voxel_index", voxel_index);
  m.impl("divide_modes", divide_modes);
  m.impl("extreme_indices", extreme_indices);
  m.impl("permutations", permutations);
  m.impl("squares", squares);
  m.impl("doubled", doubled);
  m.impl("total", total);
  m.impl("row_ops", row_ops);
  m.impl("blob_squares", blob_squares);
  m.impl("bfloat16_zeros", bfloat16_zeros);
}
"""


@pytest.fixture(scope="module")
def tapi(tmp_path_factory):
    source = tmp_path_factory.mktemp("tapi") / "tapi.cpp"
    source.write_text(SOURCE)
    cpp_extension.load("tapi", [source])
    return opdispatch.ops.tapi


def test_methods_operators_and_factories_compute_as_numpy(tapi):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = tapi.affine_colsum(opdispatch.from_numpy(x))
    np.testing.assert_allclose(out.numpy(), (x.T * 2 + 1 - x.T).sum(0))
    assert out.dtype == opdispatch.float32
    head = tapi.head_as_double(opdispatch.from_numpy(np.arange(12, dtype=np.float32).reshape(4, 3)), 2)
    assert head.dtype == opdispatch.float64
    np.testing.assert_array_equal(head.numpy(), np.arange(6).reshape(2, 3))


class Record(TorchDispatchMode):
    """Records the name of each operator call it sees in ``seen``."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def test_methods_are_dispatcher_calls_a_mode_sees(tapi):
    # contiguous() of a transposed tensor shows as od.clone: od::contiguous decomposes into it, as in PyTorch.
    # An input that requires grad: the CompositeImplicitAutograd kernel then runs at the autograd key, above the
    # Python key, so its calls reach the mode (on plain tensors it runs below the mode, which sees tapi's call).
    with Record() as mode:
        tapi.affine_colsum(opdispatch.ones(2, 3, requires_grad=True))
    for name in ("od.transpose.int", "od.clone.default", "od.mul.Scalar", "od.add.Scalar", "od.sub.Tensor",
                 "od.zeros.default", "od.sum.dim_IntList", "od.copy_.default"):  # += records copy_ under autograd
        assert name in mode.seen, (name, mode.seen)


def test_gradients_flow_through_the_methods(tapi):
    x = opdispatch.ones(2, 3, requires_grad=True)
    tapi.affine_colsum(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 3)))  # d/dx (2x + 1 - x) = 1


def test_tensor_utils_and_check_messages_are_atens(tapi):
    with pytest.raises(RuntimeError, match=r"Expected 2-dimensional tensor, but got 1-dimensional tensor for "
                                           r"argument #1 'x' \(while checking arguments for affine_colsum\)"):
        tapi.affine_colsum(opdispatch.ones(3))
    with pytest.raises(RuntimeError, match=r"Check failed: n <= x.size\(0\) \(5 vs. 4\). asked for more rows"):
        tapi.head_as_double(opdispatch.ones(4, 3), 5)
    with pytest.raises(RuntimeError, match=r"Expected tensor for argument #1 'x' to have the same type as tensor for "
                                           r"argument #2 'w'; but type opdispatch.FloatTensor does not equal "
                                           r"opdispatch.DoubleTensor \(while checking arguments for checked_mm\)$"):
        tapi.checked_mm(opdispatch.ones(2, 2), opdispatch.ones(2, 2, dtype=opdispatch.float64))
    # PyTorch 2.13 names the eight types with a legacy tensor class by it (torch.HalfTensor, under the name map
    # opdispatch.HalfTensor) and the others by ATen's C++ name (CPUBoolType, CPUComplexFloatType).
    with pytest.raises(RuntimeError, match=r"but type opdispatch.HalfTensor does not equal CPUBoolType \(while"):
        tapi.checked_mm(opdispatch.ones(2, 2, dtype=opdispatch.float16), opdispatch.ones(2, 2, dtype=opdispatch.bool))
    with pytest.raises(RuntimeError, match=r"but type opdispatch.DoubleTensor does not equal CPUComplexFloatType"):
        tapi.checked_mm(opdispatch.ones(2, 2, dtype=opdispatch.float64),
                        opdispatch.ones(2, 2, dtype=opdispatch.complex64))
    with pytest.raises(RuntimeError, match=r"Expected contiguous tensor, but got non-contiguous tensor for "
                                           r"argument #1 'x'"):
        tapi.checked_mm(opdispatch.ones(3, 2).t(), opdispatch.ones(3, 2))


def test_metadata_and_options(tapi):
    with pytest.raises(RuntimeError) as e:
        tapi.describe(opdispatch.ones(2, 5, dtype=opdispatch.float64))
    assert str(e.value).startswith(
        "2 1 TensorOptions(dtype=float64, device=cpu, layout=Strided, requires_grad=false) [2, 5]")


def test_catchall_registers_at_composite_implicit_autograd(tapi):
    # PyTorch 2.13 (TORCH_LIBRARY_IMPL(ns, CatchAll, m)): the dump names the kernel
    # "CompositeImplicitAutograd[alias]", and it runs for CPU and under autograd.
    dump = opdispatch._C._dispatch_dump("tapi::catchall_double")
    assert "CompositeImplicitAutograd[alias]: registered at " in dump
    assert "CatchAll" not in dump
    x = opdispatch.ones(3, requires_grad=True)
    out = tapi.catchall_double(x)
    np.testing.assert_array_equal(out.detach().numpy(), [2.0, 2.0, 2.0])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0, 2.0])


# --- min/max with a dim, div with a rounding mode, cumprod, cat, argmax, randperm, parallel_for, the _AND dispatch
# forms. Expected values: the same C++ functions built against PyTorch 2.13 (AT_/TORCH_ names, at::) and run there.

def test_voxel_index_as_torch_clusters_grid(tapi):
    pos = np.array([[0.5, 1.0], [2.7, 0.2], [4.0, 3.9], [1.1, 2.2], [3.3, 0.0]], np.float32)
    out = tapi.voxel_index(opdispatch.from_numpy(pos), opdispatch.tensor([1.5, 2.0]))
    assert out.dtype == opdispatch.int64
    assert out.tolist() == [0, 1, 5, 3, 1]  # PyTorch 2.13


def test_div_rounding_modes(tapi):
    x, y = opdispatch.tensor([7.0, -7.0, 5.5, -0.5]), opdispatch.tensor([2.0, 2.0, -2.0, 3.0])
    np.testing.assert_allclose(tapi.divide_modes(x, y).numpy(), [  # PyTorch 2.13
        [3.0, -4.0, -3.0, -1.0], [3.0, -3.0, -2.0, -0.0], [3.5, -3.5, -2.75, -0.1666666716337204],
        [3.0, -4.0, 2.0, -1.0]], rtol=1e-7)


def test_max_min_argmax_and_cumsum_indices(tapi):
    m = opdispatch.tensor([[1.0, 5.0, 5.0, 2.0], [3.0, 3.0, -1.0, 4.0], [0.0, -2.0, 0.0, -2.0]])
    assert tapi.extreme_indices(m).tolist() == [1, 3, 0, 0, 2, 1, 1, 3, 0, 1, 3, 3, 0]  # PyTorch 2.13


def test_randperm_gives_permutations_in_the_options_dtype(tapi):
    p = tapi.permutations(6)
    assert p.dtype == opdispatch.int64
    assert sorted(p.tolist()[:6]) == list(range(6)) and sorted(p.tolist()[6:]) == list(range(6))


@pytest.mark.parametrize("grain", [0, 1, 4, 100])
def test_parallel_for_covers_the_range(tapi, grain):
    x = opdispatch.from_numpy(np.arange(5, dtype=np.float64))
    assert tapi.squares(x, grain).tolist() == [0.0, 1.0, 4.0, 9.0, 16.0]
    assert tapi.squares(opdispatch.zeros(0, dtype=opdispatch.float64), grain).tolist() == []


def test_floating_types_and_half(tapi):
    h = opdispatch.from_numpy(np.array([0.5, 1.5, 65504.0, 1e-7, -3.25], np.float16))
    out = tapi.doubled(h)
    assert out.dtype == opdispatch.float16
    assert out.tolist() == [1.0, 3.0, float("inf"), 2.384185791015625e-07, -6.5]  # PyTorch 2.13 (Half via float)
    assert tapi.doubled(opdispatch.tensor([1.25, -2.0])).tolist() == [2.5, -4.0]
    with pytest.raises(NotImplementedError, match="^\"doubled\" not implemented for 'Long'$"):
        tapi.doubled(opdispatch.tensor([1, 2]))


@pytest.mark.parametrize("values, dtype, expected", [  # PyTorch 2.13
    ([1, 2, 3], np.int16, 6.0), ([True, False, True], np.bool_, 2.0),
    ([0.5, 1.5, 65504.0, 1e-7, -3.25], np.float16, 65502.75000011921), ([0.5, 0.25], np.float64, 0.75)])
def test_all_types_and2(tapi, values, dtype, expected):
    assert tapi.total(opdispatch.from_numpy(np.array(values, dtype))).item() == expected


def test_all_types_and2_refuses_the_others(tapi):
    with pytest.raises(NotImplementedError, match="^\"total\" not implemented for 'ComplexFloat'$"):
        tapi.total(opdispatch.from_numpy(np.array([1j], np.complex64)))


def test_the_new_methods_are_dispatcher_calls(tapi):
    pos = opdispatch.ones(3, 2, requires_grad=True)
    with Record() as mode:
        tapi.voxel_index(pos, opdispatch.tensor([1.5, 2.0]))
        tapi.extreme_indices(opdispatch.ones(2, 2, requires_grad=True))
    for name in ("od.min.dim", "od.max.dim", "od.div.Tensor_mode", "od.cumprod.default", "od.cat.default",
                 "od.div.Tensor", "od._to_copy.default", "od.argmax.default", "od.cumsum.default"):
        assert name in mode.seen, (name, mode.seen)


# --- x[i], pow_ / pow, ceil, min / max of two tensors, from_blob with options (torch_cluster's fps and sampler)

def test_index_pow_ceil_and_two_tensor_min_max(tapi):
    x = opdispatch.tensor([[1.5, -2.0, 0.3], [1.2, -0.7, 2.0], [2.0, 0.5, 3.0]])
    expected = [1.5, -2.0, 0.30000001192092896, 2.0, 1.0, 4.0, 2.25, float("nan"), 0.027000002562999725, 2.25, 4.0,
                0.09000000357627869, 2.0, 1.0, 3.0]  # PyTorch 2.13, the same calls in Python
    # (0.3 ** 3 in float32: NumPy's power and PyTorch's differ in the last place)
    np.testing.assert_allclose(tapi.row_ops(x).numpy(), np.array(expected, np.float32), rtol=1e-6)
    with Record() as mode:
        tapi.row_ops(x.requires_grad_())
    for name in ("od.select.int", "od.pow.Tensor_Scalar", "od.pow.Tensor_Tensor", "od.ceil.default",
                 "od.minimum.default", "od.maximum.default"):
        assert name in mode.seen, (name, mode.seen)


def test_from_blob_with_options(tapi):
    out = tapi.blob_squares(5)
    assert out.dtype == opdispatch.int64 and out.tolist() == [0, 1, 4, 9, 16]


def test_kbfloat16_compiles_and_says_at_use_that_there_are_no_bfloat16_tensors(tapi):
    # PyTorch 2.13 returns bfloat16 zeros; opdispatch has no bfloat16 dtype (README, differences).
    with pytest.raises(ValueError, match=r"^od::zeros\(\): argument 'dtype' \(position 2\): opdispatch has no "
                                         r"bfloat16 tensors \(NumPy has no bfloat16\)"):
        tapi.bfloat16_zeros(2)
