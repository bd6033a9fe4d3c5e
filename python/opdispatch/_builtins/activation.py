"""Pointwise activation functions: from the Core ATen opset elu, gelu
(exact and tanh-approximated), hardtanh, leaky_relu; the everyday non-core
silu, hardsigmoid, hardswish and softplus (PyTorch gives them kernels of
their own, not decompositions); and the single backward operators PyTorch's
formulas call (elu_backward, gelu_backward, hardtanh_backward,
leaky_relu_backward, hardsigmoid_backward, hardswish_backward,
softplus_backward), themselves differentiable by PyTorch's double-backward
formulas. Floating inputs only, as PyTorch's kernels (hardtanh also takes
integers). PyTorch: derivatives.yaml, FunctionsManual.cpp
(elu_double_backward, gelu_double_backward, softplus_double_backward)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import comparison, factories
from .logical import logical_and
from ._pointwise import pointwise
from ._registry import NONCORE_POINTWISE, POINTWISE, PT2, Op, defop, no_derivative
from .elementwise import add, add_scalar, div_scalar, exp, mul, mul_scalar, rsub_scalar, sigmoid, sub, tanh, where
from .unary_math import erf_of
from .._tensor_type import Tensor

#: sqrt(2 / pi) and the cubic coefficient of gelu's tanh approximation; 1 / sqrt(2 pi).
_K, _C3, _INV_SQRT_2PI = math.sqrt(2 / math.pi), 0.044715, 1 / math.sqrt(2 * math.pi)
_SELF = slice(0, 1)


def _floating(name: str, a: Any) -> None:
    """NotImplementedError naming the operator unless ``a`` is floating (PyTorch: '"elu_cpu" not implemented for 'Long'')."""
    if np.asarray(a).dtype.kind != "f":
        raise NotImplementedError(f"od::{name}: not implemented for {np.asarray(a).dtype} tensors (floating only)")


# --- elu -----------------------------------------------------------------------------------------------


def _elu(a: Any, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> Any:
    _floating("elu", a)
    return np.where(a > 0, a * scale, np.expm1(a * input_scale) * (alpha * scale))


def _elu_backward(g: Any, alpha: Any, scale: Any, input_scale: Any, is_result: bool, x: Any) -> Any:
    _floating("elu_backward", x)
    if is_result:
        if alpha < 0:
            raise RuntimeError("od::elu_backward: In-place elu backward calculation is triggered with a negative "
                               "slope which is not supported. This is caused by calling in-place forward function "
                               "with a negative slope, please call out-of-place version instead.")
        negative = g * input_scale * (x + alpha * scale)
    else:
        negative = g * (input_scale * alpha * scale) * np.exp(x * input_scale)
    return np.where(x > 0, g * scale, negative)


def _elu_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.params = (list(inputs[1:]) + [1, 1, 1][len(inputs) - 1:])[:3]
    ctx.save_for_backward(inputs[0])


elu_backward: Op
elu: Op = defop("elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", tags=POINTWISE,
                **pointwise("od::elu", _elu, promoted=_SELF), setup_context=_elu_setup,
                backward=lambda ctx, g: (elu_backward(g, *ctx.params, False, ctx.saved_tensors[0]), None, None, None))


def _elu_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.params = inputs[1:5]
    ctx.save_for_backward(inputs[0], inputs[5])


def _elu_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """grad_output: elu_backward(grad, ...); self_or_result: elu_double_backward (grad * grad_output *
    input_scale, times the negative branch's slope, where self_or_result < 0)."""
    grad_output, x = ctx.saved_tensors
    alpha, scale, input_scale, is_result = ctx.params
    g_grad = elu_backward(grad, alpha, scale, input_scale, is_result, x) if ctx.needs_input_grad[0] else None
    g_x = None
    if ctx.needs_input_grad[5]:
        negative = comparison.lt_scalar(x, 0)
        both = mul_scalar(mul(grad, grad_output), input_scale)
        slope = both if is_result else elu_backward(both, alpha, scale, input_scale, False, x)
        g_x = where(negative, slope, factories.zeros_like(slope))
    return g_grad, None, None, None, None, g_x


elu_backward = defop("elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, "
                     "bool is_result, Tensor self_or_result) -> Tensor", tags=PT2,
                     **pointwise("od::elu_backward", _elu_backward, promoted=slice(0, None, 5)),
                     backward=_elu_backward_backward, setup_context=_elu_backward_setup)

# --- gelu ----------------------------------------------------------------------------------------------


def _check_approximate(approximate: str) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def _gelu(a: Any, *, approximate: str = "none") -> Any:
    _check_approximate(approximate)
    _floating("gelu", a)
    if approximate == "tanh":
        return a * 0.5 * (1 + np.tanh(_K * (a + _C3 * a * a * a)))
    return a * 0.5 * (1 + erf_of(a * math.sqrt(0.5)))


def _gelu_backward(g: Any, a: Any, *, approximate: str = "none") -> Any:
    """g * gelu'(a): Φ(a) + a φ(a) exactly; with the tanh approximation, 0.5 (1 + t) + 0.5 a (1 - t²) u'
    where t = tanh(u), u = k (a + c a³)."""
    _check_approximate(approximate)
    _floating("gelu_backward", a)
    if approximate == "tanh":
        t = np.tanh(_K * (a + _C3 * a * a * a))
        du = _K * (1 + 3 * _C3 * a * a)
        return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * du)
    cdf = 0.5 * (1 + erf_of(a * math.sqrt(0.5)))
    pdf = np.exp(-0.5 * a * a) * _INV_SQRT_2PI
    return g * (cdf + a * pdf)


