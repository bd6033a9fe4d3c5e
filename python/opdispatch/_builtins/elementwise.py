"""Elementwise operators: NumPy functions with PyTorch's broadcasting and
type promotion (Note [Elementwise type promotion] in _pointwise.py). Autograd
formulas are written with ``od`` operators so they can be differentiated
again, and give each input a gradient of its own dtype.
PyTorch: tools/autograd/derivatives.yaml."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from .. import _C
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import check_inplace as check_inplace_autograd
from . import comparison, copy, factories, reduction
from ._numpy import check_inplace, meta_like
from ._pointwise import call_elementwise, fast_path, inplace, operands, pointwise, unary, with_alpha
from ._output_strides import elementwise_strides
from ._registry import INPLACE_POINTWISE, NONCORE_POINTWISE, POINTWISE, Op, defop
from .._ops import Tag
from .._tensor_type import Tensor


def _alpha_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    """Saves alpha (keyword-only in the Tensor overloads, positional in the Scalar ones) unless it is 1."""
    alpha = inputs[2] if len(inputs) > 2 else keyword_only_inputs.get("alpha", 1)
    if alpha != 1:
        ctx.alpha = alpha


def _save_inputs(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(*[x for x in inputs if isinstance(x, Tensor)])
    ctx.scalars = [x for x in inputs if not isinstance(x, Tensor)]


def _save_output(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(output)


def _save_self(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0])


def _scaled(grad: Tensor, alpha: Any) -> Tensor:
    return grad if alpha == 1 else mul_scalar(grad, alpha)


def as_dtype(grad: Tensor, dtype: Any) -> Tensor:
    """``grad`` in ``dtype`` (the dtype of the input it is the gradient of)."""
    return grad if grad.dtype == dtype else copy.to_copy(grad, dtype=dtype)


def input_grad(grad: Tensor, like: Tensor) -> Tensor:
    """``grad`` summed to ``like``'s shape and cast to its dtype: the gradient
    of an input that broadcasting may have expanded and promotion may have cast."""
    return as_dtype(reduction.sum_to(grad, like.shape), like.dtype)


# --- add, sub, mul, div ----------------------------------------------------------
# Note [Gradients of broadcast and promoted inputs]
# A formula may give an input the gradient in the shape and dtype of the
# output it came from when broadcasting expanded the input or promotion
# changed its dtype: the engine sums such a gradient down to the input's
# shape and casts it to the input's dtype, as PyTorch's validate_outputs
# does (add's formula there is "self: grad"). Formulas whose own arithmetic
# would change the dtype (an integer intermediate, say) cast themselves.


def _add_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """See Note [Gradients of broadcast and promoted inputs]."""
    alpha = getattr(ctx, "alpha", 1)
    needs = ctx.needs_input_grad
    return grad if needs[0] else None, (_scaled(grad, alpha) if needs[1] else None)


def _sub_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """See Note [Gradients of broadcast and promoted inputs]."""
    alpha = getattr(ctx, "alpha", 1)
    needs = ctx.needs_input_grad
    return grad if needs[0] else None, (mul_scalar(grad, -alpha) if needs[1] else None)


add: Op = defop("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", tags=POINTWISE,
                **with_alpha("od::add.Tensor", np.add), backward=_add_backward, setup_context=_alpha_setup)
sub: Op = defop("sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", tags=POINTWISE,
                **with_alpha("od::sub.Tensor", np.subtract), backward=_sub_backward, setup_context=_alpha_setup)
add_scalar: Op = defop("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", tags=POINTWISE,
                       **with_alpha("od::add.Scalar", np.add), backward=lambda ctx, grad: (grad, None, None))
sub_scalar: Op = defop("sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", tags=POINTWISE,
                       **with_alpha("od::sub.Scalar", np.subtract), backward=lambda ctx, grad: (grad, None, None))


def _rsub(self: Any, other: Any, alpha: Any = 1) -> Any:
    return np.subtract(other, self if alpha == 1 else np.multiply(self, alpha))


rsub_scalar: Op = defop("rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", tags=NONCORE_POINTWISE,
                        **pointwise("od::rsub.Scalar", _rsub, promoted=slice(0, 2)), setup_context=_alpha_setup,
                        backward=lambda ctx, grad: (mul_scalar(grad, -getattr(ctx, "alpha", 1)), None, None))


def _conj(t: Tensor) -> Tensor:
    """The complex conjugate of a complex tensor (od::conj_physical); any other tensor itself."""
    return conj_physical(t) if t.dtype.is_complex else t


# Note [Complex gradients]
# A gradient here is PyTorch's: for a real loss L of complex z, the gradient is dL/d(conj z) (twice the Wirtinger
# derivative), so the chain rule through a holomorphic function f passes grad * conj(f'(z)) back to z, not
# grad * f'(z) (PyTorch: derivatives.yaml writes ".conj()" after each such derivative; "Autograd for Complex
# Numbers" in its documentation). times_conj and over_conj are that rule, for the formulas that multiply or divide
# grad by the derivative; for real tensors the conjugate is the tensor itself and nothing is computed for it.


def times_conj(grad: Tensor, derivative: Tensor) -> Tensor:
    """``grad * conj(derivative)``: the gradient through a holomorphic function of derivative ``derivative``
    (Note [Complex gradients])."""
    return mul(grad, _conj(derivative))


def over_conj(grad: Tensor, divisor: Tensor) -> Tensor:
    """``grad / conj(divisor)``: the gradient through a holomorphic function of derivative ``1 / divisor``
    (Note [Complex gradients])."""
    return div(grad, _conj(divisor))


def _mul_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """grad times the other factor's conjugate (for real tensors the factor itself).
    PyTorch: mul_tensor_backward (FunctionsManual.cpp)."""
    self, other = ctx.saved_tensors
    g_self = input_grad(times_conj(grad, other), self) if ctx.needs_input_grad[0] else None
    g_other = input_grad(times_conj(grad, self), other) if ctx.needs_input_grad[1] else None
    return g_self, g_other


def _div_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """grad / conj(other), and -grad * conj(self / other**2) (Note [Complex gradients]).
    PyTorch: div_tensor_self_backward, div_tensor_other_backward."""
    self, other = ctx.saved_tensors
    g_self = g_other = None
    if ctx.needs_input_grad[0]:
        g_self = input_grad(over_conj(grad, other), self)
    if ctx.needs_input_grad[1]:
        g_other = input_grad(neg(times_conj(grad, div(self, mul(other, other)))), other)
    return g_self, g_other


def _scalar_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.scalar = inputs[1]


mul: Op = defop("mul.Tensor(Tensor self, Tensor other) -> Tensor", tags=POINTWISE, **pointwise("od::mul.Tensor", np.multiply),
                backward=_mul_backward, setup_context=_save_inputs)
div: Op = defop("div.Tensor(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                **pointwise("od::div.Tensor", np.true_divide, int_to_float=True), backward=_div_backward, setup_context=_save_inputs)
mul_scalar: Op = defop("mul.Scalar(Tensor self, Scalar other) -> Tensor", tags=POINTWISE,
                       **pointwise("od::mul.Scalar", np.multiply), setup_context=_scalar_setup,
                       backward=lambda ctx, grad: (mul_scalar(grad, ctx.scalar), None))
div_scalar: Op = defop("div.Scalar(Tensor self, Scalar other) -> Tensor", tags=POINTWISE,
                       **pointwise("od::div.Scalar", np.true_divide, int_to_float=True), setup_context=_scalar_setup,
                       backward=lambda ctx, grad: (div_scalar(grad, ctx.scalar), None))

# --- pow ---------------------------------------------------------------------------


def _pow_tensor_scalar_backward(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    (self,) = ctx.saved_tensors
    exponent = ctx.scalars[0]
    if exponent == 0:
        return factories.zeros_like(self), None
    return input_grad(times_conj(grad, mul_scalar(pow_tensor_scalar(self, exponent - 1), exponent)), self), None


def _pow_exponent_grad(grad: Tensor, out: Tensor, log_base: Tensor, base_is_zero: Tensor, exponent: Tensor) -> Tensor:
    """grad * out * log(base), with 0 where base == 0 and exponent >= 0 (where
    the limit is 0, not nan). PyTorch: pow_backward_exponent."""
    masked = mul(base_is_zero, comparison.ge_scalar(exponent, 0))
    return where(masked, factories.zeros_like(grad), times_conj(grad, mul(out, log_base)))


def _pow_tensor_tensor_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0], inputs[1], output)


def _pow_tensor_tensor_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    self, exponent, out = ctx.saved_tensors
    g_self = g_exp = None
    if ctx.needs_input_grad[0]:
        d_self = mul(exponent, pow_tensor_tensor(self, sub_scalar(exponent, 1)))
        g_self = input_grad(times_conj(grad, d_self), self)
    if ctx.needs_input_grad[1]:
        g_exp = _pow_exponent_grad(grad, out, log(self), comparison.eq_scalar(self, 0), exponent)
        g_exp = input_grad(g_exp, exponent)
    return g_self, g_exp


def _pow_scalar_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.base = inputs[0]
    ctx.save_for_backward(inputs[1], output)


def _pow_scalar_backward(ctx: Any, grad: Tensor) -> tuple[None, Any]:
    exponent, out = ctx.saved_tensors
    if ctx.base == 0:
        at_zero = mul_scalar(mul(grad, out), -math.inf)
        g = where(comparison.ge_scalar(exponent, 0), factories.zeros_like(grad), at_zero)
    else:
        g = mul_scalar(times_conj(grad, out), math.log(ctx.base))
    return None, as_dtype(g, exponent.dtype)


pow_tensor_scalar: Op = defop("pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", tags=POINTWISE,
                              **pointwise("od::pow.Tensor_Scalar", np.power),
                              backward=_pow_tensor_scalar_backward, setup_context=_save_inputs)
pow_tensor_tensor: Op = defop("pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", tags=POINTWISE,
                              **pointwise("od::pow.Tensor_Tensor", np.power),
                              backward=_pow_tensor_tensor_backward, setup_context=_pow_tensor_tensor_setup)
pow_scalar: Op = defop("pow.Scalar(Scalar self, Tensor exponent) -> Tensor", tags=POINTWISE,
                       **pointwise("od::pow.Scalar", np.power, follows_inputs=False),
                       backward=_pow_scalar_backward, setup_context=_pow_scalar_setup)

# --- unary ---------------------------------------------------------------------------


def _unary(schema: str, fn: Callable[[Any], Any], backward: Callable[..., Any],
           setup_context: Optional[Callable[..., None]], *, int_to_float: bool = True) -> Op:
    """A core pointwise operator of one tensor; ``int_to_float``: integer inputs compute in float32
    (see Note [Elementwise type promotion] in _pointwise.py)."""
    name = "od::" + schema.split("(", 1)[0]
    return defop(schema, tags=POINTWISE, **unary(name, fn, int_to_float=int_to_float), backward=backward,
                 setup_context=setup_context)


def _sigmoid(a: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "c":  # no overflow-safe split by sign for complex numbers: 1 / (1 + exp(-a)), as PyTorch's
        complex_sigmoid: np.ndarray = 1 / (1 + np.exp(-a))
        return complex_sigmoid
    # exp(-|a|) never overflows; the two branches are the same function.
    e = np.exp(-np.abs(a))
    sigmoid: np.ndarray = np.where(a >= 0, 1 / (1 + e), e / (1 + e))
    return sigmoid


def _one_minus(t: Tensor) -> Tensor:
    return rsub_scalar(t, 1)


def _saved(ctx: Any) -> Tensor:
    saved: Tensor = ctx.saved_tensors[0]
    return saved


def _abs_backward(ctx: Any, grad: Tensor) -> Tensor:
    """grad * sgn(self), 0 at 0: sign(self) for a real self, self / |self| for a complex one
    (PyTorch: abs_backward's sgn, FunctionsManual.cpp)."""
    self = _saved(ctx)
    if self.dtype.is_complex:
        magnitude = abs(self)
        return mul(grad, div(self, add(magnitude, comparison.eq_scalar(magnitude, 0))))  # 0 / (0 + 1) at 0
    return sub(mul(grad, comparison.gt_scalar(self, 0)), mul(grad, comparison.lt_scalar(self, 0)))


neg: Op = _unary("neg(Tensor self) -> Tensor", np.negative, lambda ctx, grad: neg(grad), None, int_to_float=False)


def _conj_physical_cpu(self: Tensor) -> Tensor:
    """The conjugate of a complex tensor, in new memory; any other tensor is returned itself (PyTorch:
    conj_physical, whence the maybe_aliasing_or_mutating tag)."""
    return call_elementwise("od::conj_physical", np.conjugate, self) if self.dtype.is_complex else self


def _conj_physical_meta(self: Tensor) -> Tensor:
    return meta_like(self.shape, self.dtype, elementwise_strides(self.shape, [self])) if self.dtype.is_complex else self


conj_physical: Op = defop("conj_physical(Tensor self) -> Tensor",
                          tags=(Tag.maybe_aliasing_or_mutating, Tag.pointwise, Tag.pt2_compliant_tag),
                          cpu=_conj_physical_cpu, meta=_conj_physical_meta,
                          backward=lambda ctx, grad: conj_physical(grad))
# Note [Complex gradients]: the gradient of a holomorphic function is grad times its derivative's conjugate.
exp: Op = _unary("exp(Tensor self) -> Tensor", np.exp, lambda ctx, grad: times_conj(grad, _saved(ctx)), _save_output)
log: Op = _unary("log(Tensor self) -> Tensor", np.log, lambda ctx, grad: over_conj(grad, _saved(ctx)), _save_self)
sin: Op = _unary("sin(Tensor self) -> Tensor", np.sin, lambda ctx, grad: times_conj(grad, cos(_saved(ctx))),
                 _save_self)
cos: Op = _unary("cos(Tensor self) -> Tensor", np.cos, lambda ctx, grad: neg(times_conj(grad, sin(_saved(ctx)))),
                 _save_self)
tanh: Op = _unary("tanh(Tensor self) -> Tensor", np.tanh,
                  lambda ctx, grad: times_conj(grad, _one_minus(mul(_saved(ctx), _saved(ctx)))), _save_output)
sigmoid: Op = _unary("sigmoid(Tensor self) -> Tensor", _sigmoid,
                     lambda ctx, grad: times_conj(grad, mul(_saved(ctx), _one_minus(_saved(ctx)))), _save_output)
abs: Op = _unary("abs(Tensor self) -> Tensor", np.abs, _abs_backward, _save_self, int_to_float=False)  # noqa: A001  (the operator's name)
sqrt: Op = _unary("sqrt(Tensor self) -> Tensor", np.sqrt,
                  lambda ctx, grad: over_conj(grad, mul_scalar(_saved(ctx), 2)), _save_output)

# --- relu and its gradient -----------------------------------------------------------------------


def _threshold_backward(grad: Any, self: Any, threshold: Any) -> Any:
    # "self <= threshold", not "self > threshold": a nan input passes its gradient, as in PyTorch.
    return np.where(self <= threshold, 0, grad)


def _threshold_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None]:
    """PyTorch: derivatives.yaml threshold_backward."""
    (self,) = ctx.saved_tensors
    g_grad = threshold_backward(grad, self, ctx.threshold) if ctx.needs_input_grad[0] else None
    return g_grad, factories.zeros_like(self) if ctx.needs_input_grad[1] else None, None


