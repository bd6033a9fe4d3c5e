"""Padding: the Core ATen operators constant_pad_nd (any trailing
dimensions, negative pads crop), reflection_pad1d/2d/3d and
replication_pad2d/3d, the gradient operators of the last five, and pad (the
mode-dispatching CompositeImplicitAutograd function), as PyTorch splits them.

Reflection and replication read each output element from one input
element: the kernels build that map once (np.pad of the flat positions of a
plane, mode "reflect" or "edge") and gather with it; the gradients add
back along the same map (np.add.at)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from . import factories
from ._numpy import call_numpy, check_device, meta_like
from ._registry import CORE, PT2, Op, defop
from .._tensor_type import Tensor


def _pairs(pad: Sequence[int]) -> list[tuple[int, int]]:
    """PyTorch's pad list (last dimension first: left, right, top, bottom,
    ...) as (before, after) per padded dimension, first dimension first."""
    values = [int(p) for p in pad]
    return [(values[i], values[i + 1]) for i in range(len(values) - 2, -1, -2)]


def _padded_shape(shape: Sequence[int], pairs: Sequence[tuple[int, int]]) -> list[int]:
    lead = len(shape) - len(pairs)
    return [*shape[:lead], *(s + lo + hi for s, (lo, hi) in zip(shape[lead:], pairs))]


# --- constant_pad_nd -------------------------------------------------------------------------------------------


def _check_constant_pad(self: Tensor, pad: Sequence[int]) -> list[int]:
    op = "od::constant_pad_nd"
    if len(pad) % 2:
        raise RuntimeError(f"{op}: Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > self.ndim:
        raise RuntimeError(f"{op}: Length of pad should be no more than twice the number of dimensions of the input. "
                           f"Pad length is {len(pad)} while the input has {self.ndim} dimensions.")
    shape = _padded_shape(self.shape, _pairs(pad))
    if min(shape, default=0) < 0:
        raise RuntimeError(f"{op}: the input of shape {list(self.shape)} padded by {list(pad)} would have a negative "
                           f"size: {shape}")
    return shape


def _constant_padded(x: np.ndarray, pairs: Sequence[tuple[int, int]], value: Any) -> np.ndarray:
    lead = x.ndim - len(pairs)
    crop = tuple([slice(None)] * lead + [slice(max(-lo, 0), n - max(-hi, 0))
                                         for n, (lo, hi) in zip(x.shape[lead:], pairs)])
    widths = [(0, 0)] * lead + [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    cropped = x[crop]
    if cropped.size == 0 and any(w != (0, 0) for w in widths):  # np.pad refuses to pad an empty array
        shape = [n + lo + hi for n, (lo, hi) in zip(cropped.shape, widths)]
        return np.full(shape, value, x.dtype)
    return np.pad(cropped, widths, constant_values=value)


def _constant_pad_cpu(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    _check_constant_pad(self, pad)
    return call_numpy(_constant_padded, self, _pairs(pad), value)


def _constant_pad_meta(self: Tensor, pad: Sequence[int], value: Any = 0) -> Tensor:
    return meta_like(_check_constant_pad(self, pad), self.dtype)


def _constant_pad_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.pad = list(inputs[1])


def _constant_pad_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    """The gradient is the output's gradient with the padding cut off.
    PyTorch: derivatives.yaml constant_pad_nd (constant_pad_nd_backward)."""
    return constant_pad_nd(grad, [-p for p in ctx.pad]), None, None


constant_pad_nd: Op = defop("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", tags=CORE,
                            cpu=_constant_pad_cpu, meta=_constant_pad_meta, backward=_constant_pad_backward,
                            setup_context=_constant_pad_setup)


# --- reflection and replication -----------------------------------------------------------------------------


def _source_map(size: Sequence[int], pairs: Sequence[tuple[int, int]], mode: str) -> np.ndarray:
    """For each element of the padded (*size) plane, the flat position in
    the input plane it copies (np.pad mode "reflect" or "edge"; a negative
    pad crops)."""
    positions = np.arange(math.prod(size), dtype=np.int64).reshape(size)
    grown = np.pad(positions, [(max(lo, 0), max(hi, 0)) for lo, hi in pairs], mode=mode)  # type: ignore[call-overload]
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi) in zip(grown.shape, pairs))
    source: np.ndarray = grown[crop]
    return source


def _gathered(x: np.ndarray, pairs: Sequence[tuple[int, int]], mode: str) -> np.ndarray:
    k = len(pairs)
    source = _source_map(x.shape[-k:], pairs, mode)
    planes = x.reshape(*x.shape[:-k], math.prod(x.shape[-k:]))
    return planes[..., source.reshape(-1)].reshape(*x.shape[:-k], *source.shape)


def _scattered_back(go: np.ndarray, x: np.ndarray, pairs: Sequence[tuple[int, int]], mode: str) -> np.ndarray:
    k = len(pairs)
    source = _source_map(x.shape[-k:], pairs, mode).reshape(-1)
    planes = int(np.prod(x.shape[:-k]))
    plane = int(np.prod(x.shape[-k:]))
    out = np.zeros(planes * plane, go.dtype)
    rows = np.arange(planes, dtype=np.int64).reshape(-1, 1) * plane
    np.add.at(out, (rows + source).reshape(-1), go.reshape(-1))
    return out.reshape(x.shape)


def _check_pad(op: str, self: Tensor, padding: Sequence[int], k: int, reflect: bool) -> list[int]:
    """The output's shape; RuntimeError with PyTorch's messages for a bad input or padding."""
    if self.ndim not in (k + 1, k + 2) or 0 in tuple(self.shape)[-(k + 1):]:
        raise RuntimeError(f"{op}: Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(self.shape)}")
    if len(padding) != 2 * k:
        raise RuntimeError(f"{op}: padding size is expected to be {2 * k}, but got: {len(padding)}")
    pairs = _pairs(padding)
    for dim, ((lo, hi), n) in enumerate(zip(pairs, tuple(self.shape)[-k:])):
        if reflect and (lo >= n or hi >= n):
            raise RuntimeError(f"{op}: Argument #4: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({lo}, {hi}) at dimension {self.ndim - k + dim} of "
                               f"input {list(self.shape)}")
    shape = _padded_shape(self.shape, pairs)
    if min(shape[-k:]) < 1:
        raise RuntimeError(f"{op}: input (size {list(self.shape)}) padded by {list(padding)} gives an output of "
                           f"size {shape}; it must be at least 1 in every padded dimension")
    return shape


def _pad_kernels(name: str, k: int, mode: str) -> dict[str, Any]:
    op = f"od::{name}"
    reflect = mode == "reflect"

    def cpu(self: Tensor, padding: Sequence[int]) -> Tensor:
        _check_pad(op, self, padding, k, reflect)
        return call_numpy(_gathered, self, _pairs(padding), mode)

    def meta(self: Tensor, padding: Sequence[int]) -> Tensor:
        return meta_like(_check_pad(op, self, padding, k, reflect), self.dtype)

    return {"cpu": cpu, "meta": meta}


def _pad_backward_kernels(name: str, k: int, mode: str) -> dict[str, Any]:
    op = f"od::{name}"
    reflect = mode == "reflect"

    def check(grad_output: Tensor, self: Tensor, padding: Sequence[int]) -> None:
        shape = _check_pad(op, self, padding, k, reflect)
        if list(grad_output.shape) != shape:
            raise RuntimeError(f"{op}: expected grad_output of shape {shape}, got {list(grad_output.shape)}")

    def cpu(grad_output: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
        check(grad_output, self, padding)
        return call_numpy(_scattered_back, grad_output, self, _pairs(padding), mode)

    def meta(grad_output: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
        check_device(op, grad_output, self)
        check(grad_output, self, padding)
        return meta_like(self.shape, grad_output.dtype)

    return {"cpu": cpu, "meta": meta}


def _save_self(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.padding = list(inputs[-1])
    ctx.save_for_backward(inputs[-2])


def _pad_formula(backward_op: Any) -> Any:
    def formula(ctx: Any, grad: Tensor) -> tuple[Any, None]:
        """PyTorch: derivatives.yaml {reflection,replication}_pad{1,2,3}d."""
        (self,) = ctx.saved_tensors
        return backward_op(grad, self, ctx.padding), None

    return formula


def _pad_backward_formula(forward_op: Any) -> Any:
    def formula(ctx: Any, grad: Tensor) -> tuple[Any, Any, None]:
        """Linear in grad_output: its gradient is the padding of the incoming
        one. PyTorch: derivatives.yaml {reflection,replication}_pad{1,2,3}d_backward."""
        (self,) = ctx.saved_tensors
        g_go = forward_op(grad, ctx.padding) if ctx.needs_input_grad[0] else None
        return g_go, factories.zeros_like(self) if ctx.needs_input_grad[1] else None, None

    return formula


def _define_pad(name: str, k: int, mode: str, tags: Any) -> tuple[Op, Op]:
    """Defines ``name`` and ``name_backward`` (each the other's formula)."""
    ops: dict[str, Op] = {}

    def forward(grad: Tensor, padding: Sequence[int]) -> Tensor:
        return ops["forward"](grad, padding)

    def backward(grad: Tensor, self: Tensor, padding: Sequence[int]) -> Tensor:
        return ops["backward"](grad, self, padding)

    ops["backward"] = defop(f"{name}_backward(Tensor grad_output, Tensor self, SymInt[{2 * k}] padding) -> Tensor",
                            tags=PT2, **_pad_backward_kernels(f"{name}_backward", k, mode),
                            backward=_pad_backward_formula(forward), setup_context=_save_self)
    ops["forward"] = defop(f"{name}(Tensor self, SymInt[{2 * k}] padding) -> Tensor", tags=tags,
                           **_pad_kernels(name, k, mode), backward=_pad_formula(backward),
                           setup_context=_save_self)
    return ops["forward"], ops["backward"]


reflection_pad1d, reflection_pad1d_backward = _define_pad("reflection_pad1d", 1, "reflect", CORE)
reflection_pad2d, reflection_pad2d_backward = _define_pad("reflection_pad2d", 2, "reflect", CORE)
reflection_pad3d, reflection_pad3d_backward = _define_pad("reflection_pad3d", 3, "reflect", CORE)
replication_pad2d, replication_pad2d_backward = _define_pad("replication_pad2d", 2, "edge", CORE)
replication_pad3d, replication_pad3d_backward = _define_pad("replication_pad3d", 3, "edge", CORE)

_BY_MODE = {"reflect": {1: reflection_pad1d, 2: reflection_pad2d, 3: reflection_pad3d},
            "replicate": {2: replication_pad2d, 3: replication_pad3d}}


def _pad(self: Tensor, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
    """constant_pad_nd, or the reflection / replication operator of the
    padded dimensions' count. PyTorch: at::native::pad (CompositeImplicitAutograd)."""
    if mode == "constant":
        return constant_pad_nd(self, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f"od::pad: Padding mode \"{mode}\" doesn't take in value argument")
    if len(pad) % 2:
        raise RuntimeError(f"od::pad: Padding length must be divisible by 2, got {len(pad)}")
    if mode not in _BY_MODE:
        raise NotImplementedError(f"od::pad: Unrecognised padding mode {mode!r} here; use 'constant', 'reflect' or "
                                  f"'replicate'")
    k = len(pad) // 2
    fn = _BY_MODE[mode].get(k)
    if fn is None or self.ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"od::pad: Padding size {len(pad)} is not supported for {self.ndim}D input tensor "
                                  f"in mode {mode!r}")
    return fn(self, pad)


pad: Op = defop('pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor', tags=PT2,
                composite=_pad)
