"""Upsampling of (N, C, H, W) images: upsample_nearest2d and
upsample_bilinear2d with their gradient operators, and the Core ATen
overloads upsample_nearest2d.vec / upsample_bilinear2d.vec (output size or
scale factors) as their CompositeImplicitAutograd decompositions, as PyTorch
splits them. Both interpolations are separable: one (out, in) matrix per
dimension, applied with tensordot (and transposed for the gradient), with
PyTorch's source-index arithmetic (UpSample.h)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from ._numpy import call_numpy, meta_like, opmath
from ._registry import CORE, PT2, Op, defop


def _compute_scale(n_in: int, n_out: int, scale: Optional[float], dtype: type) -> Any:
    """in/out, or 1/scale when a positive scale factor was given. PyTorch: compute_scales_value."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(n_in) / dtype(n_out)


def _nearest(n_in: int, n_out: int, scale: Optional[float], dtype: np.dtype) -> np.ndarray:
    """(n_out, n_in) selection: output o copies input min(floor(o * in/out), in - 1),
    with float32 arithmetic as PyTorch's nearest_idx (exact for equal and doubled sizes)."""
    o = np.arange(n_out)
    if n_out == n_in:
        source = o
    elif n_out == 2 * n_in:
        source = o >> 1
    else:
        ratio = _compute_scale(n_in, n_out, scale, np.float32)
        source = np.minimum(np.floor(o.astype(np.float32) * ratio).astype(np.int64), n_in - 1)
    matrix = np.zeros((n_out, n_in), dtype)
    matrix[o, source] = 1
    return matrix


def _bilinear(n_in: int, n_out: int, align_corners: bool, scale: Optional[float], dtype: np.dtype) -> np.ndarray:
    """(n_out, n_in) linear interpolation weights in ``dtype``, the compute
    dtype of the opmath kernels that call it. PyTorch: area_pixel_compute_scale,
    compute_source_index_and_lambda (in the opmath type)."""
    opmath = dtype.type
    o = np.arange(n_out)
    matrix = np.zeros((n_out, n_in), dtype)
    if n_out == n_in:
        matrix[o, o] = 1
        return matrix
    if align_corners:
        ratio = opmath(n_in - 1) / opmath(n_out - 1) if n_out > 1 else opmath(0)
        real = ratio * o.astype(opmath)
    else:
        ratio = _compute_scale(n_in, n_out, scale, opmath)
        real = np.maximum(ratio * (o.astype(opmath) + opmath(0.5)) - opmath(0.5), opmath(0))
    i0 = np.minimum(np.floor(real).astype(np.int64), n_in - 1)
    lambda1 = np.clip(real - i0.astype(opmath), 0, 1)
    i1 = i0 + (i0 < n_in - 1)
    np.add.at(matrix, (o, i0), (1 - lambda1).astype(dtype))
    np.add.at(matrix, (o, i1), lambda1.astype(dtype))
    return matrix


def _interpolated(x: np.ndarray, matrices: Sequence[np.ndarray], transpose: bool) -> np.ndarray:
    """x with its last len(matrices) dimensions mapped by the matrices (or their transposes)."""
    k = len(matrices)
    for d, m in enumerate(matrices):
        axis = x.ndim - k + d
        x = np.moveaxis(np.tensordot(x, m.T if transpose else m, axes=([axis], [1])), -1, axis)
    return x


def _check_sizes(op: str, input_shape: Sequence[int], output_size: Sequence[int]) -> list[int]:
    if len(input_shape) != 4 or 0 in tuple(input_shape)[1:]:
        raise RuntimeError(f"{op}: Non-empty 4D data tensor expected but got a tensor with sizes "
                           f"{list(input_shape)}")
    if len(output_size) != 2 or min(output_size) <= 0:
        raise RuntimeError(f"{op}: expected output_size of 2 positive values, got {list(output_size)}")
    return [*input_shape[:2], *output_size]


def _matrices(mode: str, size: Sequence[int], output_size: Sequence[int], align_corners: bool,
              scales: Sequence[Optional[float]], dtype: np.dtype) -> list[np.ndarray]:
    if mode == "nearest":
        return [_nearest(i, o, s, dtype) for i, o, s in zip(size, output_size, scales)]
    return [_bilinear(i, o, align_corners, s, dtype) for i, o, s in zip(size, output_size, scales)]