def _threshold_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[1])
    ctx.threshold = inputs[2]


threshold_backward: Op = defop("threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor",
                               tags=NONCORE_POINTWISE,
                               **pointwise("od::threshold_backward", _threshold_backward, promoted=slice(0, 2)),
                               backward=_threshold_backward_backward, setup_context=_threshold_backward_setup)


#: A read-only 0-d zero of each dtype, by its NumPy character code: relu's other operand (a Python 0 costs
#: NumPy a scalar conversion per call).
_ZEROS = {np.dtype(d).char: np.zeros((), d) for d in (
    np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64, np.complex64,
    np.complex128)}
for _zero in _ZEROS.values():
    _zero.flags.writeable = False


def _relu(a: np.ndarray) -> np.ndarray:
    relu: np.ndarray = np.maximum(a, _ZEROS[a.dtype.char])
    return relu


def _relu_cpu(self: Tensor) -> Tensor:
    return call_elementwise("od::relu", _relu, self)


# relu(x) <= 0 exactly where x <= 0: the formula keeps the input (PyTorch keeps the result, for relu_).
relu: Op = defop("relu(Tensor self) -> Tensor", tags=POINTWISE,
                 **fast_path({"cpu": _relu_cpu, "meta": unary("od::relu", _relu)["meta"]}, _relu, 1, contiguous=True),
                 backward=lambda ctx, grad: threshold_backward(grad, _saved(ctx), 0), setup_context=_save_self)

