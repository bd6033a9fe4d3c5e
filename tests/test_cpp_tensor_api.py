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

OPDISPATCH_LIBRARY(tapi, m) {
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


def test_methods_are_dispatcher_calls_a_mode_sees(tapi):
    seen = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    # contiguous() of a transposed tensor shows as od.clone: od::contiguous decomposes into it, as in PyTorch.
    # An input that requires grad: the CompositeImplicitAutograd kernel then runs at the autograd key, above the
    # Python key, so its calls reach the mode (on plain tensors it runs below the mode, which sees tapi's call).
    with Record():
        tapi.affine_colsum(opdispatch.ones(2, 3, requires_grad=True))
    for name in ("od.transpose.int", "od.clone.default", "od.mul.Scalar", "od.add.Scalar", "od.sub.Tensor",
                 "od.zeros.default", "od.sum.dim_IntList", "od.copy_.default"):  # += records copy_ under autograd
        assert name in seen, (name, seen)


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
                                           r"argument #2 'w'; but type CPUFloatType does not equal CPUDoubleType"):
        tapi.checked_mm(opdispatch.ones(2, 2), opdispatch.ones(2, 2, dtype=opdispatch.float64))
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
