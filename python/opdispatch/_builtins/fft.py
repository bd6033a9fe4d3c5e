"""Discrete Fourier transforms of real signals: _fft_r2c (real to complex,
optionally one-sided) and _fft_c2r (its inverse, from the one-sided half),
the Core ATen operators torch.fft's rfft/irfft family lowers to, on numpy.fft."""
from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np

from .. import _C
from ._numpy import call_numpy, contiguous_strides, meta_like, wrap_dim
from ._registry import CORE, Op, defop
from . import views
from .._tensor_type import Tensor

#: numpy.fft's ``norm`` for PyTorch's fft_norm_mode (0: no scaling, 1: by 1/sqrt(n), 2: by 1/n) of a forward
#: transform, and of an inverse one (numpy names where the 1/n goes, not the scaling). PyTorch: fft_norm_mode.
_Norm = Literal["backward", "ortho", "forward"]
_FORWARD_NORM: dict[int, _Norm] = {0: "backward", 1: "ortho", 2: "forward"}
_INVERSE_NORM: dict[int, _Norm] = {0: "forward", 1: "ortho", 2: "backward"}

_COMPLEX_OF = {"float32": _C.complex64, "float64": _C.complex128}
_REAL_OF = {"complex64": _C.float32, "complex128": _C.float64}