def _approximate_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    ctx.approximate = keyword_only_inputs.get("approximate", "none")
    ctx.save_for_backward(*inputs)


gelu_backward: Op
gelu: Op = defop('gelu(Tensor self, *, str approximate="none") -> Tensor', tags=POINTWISE,
                 **pointwise("od::gelu", _gelu), setup_context=_approximate_setup,
                 backward=lambda ctx, g: gelu_backward(g, ctx.saved_tensors[0], approximate=ctx.approximate))


def _gelu_second_derivative(x: Tensor, approximate: str) -> Tensor:
    """gelu''(x): φ(x) (2 - x²) exactly; with the tanh approximation t = tanh(u), u = k (x + c x³):
    (1 - t²) (u' + x (u'' - 2 t u'²) / 2). PyTorch: gelu_double_backward."""
    x2 = mul(x, x)
    if approximate == "tanh":
        t = tanh(mul_scalar(mul(x, add_scalar(mul_scalar(x2, _C3), 1)), _K))
        du = mul_scalar(add_scalar(mul_scalar(x2, 3 * _C3), 1), _K)
        d2u = mul_scalar(x, 6 * _C3 * _K)
        inner = mul_scalar(mul(x, sub(d2u, mul_scalar(mul(t, mul(du, du)), 2))), 0.5)
        return mul(rsub_scalar(mul(t, t), 1), add(du, inner))
    pdf = mul_scalar(exp(mul_scalar(x2, -0.5)), _INV_SQRT_2PI)
    return mul(pdf, rsub_scalar(x2, 2))


def _gelu_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    grad_output, x = ctx.saved_tensors
    g_grad = gelu_backward(grad, x, approximate=ctx.approximate) if ctx.needs_input_grad[0] else None
    g_x = mul(mul(grad, grad_output), _gelu_second_derivative(x, ctx.approximate)) if ctx.needs_input_grad[1] else None
    return g_grad, g_x


gelu_backward = defop('gelu_backward(Tensor grad_output, Tensor self, *, str approximate="none") -> Tensor',
                      tags=NONCORE_POINTWISE, **pointwise("od::gelu_backward", _gelu_backward),
                      backward=_gelu_backward_backward, setup_context=_approximate_setup)

# --- hardtanh, leaky_relu -------------------------------------------------------------------------------


def _hardtanh(a: Any, min_val: Any = -1, max_val: Any = 1) -> Any:
    return np.minimum(np.maximum(a, min_val), max_val)


def _hardtanh_backward(g: Any, a: Any, min_val: Any, max_val: Any) -> Any:
    return np.where((a <= min_val) | (a >= max_val), np.zeros((), np.result_type(g)), g)


def _bounds_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    """Saves the tensor inputs and the Scalar parameters (defaults filled in)."""
    tensors = [x for x in inputs if isinstance(x, Tensor)]
    ctx.save_for_backward(*tensors)
    ctx.params = [x for x in inputs if not isinstance(x, Tensor)]


hardtanh_backward: Op
hardtanh: Op = defop("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", tags=POINTWISE,
                     **pointwise("od::hardtanh", _hardtanh, promoted=_SELF), setup_context=_bounds_setup,
                     backward=lambda ctx, g: (hardtanh_backward(g, ctx.saved_tensors[0],
                                                                *(ctx.params + [-1, 1][len(ctx.params):])),
                                              None, None))
