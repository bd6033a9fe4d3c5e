"""Sampling images at grid points: the Core ATen operator grid_sampler_2d
(bilinear or nearest interpolation of (N, C, H, W) at the normalised (x,
y) points of a (N, H_out, W_out, 2) grid, with zeros, border or reflection
padding) and its gradient operator grid_sampler_2d_backward, and
grid_sampler as their CompositeImplicitAutograd front end, as PyTorch
splits them. The coordinate rules are PyTorch's (GridSampler.h)."""
from __future__ import annotations

from typing import Any, Sequence, cast

import numpy as np

from ._numpy import call_numpy, call_numpy_pair, check_device, meta_like
from ._registry import CORE, PT2, Op, PairOp, defop

#: interpolation_mode and padding_mode values (PyTorch: GridSamplerInterpolation, GridSamplerPadding).
BILINEAR, NEAREST, BICUBIC = 0, 1, 2
ZEROS, BORDER, REFLECTION = 0, 1, 2


def _reflect(x: np.ndarray, twice_low: int, twice_high: int) -> tuple[np.ndarray, np.ndarray]:
    """(reflected coordinate, its derivative's sign). PyTorch: reflect_coordinates_set_grad."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    shifted = x - low
    sign = np.where(shifted < 0, -1.0, 1.0)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    flips = np.floor(shifted / span)
    even = np.fmod(flips, 2) == 0
    return np.where(even, extra + low, span - extra + low), np.where(even, sign, -sign)


def _source(coord: np.ndarray, size: int, padding_mode: int, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """(source index as a float, d index / d coord) of normalised coordinates along one dimension.
    PyTorch: grid_sampler_compute_source_index_set_grad."""
    if align_corners:
        index, grad = (coord + 1) / 2 * (size - 1), np.full_like(coord, (size - 1) / 2)
    else:
        index, grad = ((coord + 1) * size - 1) / 2, np.full_like(coord, size / 2)
    if padding_mode == REFLECTION:
        reflected, sign = _reflect(index, 0, 2 * (size - 1)) if align_corners else _reflect(index, -1, 2 * size - 1)
        index, grad = reflected, grad * sign
    if padding_mode in (BORDER, REFLECTION):
        inside = (index > 0) & (index < size - 1)
        index, grad = np.clip(index, 0, size - 1), grad * inside
    return index, grad


def _corners(x: np.ndarray, iy: np.ndarray, ix: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """For each of the four corners around (iy, ix): (values (N, C, Ho, Wo)
    with zeros outside the image, its y index, its x index)."""
    n, _, h, w = x.shape
    y0, x0 = np.floor(iy).astype(np.int64), np.floor(ix).astype(np.int64)
    batch = np.arange(n).reshape(n, 1, 1)
    out = []
    for yy, xx in ((y0, x0), (y0, x0 + 1), (y0 + 1, x0), (y0 + 1, x0 + 1)):
        inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        values = x[batch, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]  # (N, Ho, Wo, C)
        out.append((np.moveaxis(values * inside[..., None], -1, 1), yy, xx))
    return out


def _sample(x: np.ndarray, grid: np.ndarray, mode: int, padding_mode: int, align_corners: bool) -> np.ndarray:
    h, w = x.shape[2:]
    ix, _ = _source(grid[..., 0], w, padding_mode, align_corners)
    iy, _ = _source(grid[..., 1], h, padding_mode, align_corners)
    if mode == NEAREST:
        values: np.ndarray = _corners(x, np.rint(iy), np.rint(ix))[0][0]
        return values.astype(x.dtype, copy=False)
    (nw, _, _), (ne, _, _), (sw, _, _), (se, _, _) = _corners(x, iy, ix)
    fy, fx = (iy - np.floor(iy))[:, None], (ix - np.floor(ix))[:, None]
    out: np.ndarray = nw * (1 - fx) * (1 - fy) + ne * fx * (1 - fy) + sw * (1 - fx) * fy + se * fx * fy
    return out.astype(x.dtype, copy=False)


def _check(op: str, input: Any, grid: Any, mode: int, padding_mode: int) -> list[int]:
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"{op}: expected input (N, C, H, W) and grid (N, H_out, W_out, 2) of the same N, got "
                           f"input {list(input.shape)} and grid {list(grid.shape)}")
    if 0 in tuple(input.shape)[2:]:
        raise RuntimeError(f"{op}: expected input to have non-empty spatial dimensions, but input has sizes "
                           f"{list(input.shape)}")
    if input.dtype != grid.dtype or not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected input and grid of one floating-point dtype, got {input.dtype} and "
                           f"{grid.dtype}")
    if mode == BICUBIC:
        raise NotImplementedError(f"{op}: bicubic interpolation (interpolation_mode=2) is not implemented here; "
                                  f"use bilinear (0) or nearest (1)")
    if mode not in (BILINEAR, NEAREST) or padding_mode not in (ZEROS, BORDER, REFLECTION):
        raise RuntimeError(f"{op}: interpolation_mode must be 0 (bilinear) or 1 (nearest) and padding_mode 0 "
                           f"(zeros), 1 (border) or 2 (reflection), got {mode} and {padding_mode}")
    return [input.shape[0], input.shape[1], grid.shape[1], grid.shape[2]]


def _grid_sampler_cpu(input: Any, grid: Any, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Any:
    _check("od::grid_sampler_2d", input, grid, interpolation_mode, padding_mode)
    return call_numpy(_sample, input, grid, interpolation_mode, padding_mode, align_corners)


def _grid_sampler_meta(input: Any, grid: Any, interpolation_mode: int, padding_mode: int,
                       align_corners: bool) -> Any:
    check_device("od::grid_sampler_2d", input, grid)
    return meta_like(_check("od::grid_sampler_2d", input, grid, interpolation_mode, padding_mode), input.dtype)


def _setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, grid, *ctx.args = inputs
    ctx.save_for_backward(input, grid)


def _formula(ctx: Any, grad: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml grid_sampler_2d."""
    input, grid = ctx.saved_tensors
    mask = [bool(ctx.needs_input_grad[0]), bool(ctx.needs_input_grad[1])]
    g_input, g_grid = grid_sampler_2d_backward(grad, input, grid, *ctx.args, mask)
    return g_input if mask[0] else None, g_grid if mask[1] else None, None, None, None