# --- maximum, minimum, where ------------------------------------------------------------


def _extremum_backward(wins: Callable[..., Tensor], loses: Callable[..., Tensor]) -> Callable[..., tuple[Any, Any]]:
    """maximum/minimum: the gradient goes to the winning input, half to each on a tie.
    PyTorch: derivatives.yaml ``maximum``."""

    def backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
        self, other = ctx.saved_tensors
        tie = comparison.eq(self, other)
        half = mul_scalar(grad, 0.5)
        g_self = input_grad(where(tie, half, mul(grad, wins(self, other))), self)
        g_other = input_grad(where(tie, half, mul(grad, loses(self, other))), other)
        return g_self, g_other

    return backward


def _where(condition: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if condition.dtype != np.bool_:
        raise RuntimeError(f"od::where.self: expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{condition.dtype}")
    return np.where(condition, a, b)


def _where_backward(ctx: Any, grad: Tensor) -> tuple[None, Any, Any]:
    (condition,) = ctx.saved_tensors
    _, (s_shape, s_dtype), (o_shape, o_dtype) = ctx.metas
    zero = factories.zeros_like(grad)
    g_self = as_dtype(reduction.sum_to(where(condition, grad, zero), s_shape), s_dtype)
    return None, g_self, as_dtype(reduction.sum_to(where(condition, zero, grad), o_shape), o_dtype)


def _where_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0])
    ctx.metas = [(x.shape, x.dtype) for x in inputs]


