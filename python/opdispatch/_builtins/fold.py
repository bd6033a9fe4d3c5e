"""Sliding blocks of images: im2col ("unfold": every kernel-sized block of
(N, C, H, W) as a column of (N, C*kH*kW, L)) and the Core ATen operator
col2im ("fold": the columns added back into an image), each the other's
gradient, as PyTorch splits them."""
from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

from ._numpy import call_numpy, meta_like
from ._registry import CORE, PT2, Op, defop
from ._windows import expand_param, padded, windows


def _params(op: str, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
            stride: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """(kernel, dilation, padding, stride) as pairs; RuntimeError naming ``op`` for non-positive sizes."""
    params = tuple(expand_param(op, name, value, 2) for name, value in
                   (("kernel_size", kernel_size), ("dilation", dilation), ("padding", padding), ("stride", stride)))
    kernel, dil, pad, strides = params
    if min(kernel) <= 0 or min(dil) <= 0 or min(strides) <= 0 or min(pad) < 0:
        raise RuntimeError(f"{op}: expected kernel_size, dilation and stride greater than zero and padding not "
                           f"negative, got kernel_size={list(kernel)}, dilation={list(dil)}, padding={list(pad)}, "
                           f"stride={list(strides)}")
    return params


def _blocks(size: Sequence[int], kernel: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
            stride: Sequence[int]) -> list[int]:
    """The number of blocks along each dimension of ``size``."""
    return [(n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride)]


# --- im2col ------------------------------------------------------------------------------------------------


def _check_im2col(self: Any, params: tuple[tuple[int, ...], ...]) -> tuple[list[int], list[int]]:
    op = "od::im2col"
    if self.ndim not in (3, 4) or 0 in tuple(self.shape)[-3:]:
        raise RuntimeError(f"{op}: Expected 3D or 4D (batch mode) tensor with non-zero dimensions for input, got "
                           f"{list(self.shape)}")
    kernel, dilation, padding, stride = params
    blocks = _blocks(self.shape[-2:], kernel, dilation, padding, stride)
    if min(blocks) < 1:
        raise RuntimeError(f"{op}: Given input with spatial size {list(self.shape[-2:])}, kernel_size="
                           f"{list(kernel)}, dilation={list(dilation)}, padding={list(padding)}, calculated shape of "
                           f"the array of sliding blocks as {blocks}, but its components must be at least one.")
    columns = [*self.shape[:-3], self.shape[-3] * math.prod(kernel), math.prod(blocks)]
    return blocks, columns


def _im2col_of(x: np.ndarray, params: tuple[tuple[int, ...], ...], blocks: Sequence[int]) -> np.ndarray:
    kernel, dilation, padding, stride = params
    win = windows(padded(x, padding, padding), kernel, stride, dilation, blocks)  # (..., C, bh, bw, kh, kw)
    lead = win.ndim - 5
    order = (*range(lead), lead, lead + 3, lead + 4, lead + 1, lead + 2)
    cols: np.ndarray = win.transpose(order).reshape(*x.shape[:-3], x.shape[-3] * math.prod(kernel),
                                                    math.prod(blocks))
    return cols


def _im2col_cpu(self: Any, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
                stride: Sequence[int]) -> Any:
    params = _params("od::im2col", kernel_size, dilation, padding, stride)
    blocks, _ = _check_im2col(self, params)
    return call_numpy(_im2col_of, self, params, blocks)


def _im2col_meta(self: Any, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int],
                 stride: Sequence[int]) -> Any:
    _, columns = _check_im2col(self, _params("od::im2col", kernel_size, dilation, padding, stride))
    return meta_like(columns, self.dtype)


# --- col2im ------------------------------------------------------------------------------------------------