grid_sampler_2d: Op = defop("grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
                            "bool align_corners) -> Tensor", tags=CORE, cpu=_grid_sampler_cpu,
                            meta=_grid_sampler_meta, backward=_formula, setup_context=_setup)


# --- the gradient operator ----------------------------------------------------------------------------------


def _sample_grads(go: np.ndarray, x: np.ndarray, grid: np.ndarray, mode: int, padding_mode: int,
                  align_corners: bool, mask: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """(grad input: go's share added to each corner it came from, grad grid:
    the interpolation's slope times the coordinates' derivative).
    PyTorch: grid_sampler_2d_backward_cpu_kernel."""
    n, c, h, w = x.shape
    ix, dix = _source(grid[..., 0], w, padding_mode, align_corners)
    iy, diy = _source(grid[..., 1], h, padding_mode, align_corners)
    g_input = np.zeros(x.shape, x.dtype) if mask[0] else np.empty(0, x.dtype)
    g_grid = np.zeros(grid.shape, grid.dtype) if mask[1] else np.empty(0, grid.dtype)
    batch = np.broadcast_to(np.arange(n).reshape(n, 1, 1), iy.shape)
    flat_go = np.moveaxis(go, 1, -1)  # (N, Ho, Wo, C)

    def scatter(weight: np.ndarray, yy: np.ndarray, xx: np.ndarray) -> None:
        inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        view = np.moveaxis(g_input, 1, -1)  # (N, H, W, C), a view: adds land in g_input
        np.add.at(view, (batch[inside], yy[inside], xx[inside]), (flat_go * weight[..., None])[inside])

    if mode == NEAREST:
        if mask[0]:
            ry, rx = np.rint(iy).astype(np.int64), np.rint(ix).astype(np.int64)
            scatter(np.ones_like(iy), ry, rx)
        return g_input, g_grid
    corners = _corners(x, iy, ix)
    fy, fx = iy - np.floor(iy), ix - np.floor(ix)
    weights = ((1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy)
    if mask[0]:
        for weight, (_, yy, xx) in zip(weights, corners):
            scatter(weight, yy, xx)
    if mask[1]:
        (nw, _, _), (ne, _, _), (sw, _, _), (se, _, _) = corners
        gx = ((ne - nw) * (1 - fy)[:, None] + (se - sw) * fy[:, None])
        gy = ((sw - nw) * (1 - fx)[:, None] + (se - ne) * fx[:, None])
        g_grid[..., 0] = (gx * go).sum(axis=1) * dix
        g_grid[..., 1] = (gy * go).sum(axis=1) * diy
    return g_input, g_grid


def _check_backward(grad_output: Any, input: Any, grid: Any, mode: int, padding_mode: int) -> None:
    op = "od::grid_sampler_2d_backward"
    expected = _check(op, input, grid, mode, padding_mode)
    if list(grad_output.shape) != expected:
        raise RuntimeError(f"{op}: expected grad_output of shape {expected}, got {list(grad_output.shape)}")


def _backward_cpu(grad_output: Any, input: Any, grid: Any, interpolation_mode: int, padding_mode: int,
                  align_corners: bool, output_mask: Sequence[bool]) -> tuple[Any, Any]:
    _check_backward(grad_output, input, grid, interpolation_mode, padding_mode)
    return call_numpy_pair(_sample_grads, grad_output, input, grid, interpolation_mode, padding_mode, align_corners,
                           list(output_mask))


def _backward_meta(grad_output: Any, input: Any, grid: Any, interpolation_mode: int, padding_mode: int,
                   align_corners: bool, output_mask: Sequence[bool]) -> tuple[Any, Any]:
    check_device("od::grid_sampler_2d_backward", grad_output, input, grid)
    _check_backward(grad_output, input, grid, interpolation_mode, padding_mode)
    return (meta_like(input.shape if output_mask[0] else (0,), input.dtype),
            meta_like(grid.shape if output_mask[1] else (0,), grid.dtype))


def _not_differentiable(ctx: Any, *grads: Any) -> Any:
    """TODO(#31): PyTorch's grid_sampler_2d_double_backward (derivatives.yaml grid_sampler_2d_backward)."""
    raise RuntimeError("od::grid_sampler_2d_backward: its derivative (a second derivative of grid_sampler_2d; "
                       "PyTorch: grid_sampler_2d_double_backward) is not implemented in opdispatch")


grid_sampler_2d_backward = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    "grid_sampler_2d_backward(Tensor grad_output, Tensor input, Tensor grid, int interpolation_mode, "
    "int padding_mode, bool align_corners, bool[2] output_mask) -> (Tensor, Tensor)", tags=PT2,
    cpu=_backward_cpu, meta=_backward_meta, backward=_not_differentiable))


def _grid_sampler(input: Any, grid: Any, interpolation_mode: int, padding_mode: int, align_corners: bool) -> Any:
    """grid_sampler_2d for 4-d inputs. PyTorch: at::native::grid_sampler (CompositeImplicitAutograd)."""
    if input.ndim != 4:
        raise NotImplementedError(f"od::grid_sampler: only 4-d inputs (grid_sampler_2d) are implemented, got "
                                  f"{input.ndim}-d")
    return grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners)


grid_sampler: Op = defop("grid_sampler(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
                         "bool align_corners) -> Tensor", tags=PT2, composite=_grid_sampler)