@opmath
def _forward_of(x: np.ndarray, mode: str, output_size: Sequence[int], align_corners: bool,
                scales: Sequence[Optional[float]]) -> np.ndarray:
    return _interpolated(x, _matrices(mode, x.shape[2:], output_size, align_corners, scales, x.dtype), False)


@opmath
def _backward_of(go: np.ndarray, mode: str, output_size: Sequence[int], input_size: Sequence[int],
                 align_corners: bool, scales: Sequence[Optional[float]]) -> np.ndarray:
    return _interpolated(go, _matrices(mode, input_size[2:], output_size, align_corners, scales, go.dtype), True)


def _check_floating(op: str, t: Any) -> None:
    if not t.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {t.dtype}")


# --- the operators, by mode -----------------------------------------------------------------------


def _nearest_cpu(self: Any, output_size: Sequence[int], scales_h: Optional[float] = None,
                 scales_w: Optional[float] = None) -> Any:
    _check_sizes("od::upsample_nearest2d", self.shape, output_size)
    _check_floating("od::upsample_nearest2d", self)
    return call_numpy(_forward_of, self, "nearest", list(output_size), False, [scales_h, scales_w])


def _nearest_meta(self: Any, output_size: Sequence[int], scales_h: Optional[float] = None,
                  scales_w: Optional[float] = None) -> Any:
    _check_floating("od::upsample_nearest2d", self)
    return meta_like(_check_sizes("od::upsample_nearest2d", self.shape, output_size), self.dtype)


def _bilinear_cpu(self: Any, output_size: Sequence[int], align_corners: bool, scales_h: Optional[float] = None,
                  scales_w: Optional[float] = None) -> Any:
    _check_sizes("od::upsample_bilinear2d", self.shape, output_size)
    _check_floating("od::upsample_bilinear2d", self)
    return call_numpy(_forward_of, self, "bilinear", list(output_size), align_corners, [scales_h, scales_w])


def _bilinear_meta(self: Any, output_size: Sequence[int], align_corners: bool, scales_h: Optional[float] = None,
                   scales_w: Optional[float] = None) -> Any:
    _check_floating("od::upsample_bilinear2d", self)
    return meta_like(_check_sizes("od::upsample_bilinear2d", self.shape, output_size), self.dtype)


def _check_backward(op: str, grad_output: Any, output_size: Sequence[int], input_size: Sequence[int]) -> None:
    expected = _check_sizes(op, input_size, output_size)
    if list(grad_output.shape) != expected:
        raise RuntimeError(f"{op}: expected grad_output of shape {expected}, got {list(grad_output.shape)}")


def _nearest_backward_cpu(grad_output: Any, output_size: Sequence[int], input_size: Sequence[int],
                          scales_h: Optional[float] = None, scales_w: Optional[float] = None) -> Any:
    _check_backward("od::upsample_nearest2d_backward", grad_output, output_size, input_size)
    return call_numpy(_backward_of, grad_output, "nearest", list(output_size), list(input_size), False,
                      [scales_h, scales_w])


def _nearest_backward_meta(grad_output: Any, output_size: Sequence[int], input_size: Sequence[int],
                           scales_h: Optional[float] = None, scales_w: Optional[float] = None) -> Any:
    _check_backward("od::upsample_nearest2d_backward", grad_output, output_size, input_size)
    return meta_like(input_size, grad_output.dtype)


def _bilinear_backward_cpu(grad_output: Any, output_size: Sequence[int], input_size: Sequence[int],
                           align_corners: bool, scales_h: Optional[float] = None,
                           scales_w: Optional[float] = None) -> Any:
    _check_backward("od::upsample_bilinear2d_backward", grad_output, output_size, input_size)
    return call_numpy(_backward_of, grad_output, "bilinear", list(output_size), list(input_size), align_corners,
                      [scales_h, scales_w])


def _bilinear_backward_meta(grad_output: Any, output_size: Sequence[int], input_size: Sequence[int],
                            align_corners: bool, scales_h: Optional[float] = None,
                            scales_w: Optional[float] = None) -> Any:
    _check_backward("od::upsample_bilinear2d_backward", grad_output, output_size, input_size)
    return meta_like(input_size, grad_output.dtype)


