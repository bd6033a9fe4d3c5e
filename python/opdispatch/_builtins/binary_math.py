"""Elementwise functions of two operands from the Core ATen opset beyond
elementwise.py's: atan2 (and its out= form), division with a rounding mode,
fmod, remainder and clamp (Scalar and Tensor bounds); the everyday non-core
floor_divide, clamp_min and clamp_max; and the in-place forms Tensor
methods call (clamp_, fmod_, remainder_, floor_divide_, clamp_min_,
clamp_max_). PyTorch's type promotion (Note [Elementwise type promotion] in
_pointwise.py); integer division by zero raises, as in PyTorch. Autograd
formulas from PyTorch's tools/autograd/derivatives.yaml, written with ``od``
operators."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import _C
from ..autograd.grad_mode import is_grad_enabled
from . import comparison, factories, logical
from ._numpy import broadcast_shape, call_numpy, check_device, check_inplace
from ._pointwise import compute_dtype, inplace_of, operands, pointwise
from ._registry import (INPLACE, INPLACE_POINTWISE, NONCORE_POINTWISE, OUT_POINTWISE, POINTWISE, PT2, Kernels, Op, defop,
                        no_derivative)
from .elementwise import add, div, div_scalar, inplace_autograd, input_grad, mul, neg, where
from .._tensor_type import Tensor


def _save_inputs(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(*[x for x in inputs if isinstance(x, Tensor)])


# --- atan2 ---------------------------------------------------------------------------------------


def _atan2_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """self: grad * other / (self² + other²); other: -grad * self / (self² + other²)."""
    self, other = ctx.saved_tensors
    scaled = div(grad, add(mul(self, self), mul(other, other)))
    g_self = input_grad(mul(scaled, other), self) if ctx.needs_input_grad[0] else None
    g_other = input_grad(neg(mul(scaled, self)), other) if ctx.needs_input_grad[1] else None
    return g_self, g_other


atan2: Op = defop("atan2(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                  **pointwise("od::atan2", np.arctan2, int_to_float=True),
                  backward=_atan2_backward, setup_context=_save_inputs)


def _out_kernels(name: str, functional: Op, *, int_to_float: bool) -> Kernels:
    """Kernels of the out= form of ``functional`` (a binary elementwise
    operator): ``out`` receives the result, cast to its dtype. RuntimeError if
    the result's dtype cannot be cast to ``out``'s, or ``out``'s shape is not
    the result's (PyTorch resizes ``out``; opdispatch tensors cannot be
    resized: pass an ``out`` of the broadcast shape)."""

    def check(self: Tensor, other: Tensor, out: Tensor) -> None:
        check_device(name, self, other, out)
        shape = broadcast_shape(name, self.shape, other.shape)
        if tuple(out.shape) != shape:
            raise RuntimeError(f"{name}: out has shape {list(out.shape)} but the result has shape {list(shape)}; "
                               f"opdispatch cannot resize out= tensors, so pass one of the result's shape")
        check_inplace(name, out, shape, compute_dtype((self, other), int_to_float))

    def cpu(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
        check(self, other, out)
        call_numpy(np.copyto, out, functional(self, other), casting="unsafe")
        return out

    def meta(self: Tensor, other: Tensor, *, out: Tensor) -> Tensor:
        check(self, other, out)
        return out

    return {"cpu": cpu, "meta": meta}


def _out_autograd(op: Op) -> Any:
    """The Autograd kernel of an out= operator: PyTorch's refusal when an
    argument requires grad; otherwise the kernel below autograd."""
    name = op._schema.name

    def kernel(keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> Tensor:
        if is_grad_enabled() and any(t.requires_grad for t in operands((*args, *kwargs.values()))):
            raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                               f"differentiation, but one of the arguments requires grad.")
        result: Tensor = op._redispatch_below_autograd(keyset, *args, **kwargs)
        return result

    return kernel


atan2_out: Op = defop("atan2.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)", tags=OUT_POINTWISE,
                      **_out_kernels("od::atan2.out", atan2, int_to_float=True), autograd=_out_autograd)

# --- division with a rounding mode, fmod, remainder ------------------------------------------------


def _check_divisor(b: np.ndarray) -> None:
    """PyTorch's error for an integer division by zero (float division gives inf or nan)."""
    if b.dtype.kind in "biu" and not np.all(b):
        raise RuntimeError("ZeroDivisionError")


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> Any:
    """a / b rounded toward zero; integers exactly (floor division, moved up where the signs differ)."""
    if a.dtype.kind in "fc":
        return np.trunc(np.true_divide(a, b))
    q = np.floor_divide(a, b)
    inexact = np.not_equal(np.subtract(a, np.multiply(q, b)), 0) & (np.less(a, 0) != np.less(b, 0))
    return np.add(q, inexact, dtype=q.dtype, casting="unsafe")


