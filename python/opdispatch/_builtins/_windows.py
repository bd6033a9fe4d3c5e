"""Sliding windows over the spatial dimensions of ``(N, C, *spatial)`` arrays,
shared by convolution, pooling and col2im: expansion of their ``int[k]``
arguments, output sizes, and padded window views (im2col without copying)."""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

_window_view = np.lib.stride_tricks.sliding_window_view


def expand_param(op: str, name: str, value: Sequence[int], k: int) -> tuple[int, ...]:
    """``value`` as ``k`` integers: one value repeated, or ``k`` values.
    RuntimeError naming ``op`` and ``name`` otherwise. PyTorch:
    expand_param_if_needed (ConvUtils.h) and the pooling ops' int[k] checks."""
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * k
    if len(values) != k:
        raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of {k} values to match "
                           f"the {k} spatial dimensions, but got {name}={list(values)}")
    return values


def pooling_out_size(size: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool) -> int:
    """The number of windows along one dimension (0 or less when none fits).
    With ``ceil_mode`` a last partial window counts unless it would start
    inside the right padding. PyTorch: pooling_output_shape (Pool.h)."""
    numerator = size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def check_output_size(op: str, channels_and_size: Sequence[int], out: Sequence[int]) -> None:
    """RuntimeError naming ``op`` when a pooling's output would be empty. PyTorch: pool2d_shape_check."""
    if min(out) < 1:
        given = "x".join(map(str, channels_and_size))
        calculated = "x".join(map(str, [channels_and_size[0], *out]))
        raise RuntimeError(f"{op}: Given input size: ({given}). Calculated output size: ({calculated}). Output size "
                           f"is too small")


def check_pooling(op: str, kernel: Sequence[int], stride: Sequence[int], pad: Sequence[int],
                  dilation: Sequence[int]) -> None:
    """RuntimeError naming ``op`` unless kernel, stride and dilation are
    positive and each pad is at most half its kernel. PyTorch: pool2d_shape_check."""
    if min(kernel) <= 0:
        raise RuntimeError(f"{op}: kernel size should be greater than zero, but got kernel_size={list(kernel)}")
    if min(stride) <= 0:
        raise RuntimeError(f"{op}: stride should be greater than zero, but got stride={list(stride)}")
    if min(dilation) <= 0:
        raise RuntimeError(f"{op}: dilation should be greater than zero, but got dilation={list(dilation)}")
    if any(p < 0 or p > k // 2 for p, k in zip(pad, kernel)):
        raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, but got pad={list(pad)}, "
                           f"kernel_size={list(kernel)} and dilation={list(dilation)}")


def padded(a: np.ndarray, lo: Sequence[int], hi: Sequence[int], value: Any = 0) -> np.ndarray:
    """``a`` with its trailing ``len(lo)`` dimensions padded by ``lo`` before
    and ``hi`` after with ``value``; a negative pad crops instead."""
    k = len(lo)
    lead = a.ndim - k
    crop = tuple([slice(None)] * lead + [slice(max(-low, 0), a.shape[lead + i] - max(-high, 0))
                                         for i, (low, high) in enumerate(zip(lo, hi))])
    a = a[crop]
    widths = [(0, 0)] * lead + [(max(low, 0), max(high, 0)) for low, high in zip(lo, hi)]
    if any(w != (0, 0) for w in widths):
        a = np.pad(a, widths, constant_values=value)
    return a


def windows(a: np.ndarray, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
            out: Sequence[int]) -> np.ndarray:
    """A read-only view ``(..., *out, *kernel)`` of the windows of the
    (already padded) trailing ``len(kernel)`` dimensions of ``a``: window
    ``o`` along a dimension starts at ``o * stride`` and takes every
    ``dilation``-th element. ``out``: the number of windows per dimension
    (at most as many as fit)."""
    k = len(kernel)
    lead = a.ndim - k
    spans = [d * (kk - 1) + 1 for kk, d in zip(kernel, dilation)]
    # The input needs (out-1)*stride + span elements; more are cut off, a ceil_mode shortfall is the caller's padding.
    a = a[tuple([slice(None)] * lead + [slice(0, (o - 1) * s + sp) for o, s, sp in zip(out, stride, spans)])]
    view = _window_view(a, spans, axis=tuple(range(lead, a.ndim)))
    index = tuple([slice(None)] * lead + [slice(None, None, s) for s in stride] + [slice(None, None, d)
                                                                                   for d in dilation])
    strided: np.ndarray = view[index]
    return strided


@dataclasses.dataclass(frozen=True)
class PoolParams:
    """A pooling's arguments expanded to ``k`` spatial dimensions, with the
    number of windows per dimension (``out``)."""

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    ceil_mode: bool
    out: tuple[int, ...]

    def pads(self, size: Sequence[int]) -> tuple[list[int], list[int]]:
        """The padding before and after each dimension of ``size`` that the
        windows need: ``padding``, and after it as much more as a ceil_mode
        window reaches past the end."""
        lo = list(self.padding)
        hi = [max((o - 1) * s + d * (k - 1) + 1 - i - p, 0) for o, s, d, k, i, p in
              zip(self.out, self.stride, self.dilation, self.kernel, size, self.padding)]
        return lo, hi


def check_pool_input(op: str, input: Any, k: int) -> None:
    """RuntimeError naming ``op`` unless ``input`` is (C, *spatial) or (N, C,
    *spatial) with non-empty C and spatial dimensions. PyTorch: pool2d_shape_check."""
    if input.ndim not in (k + 1, k + 2) or 0 in tuple(input.shape)[-(k + 1):]:
        raise RuntimeError(f"{op}: non-empty {k + 1}D or {k + 2}D (batch mode) tensor expected for input, got "
                           f"{list(input.shape)}")


def pool_params(op: str, input: Any, k: int, kernel_size: Sequence[int], stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool) -> PoolParams:
    """Checks a pooling's arguments as PyTorch does (an empty ``stride`` is
    the kernel size) and computes its output size; RuntimeError naming ``op``
    otherwise. PyTorch: max_pool2d_with_indices's meta function, pool2d_shape_check."""
    check_pool_input(op, input, k)
    kernel = expand_param(op, "kernel_size", kernel_size, k)
    strides = expand_param(op, "stride", stride, k) if len(stride) else kernel
    pads = expand_param(op, "padding", padding, k)
    dilations = expand_param(op, "dilation", dilation, k)
    check_pooling(op, kernel, strides, pads, dilations)
    size = tuple(input.shape)[-k:]
    out = tuple(pooling_out_size(i, kk, s, p, d, ceil_mode) for i, kk, s, p, d in
                zip(size, kernel, strides, pads, dilations))
    check_output_size(op, tuple(input.shape)[-(k + 1):], out)
    return PoolParams(kernel, strides, pads, dilations, bool(ceil_mode), out)
