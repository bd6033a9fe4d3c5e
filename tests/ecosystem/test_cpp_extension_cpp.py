"""The official custom C++ operator tutorial (pytorch/extension-cpp,
extension_cpp/csrc/muladd.cpp), ported with the name map: built against the
installed headers and called from Python."""
from __future__ import annotations

import numpy as np
import pytest

import opdispatch
from opdispatch import ops

from _cpp_ports import build


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("extension_cpp", ["muladd.cpp"])


def rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_mymuladd_and_mymul_match_numpy():
    a, b = rand(3, 4), rand(3, 4, seed=1)
    out = ops.extension_cpp.mymuladd(opdispatch.from_numpy(a), opdispatch.from_numpy(b), 2.5)
    np.testing.assert_allclose(out.numpy(), a * b + 2.5, rtol=1e-6)
    np.testing.assert_allclose(ops.extension_cpp.mymul(opdispatch.from_numpy(a), opdispatch.from_numpy(b)).numpy(),
                               a * b, rtol=1e-6)


def test_schemas_are_upstreams():
    assert str(ops.extension_cpp.myadd_out.default._schema) == \
        "extension_cpp::myadd_out(Tensor a, Tensor b, Tensor(a!) out) -> ()"
    assert str(ops.extension_cpp.mymuladd.default._schema) == \
        "extension_cpp::mymuladd(Tensor a, Tensor b, float c) -> Tensor"


def test_myadd_out_writes_into_the_callers_tensor():
    a, b = rand(5), rand(5, seed=1)
    backing = np.zeros(5, dtype=np.float32)
    out = opdispatch.from_numpy(backing)
    version = out._version
    assert ops.extension_cpp.myadd_out(opdispatch.from_numpy(a), opdispatch.from_numpy(b), out) is None
    # The kernel's `Tensor& out` is the caller's tensor: the NumPy array under it changed.
    np.testing.assert_allclose(backing, a + b, rtol=1e-6)
    assert out._version == version + 1  # Tensor(a!): the dispatcher bumps it
    ops.extension_cpp.myadd_out.default(opdispatch.from_numpy(a), opdispatch.from_numpy(a), out=out)
    np.testing.assert_allclose(backing, 2 * a, rtol=1e-6)


def test_kernel_checks_raise_runtime_errors_and_leave_out_unchanged():
    out = opdispatch.from_numpy(np.zeros(4, dtype=np.float32))
    with pytest.raises(RuntimeError):
        ops.extension_cpp.myadd_out(opdispatch.from_numpy(rand(5)), opdispatch.from_numpy(rand(5)), out)
    assert out.numpy().tolist() == [0.0] * 4
    with pytest.raises(RuntimeError):
        ops.extension_cpp.mymul(opdispatch.from_numpy(rand(2).astype(np.float64)), opdispatch.from_numpy(rand(2)))


def test_kernels_are_registered_at_cpu_only():
    from opdispatch import _C
    for name in ["mymuladd", "mymul", "myadd_out"]:
        assert _C._dispatch_has_kernel_for_dispatch_key(f"extension_cpp::{name}", "CPU")
        assert not _C._dispatch_has_kernel_for_dispatch_key(f"extension_cpp::{name}", "CompositeImplicitAutograd")
    with pytest.raises(NotImplementedError, match="extension_cpp::mymul"):
        ops.extension_cpp.mymul(opdispatch.empty((2,), device="meta"), opdispatch.empty((2,), device="meta"))