hardtanh_backward = defop("hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor",
                          tags=PT2, **pointwise("od::hardtanh_backward", _hardtanh_backward, promoted=slice(0, 2)),
                          setup_context=_bounds_setup,
                          backward=lambda ctx, g: (hardtanh_backward(g, ctx.saved_tensors[1], *ctx.params),
                                                   factories.zeros_like(ctx.saved_tensors[1]), None, None))


def _leaky_relu(a: Any, negative_slope: Any = 0.01) -> Any:
    _floating("leaky_relu", a)
    return np.where(a > 0, a, a * negative_slope)


def _leaky_relu_backward(g: Any, a: Any, negative_slope: Any, self_is_result: bool) -> Any:
    _floating("leaky_relu_backward", a)
    if self_is_result and negative_slope < 0:
        raise RuntimeError("od::leaky_relu_backward: In-place leakyReLu backward calculation is triggered with a "
                           "negative slope which is not supported. This is caused by calling in-place forward "
                           "function with a negative slope, please call out-of-place version instead.")
    return np.where(a > 0, g, g * negative_slope)


leaky_relu_backward: Op
leaky_relu: Op = defop("leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", tags=POINTWISE,
                       **pointwise("od::leaky_relu", _leaky_relu, promoted=_SELF), setup_context=_bounds_setup,
                       backward=lambda ctx, g: (leaky_relu_backward(g, ctx.saved_tensors[0],
                                                                    (ctx.params or [0.01])[0], False), None))
leaky_relu_backward = defop("leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, "
                            "bool self_is_result) -> Tensor", tags=PT2,
                            **pointwise("od::leaky_relu_backward", _leaky_relu_backward, promoted=slice(0, 2)),
                            setup_context=_bounds_setup,
                            backward=lambda ctx, g: (leaky_relu_backward(g, ctx.saved_tensors[1], ctx.params[0], False),
                                                     factories.zeros_like(ctx.saved_tensors[1]), None, None))


# --- silu, hardsigmoid, hardswish, softplus ----------------------------------------------------------------


def _sigmoid_of(a: Any) -> Any:
    e = np.exp(-np.abs(a))  # never overflows; the two branches are the same function
    return np.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _silu(a: Any) -> Any:
    _floating("silu", a)
    return a * _sigmoid_of(a)


def _self_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0])


def silu_grad(grad: Tensor, x: Tensor) -> Tensor:
    """grad * sigmoid(x) * (1 + x * (1 - sigmoid(x))), in od operators (so differentiable again).
    PyTorch: silu_backward's CompositeImplicitAutograd kernel, infinitely_differentiable_silu_backward."""
    s = sigmoid(x)
    return mul(mul(grad, s), add_scalar(mul(x, rsub_scalar(s, 1)), 1))


def _silu_backward(g: Any, a: Any) -> Any:
    _floating("silu_backward", a)
    s = _sigmoid_of(a)
    return g * s * (1 + a * (1 - s))


silu: Op = defop("silu(Tensor self) -> Tensor", tags=NONCORE_POINTWISE, **pointwise("od::silu", _silu),
                 backward=lambda ctx, g: silu_grad(g, ctx.saved_tensors[0]), setup_context=_self_setup)
# As in PyTorch: kernels of its own, no derivative, and a CompositeImplicitAutograd kernel (silu_grad) that
# OpOverload.decompose() runs.
silu_backward: Op = defop("silu_backward(Tensor grad_output, Tensor self) -> Tensor", tags=NONCORE_POINTWISE,
                          **pointwise("od::silu_backward", _silu_backward), composite=silu_grad,
                          backward=no_derivative("od::silu_backward"))


def _hardsigmoid(a: Any) -> Any:
    _floating("hardsigmoid", a)
    return np.minimum(np.maximum(a / 6 + 0.5, 0), 1)


_ONE_SIXTH_F32 = float(np.float32(1) / np.float32(6))


def _hardsigmoid_backward(g: Any, a: Any) -> Any:
    _floating("hardsigmoid_backward", a)
    # PyTorch's kernel multiplies by 1.0f / 6.0f, a float32 constant, in every dtype.
    return np.where((a > -3) & (a < 3), g * _ONE_SIXTH_F32, np.zeros((), np.result_type(g)))


