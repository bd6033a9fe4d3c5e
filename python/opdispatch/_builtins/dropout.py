"""Dropout: the Core ATen operator native_dropout (zeroes each element with
probability p, scales the rest by 1/(1-p), returns the output and the mask
of kept elements), its gradient operator native_dropout_backward, and
dropout as their CompositeImplicitAutograd decomposition, as PyTorch splits
them. The mask is drawn from the generator of rand/randn (opdispatch.manual_seed)."""
from __future__ import annotations

from typing import Any, Optional, cast

import numpy as np

from .. import _C
from . import random
from ._numpy import check_device, meta_like
from ._output_strides import call_numpy_strided_pair, elementwise_strides, preserved_strides
from ._pointwise import call_elementwise
from ._registry import NONCORE_POINTWISE, RANDOM, Op, PairOp, defop
from .._ops import Tag
from .._tensor_type import Tensor


def _scale(p: float, train: Optional[bool]) -> float:
    """The factor kept elements are multiplied by: 1/(1-p) when dropping (0 for p = 1), 1 in evaluation."""
    if train is False:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


def _check_dropout(op: str, input: Tensor, p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {input.dtype}")


def _dropout_of(x: np.ndarray, p: float, train: Optional[bool], rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray]:
    if x.size == 0:  # PyTorch's early return: the mask of an empty input has the input's dtype
        return x.copy(), np.empty(x.shape, x.dtype)
    if train is False:
        return x.copy(), np.ones(x.shape, np.bool_)
    keep = rng.random(x.shape, dtype=np.float32) >= p
    return (x * keep * x.dtype.type(_scale(p, train))).astype(x.dtype, copy=False), keep


def _native_dropout_cpu(input: Tensor, p: float, train: Optional[bool]) -> tuple[Tensor, Tensor]:
    """train None drops as train=True does. PyTorch: native_dropout_cpu."""
    _check_dropout("od::native_dropout", input, p)
    # The output and the mask are laid out as input (PyTorch: empty_like and a TensorIterator product).
    return call_numpy_strided_pair(input.shape, preserved_strides(input), _dropout_of, input, p, train, random._rng())


def _native_dropout_meta(input: Tensor, p: float, train: Optional[bool]) -> tuple[Tensor, Tensor]:
    _check_dropout("od::native_dropout", input, p)
    strides = preserved_strides(input)
    return (meta_like(input.shape, input.dtype, strides),
            meta_like(input.shape, _C.bool if input.numel() else input.dtype, strides))


def _native_dropout_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, p, train = inputs
    ctx.scale = _scale(p, train)
    ctx.mark_non_differentiable(output[1])
    ctx.save_for_backward(output[1])


def _native_dropout_backward_formula(ctx: Any, grad: Optional[Tensor], _: Any) -> tuple[Any, None, None]:
    """PyTorch: derivatives.yaml native_dropout, with the scale the forward
    used (PyTorch's formula takes 1 for train=None, whose forward scales)."""
    (mask,) = ctx.saved_tensors
    return (None if grad is None else native_dropout_backward(grad, mask, ctx.scale)), None, None


native_dropout = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    "native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", tags=RANDOM,
    cpu=_native_dropout_cpu, meta=_native_dropout_meta, backward=_native_dropout_backward_formula,
    setup_context=_native_dropout_setup))


def _check_mask(grad_output: Tensor, mask: Tensor) -> None:
    """The mask: bool, or grad_output's dtype (native_dropout's mask of an empty input), of grad_output's shape."""
    if mask.dtype not in (_C.bool, grad_output.dtype) or grad_output.shape != mask.shape:
        raise RuntimeError(f"od::native_dropout_backward: expected a bool mask of grad_output's shape "
                           f"{list(grad_output.shape)}, got {mask.dtype} of shape {list(mask.shape)}")


def _masked_scaled(g: np.ndarray, mask: np.ndarray, scale: float) -> np.ndarray:
    grad: np.ndarray = (g * mask * g.dtype.type(scale)).astype(g.dtype, copy=False)
    return grad


def _native_dropout_backward_cpu(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    _check_mask(grad_output, mask)
    return call_elementwise("od::native_dropout_backward", _masked_scaled, grad_output, mask, scale)


def _native_dropout_backward_meta(grad_output: Tensor, mask: Tensor, scale: float) -> Tensor:
    check_device("od::native_dropout_backward", grad_output, mask)
    _check_mask(grad_output, mask)
    return meta_like(grad_output.shape, grad_output.dtype, elementwise_strides(grad_output.shape, [grad_output, mask]))


def _backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, mask, ctx.scale = inputs
    ctx.save_for_backward(mask)


def _backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    """Linear in grad_output. PyTorch: derivatives.yaml native_dropout_backward (native_dropout_double_backward)."""
    (mask,) = ctx.saved_tensors
    return native_dropout_backward(grad, mask, ctx.scale), None, None


native_dropout_backward: Op = defop(
    "native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor", tags=NONCORE_POINTWISE,
    cpu=_native_dropout_backward_cpu, meta=_native_dropout_backward_meta, backward=_backward_backward,
    setup_context=_backward_setup)


def _dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """native_dropout's output when training with p > 0, else the input
    itself (as PyTorch's eager kernel; torch._decomp's dropout returns a clone).
    PyTorch: at::native::dropout (CompositeImplicitAutograd), torch._decomp dropout."""
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"od::dropout: dropout probability has to be between 0 and 1, but got {p}")
    if train and p != 0:
        return native_dropout(input, p, train)[0]
    return input


dropout: Op = defop("dropout(Tensor input, float p, bool train) -> Tensor",
                    tags=(Tag.maybe_aliasing_or_mutating, Tag.nondeterministic_seeded, Tag.pt2_compliant_tag),
                    composite=_dropout)