def _check(op: str, self: Tensor, dim: Sequence[int], normalization: int, types: dict[str, Any]) -> list[int]:
    """dim wrapped (RuntimeError for a repeated or out-of-range dim, an empty
    list, a dtype the transform does not take — PyTorch's message —, or an
    unknown normalization)."""
    if self.dtype.name not in types:
        from .linalg import _TYPE_NAMES  # linalg imports elementwise, which imports indexing, ...

        kind = "floating-point" if types is _COMPLEX_OF else "complex"
        raise RuntimeError(f"{op}: Only supports {kind} dtypes, but found: {_TYPE_NAMES[self.dtype.name][0]}")
    if normalization not in _FORWARD_NORM:
        raise RuntimeError(f"{op}: normalization must be 0 (none), 1 (by 1/sqrt(n)) or 2 (by 1/n), got "
                           f"{normalization}")
    if not dim:
        raise RuntimeError(f"{op}: dim must name at least one dimension")
    dims = [wrap_dim(op, d, self.ndim) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dims must be unique, got {list(dim)}")
    return dims


def _layout(shape: Sequence[int], dims: Sequence[int], input_strides: Sequence[int]) -> tuple[list[int], list[int]]:
    """The dim order (outermost first) and strides of a transform's result:
    the untransformed dims outside, as the input lays them out (largest
    stride first), then the transformed ones in ``dims``' order, the last
    innermost (PyTorch's CPU and meta results have them)."""
    kept = sorted((d for d in range(len(shape)) if d not in dims), key=lambda d: -input_strides[d])
    order = kept + list(dims)
    packed = contiguous_strides([shape[d] for d in order])
    strides = [0] * len(shape)
    for d, stride in zip(order, packed):
        strides[d] = stride
    return order, strides


def _laid_out(make: Any, shape: Sequence[int], dims: Sequence[int], dtype: Any, *tensors: Any) -> Tensor:
    """The tensor ``make`` computes (an array of ``shape``), with _layout's strides."""
    order, strides = _layout(shape, dims, tensors[0].stride())
    packed = call_numpy(lambda *arrays: np.ascontiguousarray(make(*arrays).transpose(order), dtype.to_numpy()),
                        *tensors)
    return _C._as_strided(packed, tuple(shape), tuple(strides), 0)


def _r2c_shape(self: Tensor, dims: Sequence[int], onesided: bool) -> list[int]:
    shape = list(self.shape)
    if onesided:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return shape


def _fft_r2c_cpu(self: Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> Tensor:
    dims = _check("od::_fft_r2c", self, dim, normalization, _COMPLEX_OF)
    norm = _FORWARD_NORM[normalization]

    def transform(a: np.ndarray) -> np.ndarray:
        return np.fft.rfftn(a, axes=dims, norm=norm) if onesided else np.fft.fftn(a, axes=dims, norm=norm)

    return _laid_out(transform, _r2c_shape(self, dims, onesided), dims,
                     _COMPLEX_OF[self.dtype.name], self)


def _fft_r2c_meta(self: Tensor, dim: Sequence[int], normalization: int, onesided: bool) -> Tensor:
    dims = _check("od::_fft_r2c", self, dim, normalization, _COMPLEX_OF)
    shape = _r2c_shape(self, dims, onesided)
    _, strides = _layout(shape, dims, self.stride())
    return _C._as_strided(meta_like(shape, _COMPLEX_OF[self.dtype.name]), tuple(shape), tuple(strides), 0)


def _weights(grad: Tensor, dim: int, values: np.ndarray) -> Tensor:
    """``values`` (one per index of ``grad``'s dim ``dim``) as a tensor that broadcasts against ``grad``."""
    shape = [1] * grad.ndim
    shape[dim] = len(values)
    return call_numpy(lambda: values.reshape(shape).astype(_REAL_OF[grad.dtype.name].to_numpy()))


def _r2c_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, dim, ctx.normalization, ctx.onesided = inputs
    ctx.dims = [wrap_dim("od::_fft_r2c", d, self.ndim) for d in dim]
    ctx.last_dim_size = self.shape[ctx.dims[-1]]


def _r2c_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, None]:
    """The real part of the inverse complex transform of the gradient, padded
    with zeros to the full spectrum (PyTorch: fft_r2c_backward). For the
    one-sided transform that is the inverse real transform of the gradient
    with the bins that stand for two (all but the first and, for an even
    length, the last) halved: it reads them and their mirror images."""
    if not ctx.onesided:
        raise RuntimeError("od::_fft_r2c: the derivative for onesided=False is not implemented in opdispatch "
                           "(it needs _fft_c2c); use onesided=True")
    last, n = ctx.dims[-1], ctx.last_dim_size
    halves = np.full(grad.shape[last], 0.5)
    halves[0] = 1.0
    if n % 2 == 0:
        halves[-1] = 1.0
    from .elementwise import mul  # elementwise imports modules that import this one's neighbours

    return _fft_c2r(mul(grad, _weights(grad, last, halves)), ctx.dims, ctx.normalization, n), None, None, None


_fft_r2c: Op = defop("_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", tags=CORE,
                     cpu=_fft_r2c_cpu, meta=_fft_r2c_meta, backward=_r2c_backward, setup_context=_r2c_setup)


def _c2r_shape(self: Tensor, dims: Sequence[int], last_dim_size: int) -> list[int]:
    if last_dim_size < 1:
        raise RuntimeError(f"od::_fft_c2r: invalid number of data points ({last_dim_size}) specified")
    shape = list(self.shape)
    shape[dims[-1]] = last_dim_size
    return shape


def _fft_c2r_cpu(self: Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> Tensor:
    dims = _check("od::_fft_c2r", self, dim, normalization, _REAL_OF)
    shape = _c2r_shape(self, dims, last_dim_size)
    norm = _INVERSE_NORM[normalization]

    def transform(a: np.ndarray) -> np.ndarray:
        return np.fft.irfftn(a, s=[shape[d] for d in dims], axes=dims, norm=norm)

    return _laid_out(transform, shape, dims, _REAL_OF[self.dtype.name], self)


def _fft_c2r_meta(self: Tensor, dim: Sequence[int], normalization: int, last_dim_size: int) -> Tensor:
    dims = _check("od::_fft_c2r", self, dim, normalization, _REAL_OF)
    shape = _c2r_shape(self, dims, last_dim_size)
    _, strides = _layout(shape, dims, self.stride())
    return _C._as_strided(meta_like(shape, _REAL_OF[self.dtype.name]), tuple(shape), tuple(strides), 0)


def _c2r_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, dim, ctx.normalization, _ = inputs
    ctx.dims = [wrap_dim("od::_fft_c2r", d, self.ndim) for d in dim]
    ctx.half = self.shape[ctx.dims[-1]]


def _c2r_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, None]:
    """The one-sided forward transform of the gradient, the bins that stand
    for two doubled (those past the first whose mirror images the full
    length holds). PyTorch: fft_c2r_backward."""
    from .elementwise import mul  # elementwise imports modules that import this one's neighbours

    last = ctx.dims[-1]
    g = _fft_r2c(grad, ctx.dims, ctx.normalization, True)
    doubled = grad.shape[last] - g.shape[last]
    if doubled > 0:
        twos = np.ones(g.shape[last])
        twos[1:1 + doubled] = 2.0
        g = mul(g, _weights(g, last, twos))
    if g.shape[last] != ctx.half:  # the input had more bins than the output's length reads: they get zeros
        g = _padded(g, last, ctx.half)
    return g, None, None, None


def _padded(g: Tensor, dim: int, size: int) -> Tensor:
    from .padding import constant_pad_nd

    pad = [0, 0] * (g.ndim - 1 - dim) + [0, size - g.shape[dim]]
    return constant_pad_nd(g, pad) if size > g.shape[dim] else views.slice_(g, dim, 0, size)


_fft_c2r: Op = defop("_fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
                     tags=CORE, cpu=_fft_c2r_cpu, meta=_fft_c2r_meta, backward=_c2r_backward,
                     setup_context=_c2r_setup)
