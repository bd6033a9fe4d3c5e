"""Elementwise functions of one tensor from the Core ATen opset beyond
elementwise.py's: inverse and hyperbolic trigonometry, expm1, the
logarithms, reciprocal, rsqrt, erf, sign and rounding, and the predicates isnan,
isinf, logical_not and bitwise_not. One NumPy function each gives the CPU and
Meta kernels (_pointwise.unary); autograd formulas from PyTorch's
tools/autograd/derivatives.yaml, written with ``od`` operators so they can be
differentiated again. Integer and bool inputs of the floating functions
compute in float32, as PyTorch's (Note [Elementwise type promotion] in
_pointwise.py)."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from . import factories
from ._pointwise import unary
from .._ops import Tag
from ._registry import NONCORE_POINTWISE, POINTWISE, Op, defop
from .elementwise import add_scalar, exp, mul, mul_scalar, neg, over_conj, rsub_scalar, sqrt, times_conj
from .._tensor_type import Tensor


def _self(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0])


def _result(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(output)


def _saved(ctx: Any) -> Tensor:
    saved: Tensor = ctx.saved_tensors[0]
    return saved


def _define(name: str, fn: Callable[[Any], Any], backward: Callable[[Any, Tensor], Any] | None = None,
            setup_context: Callable[..., None] | None = None, *, int_to_float: bool = True,
            tags: Sequence[Tag] = POINTWISE) -> Op:
    """``od::<name>(Tensor self) -> Tensor``, tagged as PyTorch tags it (core, pointwise);
    without ``backward``, not differentiable (its outputs are bool or integral). ``int_to_float``:
    integer inputs compute in float32; otherwise the result keeps the input's dtype (or is bool)."""
    kernels = unary(f"od::{name}", fn, int_to_float=int_to_float)
    if backward is None:
        return defop(f"{name}(Tensor self) -> Tensor", tags=tags, **kernels, differentiable=False)
    return defop(f"{name}(Tensor self) -> Tensor", tags=tags, **kernels, backward=backward,
                 setup_context=setup_context)