def _pair_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0], inputs[1])
    ctx.params = inputs[2:]


hardsigmoid_backward: Op
hardsigmoid: Op = defop("hardsigmoid(Tensor self) -> Tensor", tags=NONCORE_POINTWISE,
                        **pointwise("od::hardsigmoid", _hardsigmoid), setup_context=_self_setup,
                        backward=lambda ctx, g: hardsigmoid_backward(g, ctx.saved_tensors[0]))
# PyTorch 2.13 has no derivative for hardsigmoid_backward.
hardsigmoid_backward = defop("hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor", tags=PT2,
                             **pointwise("od::hardsigmoid_backward", _hardsigmoid_backward),
                             backward=no_derivative("od::hardsigmoid_backward"))


def _hardswish(a: Any) -> Any:
    _floating("hardswish", a)
    return a * np.minimum(np.maximum(a + 3, 0), 6) / 6


def _hardswish_backward(g: Any, a: Any) -> Any:
    _floating("hardswish_backward", a)
    return np.where(a < -3, np.zeros((), np.result_type(g)), np.where(a <= 3, g * (a / 3 + 0.5), g))


def _hardswish_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """grad_output: hardswish_backward(grad, self); self: grad * grad_output / 3 where -3 < self < 3."""
    grad_output, x = ctx.saved_tensors
    g_grad = hardswish_backward(grad, x) if ctx.needs_input_grad[0] else None
    g_x = None
    if ctx.needs_input_grad[1]:
        inside = logical_and(comparison.gt_scalar(x, -3), comparison.lt_scalar(x, 3))
        scaled = div_scalar(mul(grad, grad_output), 3)
        g_x = where(inside, scaled, factories.zeros_like(scaled))
    return g_grad, g_x


hardswish_backward: Op
hardswish: Op = defop("hardswish(Tensor self) -> Tensor", tags=PT2, **pointwise("od::hardswish", _hardswish),
                      setup_context=_self_setup, backward=lambda ctx, g: hardswish_backward(g, ctx.saved_tensors[0]))
hardswish_backward = defop("hardswish_backward(Tensor grad_output, Tensor self) -> Tensor", tags=PT2,
                           **pointwise("od::hardswish_backward", _hardswish_backward), setup_context=_pair_setup,
                           backward=_hardswish_backward_backward)


def _softplus(a: Any, beta: Any = 1, threshold: Any = 20) -> Any:
    """log(1 + exp(beta a)) / beta, and a itself where beta a > threshold (PyTorch's linear tail)."""
    _floating("softplus", a)
    return np.where(a * beta > threshold, a, np.log1p(np.exp(a * beta)) / beta)


def _softplus_backward(g: Any, a: Any, beta: Any, threshold: Any) -> Any:
    _floating("softplus_backward", a)
    return np.where(a * beta > threshold, g, g * _sigmoid_of(a * beta))


def _softplus_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0])
    ctx.params = (list(inputs[1:]) + [1, 20][len(inputs) - 1:])[:2]


def _softplus_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None, None]:
    """grad_output: softplus_backward(grad, ...); self: softplus_double_backward — grad * grad_output * beta *
    s (1 - s), s = sigmoid(beta self), and 0 where beta self > threshold."""
    grad_output, x = ctx.saved_tensors
    beta, threshold = ctx.params
    g_grad = softplus_backward(grad, x, beta, threshold) if ctx.needs_input_grad[0] else None
    g_x = None
    if ctx.needs_input_grad[1]:
        s = sigmoid(mul_scalar(x, beta))
        curve = mul_scalar(mul(mul(grad, grad_output), mul(s, rsub_scalar(s, 1))), beta)
        g_x = where(comparison.gt_scalar(mul_scalar(x, beta), threshold), factories.zeros_like(curve), curve)
    return g_grad, g_x, None, None


softplus_backward: Op
softplus: Op = defop("softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", tags=NONCORE_POINTWISE,
                     **pointwise("od::softplus", _softplus, promoted=_SELF), setup_context=_softplus_setup,
                     backward=lambda ctx, g: (softplus_backward(g, ctx.saved_tensors[0], *ctx.params), None, None))
softplus_backward = defop("softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor",
                          tags=PT2, **pointwise("od::softplus_backward", _softplus_backward, promoted=slice(0, 2)),
                          setup_context=_pair_setup, backward=_softplus_backward_backward)