def _check_col2im(self: Any, output_size: Sequence[int], params: tuple[tuple[int, ...], ...]
                  ) -> tuple[list[int], list[int]]:
    op = "od::col2im"
    kernel, dilation, padding, stride = params
    if len(output_size) != 2:
        raise RuntimeError(f"{op}: expected output_size of 2 values, got {list(output_size)}")
    if self.ndim not in (2, 3) or 0 in tuple(self.shape)[-2:]:
        raise RuntimeError(f"{op}: Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(self.shape)}")
    blocks = _blocks(output_size, kernel, dilation, padding, stride)
    if self.shape[-2] % math.prod(kernel):
        raise RuntimeError(f"{op}: Expected size of input's dimension 1 to be divisible by the product of "
                           f"kernel_size, but got input.size(1)={self.shape[-2]} and kernel_size={tuple(kernel)}")
    if min(blocks) < 1 or math.prod(blocks) != self.shape[-1]:
        raise RuntimeError(f"{op}: Given output_size={tuple(output_size)}, kernel_size={tuple(kernel)}, "
                           f"dilation={tuple(dilation)}, padding={tuple(padding)}, stride={tuple(stride)}, expected "
                           f"size of input's dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {math.prod(blocks)}, but got input.size(2)={self.shape[-1]}.")
    image = [*self.shape[:-2], self.shape[-2] // math.prod(kernel), *output_size]
    return blocks, image


def _col2im_of(cols: np.ndarray, output_size: Sequence[int], params: tuple[tuple[int, ...], ...],
               blocks: Sequence[int]) -> np.ndarray:
    """Each column's values added to their block's positions: one strided add per kernel offset."""
    kernel, dilation, padding, stride = params
    lead = cols.shape[:-2]
    channels = cols.shape[-2] // math.prod(kernel)
    blocks_view = cols.reshape(*lead, channels, *kernel, *blocks)
    grown = [n + 2 * p for n, p in zip(output_size, padding)]
    image = np.zeros((*lead, channels, *grown), cols.dtype)
    for kh, kw in itertools.product(range(kernel[0]), range(kernel[1])):
        target = tuple(slice(k * d, k * d + s * (b - 1) + 1, s) for k, d, s, b in
                       zip((kh, kw), dilation, stride, blocks))
        image[(Ellipsis,) + target] += blocks_view[..., kh, kw, :, :]
    inside = tuple(slice(p, p + n) for p, n in zip(padding, output_size))
    result: np.ndarray = image[(Ellipsis,) + inside]
    return result


def _col2im_cpu(self: Any, output_size: Sequence[int], kernel_size: Sequence[int], dilation: Sequence[int],
                padding: Sequence[int], stride: Sequence[int]) -> Any:
    params = _params("od::col2im", kernel_size, dilation, padding, stride)
    blocks, _ = _check_col2im(self, output_size, params)
    return call_numpy(_col2im_of, self, list(output_size), params, blocks)


def _col2im_meta(self: Any, output_size: Sequence[int], kernel_size: Sequence[int], dilation: Sequence[int],
                 padding: Sequence[int], stride: Sequence[int]) -> Any:
    _, image = _check_col2im(self, output_size, _params("od::col2im", kernel_size, dilation, padding, stride))
    return meta_like(image, self.dtype)


def _im2col_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, *ctx.args = inputs
    ctx.size = list(self.shape[-2:])


def _im2col_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml im2col (col2im)."""
    return (col2im(grad, ctx.size, *ctx.args), None, None, None, None)


def _col2im_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, _, *ctx.args = inputs


def _col2im_backward(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml col2im (im2col)."""
    return (im2col(grad, *ctx.args), None, None, None, None, None)


im2col: Op = defop("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
                   tags=PT2, cpu=_im2col_cpu, meta=_im2col_meta, backward=_im2col_backward,
                   setup_context=_im2col_setup)
col2im: Op = defop("col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "
                   "int[2] stride) -> Tensor", tags=CORE, cpu=_col2im_cpu, meta=_col2im_meta,
                   backward=_col2im_backward, setup_context=_col2im_setup)
