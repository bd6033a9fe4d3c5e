"""torchaudio's IIR/FIR operators (pytorch/audio, src/libtorchaudio/lfilter.cpp),
ported with the name map: an operator defined from a C++ function (schema
inferred, `Tensor&` written in place), a DEF library plus a FRAGMENT of the
same namespace in one file, CompositeImplicitAutograd kernels; built against
the installed headers, called from Python and checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

from opdispatch import _C, ops

from _cpp_ports import build, t


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("torchaudio", ["lfilter.cpp"])


def iir_reference(x: np.ndarray, a: np.ndarray) -> np.ndarray:
    """y[n] = x[n] - sum_{k>=1} a[k] y[n-k], per channel (a[0] == 1)."""
    y = np.zeros_like(x)
    for n in range(x.shape[-1]):
        acc = x[..., n].copy()
        for k in range(1, a.shape[1]):
            if n - k >= 0:
                acc -= a[:, k] * y[..., n - k]
        y[..., n] = acc
    return y


def fir_reference(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    y = np.zeros_like(x)
    for c in range(x.shape[1]):
        for batch in range(x.shape[0]):
            y[batch, c] = np.convolve(x[batch, c], b[c])[: x.shape[-1]]
    return y


def signal(dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, 16)).astype(dtype)
    a = np.concatenate([np.ones((3, 1)), rng.uniform(-0.4, 0.4, (3, 2))], axis=1).astype(dtype)
    return x, a


def test_schema_is_inferred_from_the_cpp_function():
    assert str(ops.torchaudio._lfilter_core_loop.default._schema) == \
        "torchaudio::_lfilter_core_loop(Tensor _0, Tensor _1, Tensor _2) -> ()"
    assert _C._dispatch_has_kernel_for_dispatch_key("torchaudio::_lfilter_core_loop", "CompositeImplicitAutograd")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_core_loop_writes_into_the_callers_padded_output(dtype):
    x, a = signal(dtype)
    padded = np.zeros((2, 3, 16 + 2), dtype)
    out = t(padded)
    assert ops.torchaudio._lfilter_core_loop(t(x), t(a[:, ::-1]), out) is None
    # The kernel's `Tensor& padded_output_waveform` is the caller's tensor.
    np.testing.assert_allclose(padded[..., 2:], iir_reference(x, a), rtol=1e-5, atol=1e-6)
    assert out._version == 0  # the inferred schema declares no mutation, as in PyTorch


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_differentiable_iir_and_fir_match_the_references(dtype):
    x, a = signal(dtype, seed=1)
    y = ops.torchaudio._differentiable_iir_apply(t(x), t(a))
    assert y.shape == x.shape and y.stride() == (3 * 18, 18, 1)  # a view into the padded output
    np.testing.assert_allclose(y.numpy(), iir_reference(x, a), rtol=1e-5, atol=1e-6)
    b = np.random.default_rng(2).standard_normal((3, 4)).astype(dtype)
    np.testing.assert_allclose(ops.torchaudio._differentiable_fir_apply(t(x), t(b)).numpy(), fir_reference(x, b),
                               rtol=1e-5, atol=1e-6)


def test_core_loop_checks_its_arguments_before_writing():
    x, a = signal(np.float32)
    padded = np.zeros((2, 3, 17), np.float32)
    with pytest.raises(RuntimeError):
        ops.torchaudio._lfilter_core_loop(t(x), t(a), t(padded))  # one sample short
    assert not padded.any()


def test_lfilter_is_defined_without_a_kernel_in_this_file():
    x, a = signal(np.float32)
    with pytest.raises(NotImplementedError, match="torchaudio::_lfilter"):
        ops.torchaudio._lfilter(t(x), t(a), t(a))