def _save_args(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.input_size = list(inputs[0].shape)
    ctx.args = inputs[1:]


def _nearest_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml upsample_nearest2d."""
    output_size, scales_h, scales_w = ctx.args
    return upsample_nearest2d_backward(grad, output_size, ctx.input_size, scales_h, scales_w), None, None, None


def _bilinear_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml upsample_bilinear2d."""
    output_size, align_corners, scales_h, scales_w = ctx.args
    return (upsample_bilinear2d_backward(grad, output_size, ctx.input_size, align_corners, scales_h, scales_w),
            None, None, None, None)


def _save_backward_args(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.args = inputs[1:]


def _nearest_backward_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """Linear in grad_output. PyTorch: derivatives.yaml upsample_nearest2d_backward."""
    output_size, _, scales_h, scales_w = ctx.args
    return upsample_nearest2d(grad, output_size, scales_h, scales_w), None, None, None, None


def _bilinear_backward_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """Linear in grad_output. PyTorch: derivatives.yaml upsample_bilinear2d_backward."""
    output_size, _, align_corners, scales_h, scales_w = ctx.args
    return upsample_bilinear2d(grad, output_size, align_corners, scales_h, scales_w), None, None, None, None, None


upsample_nearest2d: Op = defop(
    "upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor",
    tags=PT2, cpu=_nearest_cpu, meta=_nearest_meta, backward=_nearest_backward, setup_context=_save_args)
upsample_nearest2d_backward: Op = defop(
    "upsample_nearest2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
    "float? scales_h=None, float? scales_w=None) -> Tensor", tags=PT2, cpu=_nearest_backward_cpu,
    meta=_nearest_backward_meta, backward=_nearest_backward_backward, setup_context=_save_backward_args)
upsample_bilinear2d: Op = defop(
    "upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, "
    "float? scales_w=None) -> Tensor", tags=PT2, cpu=_bilinear_cpu, meta=_bilinear_meta,
    backward=_bilinear_backward, setup_context=_save_args)
upsample_bilinear2d_backward: Op = defop(
    "upsample_bilinear2d_backward(Tensor grad_output, SymInt[2] output_size, SymInt[4] input_size, "
    "bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor", tags=PT2,
    cpu=_bilinear_backward_cpu, meta=_bilinear_backward_meta, backward=_bilinear_backward_backward,
    setup_context=_save_backward_args)


# --- the .vec overloads ----------------------------------------------------------------------------------


def _output_size(op: str, input: Any, output_size: Optional[Sequence[int]],
                 scale_factors: Optional[Sequence[float]]) -> tuple[list[int], list[Optional[float]]]:
    """(output size, scales): the given size, or floor(input size * scale).
    PyTorch: upsample::compute_output_size, get_scale_value."""
    if (output_size is None) == (scale_factors is None):
        raise RuntimeError(f"{op}: Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        return list(output_size), [None, None]
    assert scale_factors is not None
    if len(scale_factors) != 2:
        raise RuntimeError(f"{op}: expected 2 scale factors, got {list(scale_factors)}")
    spatial = list(input.shape[2:]) if input.ndim == 4 else []
    if len(spatial) != 2:
        raise RuntimeError(f"{op}: expected a 4D input, got {list(input.shape)}")
    return [math.floor(n * s) for n, s in zip(spatial, scale_factors)], list(scale_factors)


def _nearest_vec(input: Any, output_size: Optional[Sequence[int]], scale_factors: Optional[Sequence[float]]) -> Any:
    """PyTorch: at::native::upsample_nearest2d (the .vec overload, CompositeImplicitAutograd)."""
    size, (scale_h, scale_w) = _output_size("od::upsample_nearest2d.vec", input, output_size, scale_factors)
    return upsample_nearest2d(input, size, scale_h, scale_w)


def _bilinear_vec(input: Any, output_size: Optional[Sequence[int]], align_corners: bool,
                  scale_factors: Optional[Sequence[float]]) -> Any:
    """PyTorch: at::native::upsample_bilinear2d (the .vec overload, CompositeImplicitAutograd)."""
    size, (scale_h, scale_w) = _output_size("od::upsample_bilinear2d.vec", input, output_size, scale_factors)
    return upsample_bilinear2d(input, size, align_corners, scale_h, scale_w)


upsample_nearest2d_vec: Op = defop(
    "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor", tags=CORE,
    composite=_nearest_vec)
upsample_bilinear2d_vec: Op = defop(
    "upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) "
    "-> Tensor", tags=CORE, composite=_bilinear_vec)