def _div_rounding(a: Any, b: Any, rounding_mode: Optional[str] = None) -> Any:
    if rounding_mode is None:
        return np.true_divide(a, b)
    _check_divisor(np.asarray(b))
    if rounding_mode == "trunc":
        return _trunc_divide(np.asarray(a), b)  # a Python number stays weak in NumPy's promotion
    return np.floor_divide(a, b)


def _check_rounding_mode(rounding_mode: Optional[str]) -> None:
    if rounding_mode not in (None, "trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")


def _div_mode_kernels(name: str) -> Kernels:
    """True division (integers compute in float32) without a rounding mode;
    with one, the operands' own result type. PyTorch: div_true / div_trunc / div_floor."""
    true_division = pointwise(name, _div_rounding, int_to_float=True)
    rounded = pointwise(name, _div_rounding)

    def kernel(key: str) -> Any:
        def run(self: Tensor, other: Any, *, rounding_mode: Optional[str] = None) -> Tensor:
            _check_rounding_mode(rounding_mode)
            kernels = true_division if rounding_mode is None else rounded
            result: Tensor = kernels[key](self, other, rounding_mode=rounding_mode)  # type: ignore[literal-required]
            return result

        run.__name__ = f"{name.replace('od::', '').replace('.', '_')}_{key}"
        return run

    return {"cpu": kernel("cpu"), "meta": kernel("meta")}


def _div_mode_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    ctx.rounded = keyword_only_inputs.get("rounding_mode") is not None
    _save_inputs(ctx, inputs, output)


def _div_mode_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """Zero where the result is rounded (a step function); else true division's formula.
    PyTorch: derivatives.yaml div.Tensor_mode, div.Scalar_mode."""
    self, *rest = ctx.saved_tensors
    other: Optional[Tensor] = rest[0] if rest else None
    needs_self, needs_other = ctx.needs_input_grad[0], other is not None and ctx.needs_input_grad[1]
    if ctx.rounded:
        return (factories.zeros_like(self) if needs_self else None,
                factories.zeros_like(other) if needs_other else None)
    g_self = g_other = None
    if needs_self:
        g_self = input_grad(div(grad, other) if other is not None else div_scalar(grad, ctx.scalar), self)
    if needs_other and other is not None:
        g_other = input_grad(neg(div(mul(grad, self), mul(other, other))), other)
    return g_self, g_other


def _div_scalar_mode_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any],
                           output: Any) -> None:
    ctx.scalar = inputs[1]
    _div_mode_setup(ctx, inputs, keyword_only_inputs, output)


div_tensor_mode: Op = defop("div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor",
                            tags=POINTWISE, **_div_mode_kernels("od::div.Tensor_mode"),
                            backward=_div_mode_backward, setup_context=_div_mode_setup)
div_scalar_mode: Op = defop("div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
                            tags=POINTWISE, **_div_mode_kernels("od::div.Scalar_mode"),
                            backward=_div_mode_backward, setup_context=_div_scalar_mode_setup)


def _fmod(a: Any, b: Any) -> Any:
    _check_divisor(np.asarray(b))
    return np.fmod(a, b)


def _remainder(a: Any, b: Any) -> Any:
    _check_divisor(np.asarray(b))
    return np.remainder(a, b)


def _modulo_backward(rounding_mode: str) -> Any:
    """fmod / remainder: self: grad; other: -grad * self.div(other, rounding_mode) (trunc for fmod, floor for
    remainder). PyTorch: derivatives.yaml fmod.Tensor, remainder.Tensor."""

    def backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
        self, other = ctx.saved_tensors
        g_self = input_grad(grad, self) if ctx.needs_input_grad[0] else None
        g_other = None
        if ctx.needs_input_grad[1]:
            g_other = input_grad(neg(mul(grad, div_tensor_mode(self, other, rounding_mode=rounding_mode))), other)
        return g_self, g_other

    return backward