maximum: Op = defop("maximum(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                    **pointwise("od::maximum", np.maximum),
                    backward=_extremum_backward(lambda a, b: comparison.gt(a, b), lambda a, b: comparison.lt(a, b)),
                    setup_context=_save_inputs)
minimum: Op = defop("minimum(Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                    **pointwise("od::minimum", np.minimum),
                    backward=_extremum_backward(lambda a, b: comparison.lt(a, b), lambda a, b: comparison.gt(a, b)),
                    setup_context=_save_inputs)
where: Op = defop("where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", tags=POINTWISE,
                  **pointwise("od::where.self", _where, promoted=slice(1, 3)), backward=_where_backward, setup_context=_where_setup)

# --- in place ------------------------------------------------------------------------------


def inplace_autograd(name: str, functional: Callable[..., Tensor]) -> Callable[[Any], Callable[..., Tensor]]:
    """The Autograd kernel of an in-place arithmetic operator: records
    ``self.copy_(op(self.clone(), *args))`` — the functional operator's
    formula (on a clone, so the values it saves are never overwritten) and
    copy_'s — so ``self``'s grad_fn becomes copy_'s node. Raises RuntimeError
    for a leaf that requires grad, or a result that cannot be written to
    ``self`` (shape or dtype). PyTorch derives in-place formulas from the same
    derivatives.yaml entries."""

    def make(op: Op) -> Callable[..., Tensor]:
        def kernel(keyset: _C.DispatchKeySet, self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
            if not is_grad_enabled() or not (self.requires_grad or any(t.requires_grad for t in operands(args))):
                return op._redispatch_below_autograd(keyset, self, *args, **kwargs)
            check_inplace_autograd(name, self, rebases_views=True)  # copy_ rebases a view's history
            result = functional(copy.clone(self), *args, **kwargs)
            check_inplace(name, self, result.shape, result.dtype)
            return copy.copy_(self, result)

        kernel.__name__ = name.replace("od::", "").replace(".", "_") + "_autograd"
        return kernel

    return make


def _define_inplace(schema: str, ufunc: np.ufunc, functional: Callable[..., Tensor]) -> Op:
    name = "od::" + schema.split("(", 1)[0]
    return defop(schema, tags=INPLACE_POINTWISE, **inplace(name, ufunc, int_to_float=ufunc is np.true_divide),
                 autograd=inplace_autograd(name, functional))


add_: Op = _define_inplace("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", np.add, add)
sub_: Op = _define_inplace("sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)", np.subtract,
                           sub)
mul_: Op = _define_inplace("mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", np.multiply, mul)
div_: Op = _define_inplace("div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", np.true_divide, div)
add_scalar_: Op = _define_inplace("add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)", np.add,
                                  add_scalar)
sub_scalar_: Op = _define_inplace("sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)",
                                  np.subtract, sub_scalar)
mul_scalar_: Op = _define_inplace("mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", np.multiply, mul_scalar)
div_scalar_: Op = _define_inplace("div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)", np.true_divide,
                                  div_scalar)
pow_: Op = _define_inplace("pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", np.power, pow_tensor_tensor)
pow_scalar_: Op = _define_inplace("pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", np.power,
                                  pow_tensor_scalar)