def _keep_integers(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``fn`` for floating inputs; integer and bool inputs unchanged, in their dtype (PyTorch's ceil/floor/round/trunc)."""
    def rounding(a: Any) -> Any:
        return np.array(a, copy=True) if np.asarray(a).dtype.kind in "biu" else fn(a)
    return rounding


def _reciprocal(a: Any) -> Any:
    return np.divide(1, a)


def _rsqrt(a: Any) -> Any:
    return np.divide(1, np.sqrt(a))


def _sign(a: Any) -> Any:
    """np.sign, and bool inputs unchanged (NumPy refuses the sign of a bool; PyTorch gives it back)."""
    return np.array(a, copy=True) if np.asarray(a).dtype == np.bool_ else np.sign(a)


def erf_of(a: Any) -> Any:
    """The error function of an array (SciPy's erf, imported on first use: SciPy is slow to import)."""
    from scipy.special import erf as scipy_erf

    return np.asarray(scipy_erf(a)).astype(np.result_type(a), copy=False)  # SciPy computes float16 in float32


def _one_minus_square(x: Tensor) -> Tensor:
    return rsub_scalar(mul(x, x), 1)


def _acosh_divisor(x: Tensor) -> Tensor:
    """1 / acosh'(x): sqrt(x - 1) * sqrt(x + 1), the derivative of the principal branch, for complex x;
    sqrt(x**2 - 1) for real x (finite below -1 too, where the forward is nan), as PyTorch 2.13 computes them."""
    if x.dtype.is_complex:
        return mul(sqrt(add_scalar(x, -1)), sqrt(add_scalar(x, 1)))
    return sqrt(add_scalar(mul(x, x), -1))


def _zeros(ctx: Any, grad: Tensor) -> Tensor:
    """The gradient of a step function: zero almost everywhere (PyTorch: derivatives.yaml, "zeros_like(grad)")."""
    return factories.zeros_like(grad)


# Note [Complex gradients]: the gradient of a holomorphic function is grad times its derivative's conjugate.
acos: Op = _define("acos", np.arccos, lambda ctx, g: neg(over_conj(g, sqrt(_one_minus_square(_saved(ctx))))), _self)
asin: Op = _define("asin", np.arcsin, lambda ctx, g: over_conj(g, sqrt(_one_minus_square(_saved(ctx)))), _self)
atan: Op = _define("atan", np.arctan, lambda ctx, g: over_conj(g, add_scalar(mul(_saved(ctx), _saved(ctx)), 1)), _self)
acosh: Op = _define("acosh", np.arccosh, lambda ctx, g: over_conj(g, _acosh_divisor(_saved(ctx))), _self)
asinh: Op = _define("asinh", np.arcsinh,
                    lambda ctx, g: over_conj(g, sqrt(add_scalar(mul(_saved(ctx), _saved(ctx)), 1))), _self)
atanh: Op = _define("atanh", np.arctanh, lambda ctx, g: over_conj(g, _one_minus_square(_saved(ctx))), _self)
cosh: Op = _define("cosh", np.cosh, lambda ctx, g: times_conj(g, sinh(_saved(ctx))), _self)
sinh: Op = _define("sinh", np.sinh, lambda ctx, g: times_conj(g, cosh(_saved(ctx))), _self)
tan: Op = _define("tan", np.tan, lambda ctx, g: times_conj(g, add_scalar(mul(_saved(ctx), _saved(ctx)), 1)), _result)
expm1: Op = _define("expm1", np.expm1, lambda ctx, g: times_conj(g, add_scalar(_saved(ctx), 1)), _result)
log1p: Op = _define("log1p", np.log1p, lambda ctx, g: over_conj(g, add_scalar(_saved(ctx), 1)), _self)
log2: Op = _define("log2", np.log2, lambda ctx, g: over_conj(g, mul_scalar(_saved(ctx), math.log(2))), _self)
log10: Op = _define("log10", np.log10, lambda ctx, g: over_conj(g, mul_scalar(_saved(ctx), math.log(10))), _self)
reciprocal: Op = _define("reciprocal", _reciprocal,
                         lambda ctx, g: neg(times_conj(g, mul(_saved(ctx), _saved(ctx)))), _result)
rsqrt: Op = _define("rsqrt", _rsqrt,
                    lambda ctx, g: mul_scalar(times_conj(g, mul(_saved(ctx), mul(_saved(ctx), _saved(ctx)))), -0.5),
                    _result)
exp2: Op = _define("exp2", np.exp2, lambda ctx, g: mul_scalar(times_conj(g, _saved(ctx)), math.log(2)), _result,
                   tags=NONCORE_POINTWISE)
erf: Op = _define("erf", erf_of, lambda ctx, g: mul(g, mul_scalar(exp(neg(mul(_saved(ctx), _saved(ctx)))),
                                                                  2 / math.sqrt(math.pi))), _self)
sign: Op = _define("sign", _sign, _zeros, int_to_float=False)
ceil: Op = _define("ceil", _keep_integers(np.ceil), _zeros, int_to_float=False)
floor: Op = _define("floor", _keep_integers(np.floor), _zeros, int_to_float=False)
round: Op = _define("round", _keep_integers(np.round), _zeros, int_to_float=False)  # noqa: A001  (the operator's name)
trunc: Op = _define("trunc", _keep_integers(np.trunc), _zeros, int_to_float=False)
isnan: Op = _define("isnan", np.isnan, int_to_float=False)
isinf: Op = _define("isinf", np.isinf, int_to_float=False)
logical_not: Op = _define("logical_not", np.logical_not, int_to_float=False)
bitwise_not: Op = _define("bitwise_not", np.invert, int_to_float=False)