fmod_scalar: Op = defop("fmod.Scalar(Tensor self, Scalar other) -> Tensor", tags=POINTWISE,
                        **pointwise("od::fmod.Scalar", _fmod), backward=lambda ctx, grad: (grad, None))
fmod: Op = defop("fmod.Tensor(Tensor self, Tensor other) -> Tensor", tags=POINTWISE, **pointwise("od::fmod.Tensor", _fmod),
                 backward=_modulo_backward("trunc"), setup_context=_save_inputs)
remainder_scalar: Op = defop("remainder.Scalar(Tensor self, Scalar other) -> Tensor", tags=POINTWISE,
                             **pointwise("od::remainder.Scalar", _remainder), backward=lambda ctx, grad: (grad, None))
remainder: Op = defop("remainder.Tensor(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                      **pointwise("od::remainder.Tensor", _remainder),
                      backward=_modulo_backward("floor"), setup_context=_save_inputs)

# --- clamp -------------------------------------------------------------------------------------------------


def _clamp(a: Any, min: Any = None, max: Any = None) -> Any:  # noqa: A002  (PyTorch's argument names)
    """min(max(a, min), max), skipping a None bound: max wins where min > max; nan propagates."""
    if min is None and max is None:
        raise RuntimeError("od::clamp: At least one of 'min' or 'max' must not be None")
    out = a if min is None else np.maximum(a, min)
    return out if max is None else np.minimum(out, max)


def _clamp_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, lo, hi = (list(inputs) + [None, None])[:3]
    ctx.bounds = [None if isinstance(b, Tensor) else b for b in (lo, hi)]
    ctx.save_for_backward(self, *[b if isinstance(b, Tensor) else None for b in (lo, hi)])


def _clamp_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, Any]:
    """self: grad where min <= self <= max; a Tensor min: grad where self < min (and min < max); a Tensor
    max: grad where self > max (or max < min). PyTorch: clamp_backward, clamp_backward_min_max."""
    self, lo_t, hi_t = ctx.saved_tensors
    lo = lo_t if lo_t is not None else ctx.bounds[0]
    hi = hi_t if hi_t is not None else ctx.bounds[1]
    zero = factories.zeros_like(grad)
    g_self = g_lo = g_hi = None
    if ctx.needs_input_grad[0]:
        keep = _both(_cmp(comparison.ge, self, lo), _cmp(comparison.le, self, hi))
        g_self = input_grad(grad if keep is None else where(keep, grad, zero), self)
    if lo_t is not None and len(ctx.needs_input_grad) > 1 and ctx.needs_input_grad[1]:
        below = comparison.lt(self, lo_t)
        if hi is not None:
            below = logical.logical_and(below, _cmp(comparison.lt, lo_t, hi))
        g_lo = input_grad(where(below, grad, zero), lo_t)
    if hi_t is not None and len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
        above = comparison.gt(self, hi_t)
        if lo is not None:
            above = logical.logical_or(above, _cmp(comparison.lt, hi_t, lo))
        g_hi = input_grad(where(above, grad, zero), hi_t)
    return g_self, g_lo, g_hi


_SCALAR_FORMS = {comparison.ge: comparison.ge_scalar, comparison.le: comparison.le_scalar,
                 comparison.lt: comparison.lt_scalar, comparison.gt: comparison.gt_scalar}


def _cmp(op: Op, a: Tensor, b: Any) -> Optional[Tensor]:
    """``op(a, b)`` for a tensor or number ``b``; None when ``b`` is None (no bound)."""
    if b is None:
        return None
    return op(a, b) if isinstance(b, Tensor) else _SCALAR_FORMS[op](a, b)


def _both(a: Optional[Tensor], b: Optional[Tensor]) -> Optional[Tensor]:
    if a is None or b is None:
        return a if b is None else b
    return logical.logical_and(a, b)


clamp: Op = defop("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", tags=POINTWISE,
                  **pointwise("od::clamp", _clamp), backward=_clamp_backward, setup_context=_clamp_setup)
clamp_tensor: Op = defop("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", tags=POINTWISE,
                         **pointwise("od::clamp.Tensor", _clamp), backward=_clamp_backward,
                         setup_context=_clamp_setup)


def _define_inplace(schema: str, fn: Any, functional: Op, tags: Any = INPLACE_POINTWISE) -> Op:
    name = "od::" + schema.split("(", 1)[0]
    return defop(schema, tags=tags, **inplace_of(name, fn), autograd=inplace_autograd(name, functional))


clamp_: Op = _define_inplace("clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)", _clamp, clamp)
clamp_tensor_: Op = _define_inplace("clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)",
                                    _clamp, clamp_tensor)
fmod_scalar_: Op = _define_inplace("fmod_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", _fmod, fmod_scalar)
fmod_: Op = _define_inplace("fmod_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", _fmod, fmod)
remainder_scalar_: Op = _define_inplace("remainder_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", _remainder,
                                        remainder_scalar)
remainder_: Op = _define_inplace("remainder_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", _remainder, remainder)

# --- floor_divide, clamp_min, clamp_max (not core: PyTorch gives them kernels of their own) ---------------


def _floor_divide(a: Any, b: Any) -> Any:
    return _div_rounding(a, b, "floor")


# PyTorch 2.13 has no derivative for floor_divide.
floor_divide: Op = defop("floor_divide(Tensor self, Tensor other) -> Tensor", tags=PT2,
                         **pointwise("od::floor_divide", _floor_divide), backward=no_derivative("od::floor_divide"))
floor_divide_scalar: Op = defop("floor_divide.Scalar(Tensor self, Scalar other) -> Tensor", tags=PT2,
                                **pointwise("od::floor_divide.Scalar", _floor_divide),
                                backward=no_derivative("od::floor_divide.Scalar"))
floor_divide_: Op = _define_inplace("floor_divide_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", _floor_divide,
                                    floor_divide, INPLACE)
floor_divide_scalar_: Op = _define_inplace("floor_divide_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
                                           _floor_divide, floor_divide_scalar, INPLACE)


def _clamp_min(a: Any, min: Any) -> Any:  # noqa: A002  (PyTorch's argument name)
    return np.maximum(a, min)


def _clamp_max(a: Any, max: Any) -> Any:  # noqa: A002  (PyTorch's argument name)
    return np.minimum(a, max)


def _bound_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.bound = None if isinstance(inputs[1], Tensor) else inputs[1]
    ctx.save_for_backward(inputs[0], inputs[1] if isinstance(inputs[1], Tensor) else None)


def _bound_backward(keep: Op, keep_scalar: Op, passes: Op) -> Any:
    """clamp_min / clamp_max: self's gradient where ``keep(self, bound)``
    (self >= min, self <= max); a Tensor bound's where ``passes(self, bound)``
    (self < min, self > max). PyTorch: derivatives.yaml clamp_min, clamp_max."""

    def backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
        self, bound_t = ctx.saved_tensors
        zero = factories.zeros_like(grad)
        g_self = g_bound = None
        if ctx.needs_input_grad[0]:
            mask = keep(self, bound_t) if bound_t is not None else keep_scalar(self, ctx.bound)
            g_self = input_grad(where(mask, grad, zero), self)
        if bound_t is not None and ctx.needs_input_grad[1]:
            g_bound = input_grad(where(passes(self, bound_t), grad, zero), bound_t)
        return g_self, g_bound

    return backward


_min_backward = _bound_backward(comparison.ge, comparison.ge_scalar, comparison.lt)
_max_backward = _bound_backward(comparison.le, comparison.le_scalar, comparison.gt)
clamp_min: Op = defop("clamp_min(Tensor self, Scalar min) -> Tensor", tags=NONCORE_POINTWISE,
                      **pointwise("od::clamp_min", _clamp_min), backward=_min_backward, setup_context=_bound_setup)
clamp_min_tensor: Op = defop("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", tags=NONCORE_POINTWISE,
                             **pointwise("od::clamp_min.Tensor", _clamp_min), backward=_min_backward,
                             setup_context=_bound_setup)
clamp_max: Op = defop("clamp_max(Tensor self, Scalar max) -> Tensor", tags=NONCORE_POINTWISE,
                      **pointwise("od::clamp_max", _clamp_max), backward=_max_backward, setup_context=_bound_setup)
clamp_max_tensor: Op = defop("clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", tags=NONCORE_POINTWISE,
                             **pointwise("od::clamp_max.Tensor", _clamp_max), backward=_max_backward,
                             setup_context=_bound_setup)
clamp_min_: Op = _define_inplace("clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)", _clamp_min, clamp_min)
clamp_max_: Op = _define_inplace("clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)", _clamp_max, clamp_max)
