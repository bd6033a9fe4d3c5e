"""Normalisation: the Core ATen operators of batch norm
(_native_batch_norm_legit with running statistics updated in place, its
no_stats overload, _native_batch_norm_legit_no_training), layer norm
(native_layer_norm) and group norm (native_group_norm), each returning the
output and the saved mean and inverse standard deviation; their gradient
operators (native_batch_norm_backward, native_layer_norm_backward,
native_group_norm_backward); and batch_norm, layer_norm, group_norm as
CompositeImplicitAutograd decompositions, as PyTorch splits them.

All three normalise ``x`` over groups of elements: ``xhat = (x - mean) *
rstd``, ``rstd = 1 / sqrt(var + eps)`` (biased variance), then ``xhat *
weight + bias`` per channel (per element for layer norm). The kernels view
the input as ``(outer, groups, inner)`` so that one NumPy reduction over
axes gives every statistic."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .. import _C
from . import elementwise, reduction, views
from ._numpy import call_numpy, call_numpy_triple, check_device, meta_like, opmath_dtype
from ._registry import CORE, PT2, Op, defop, differentiable_decomposition
from .._ops import Tag
from .._tensor_type import Tensor


def _stats(x: np.ndarray, axes: tuple[int, ...], eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, biased variance, rstd) of x over ``axes`` (kept), in x's opmath dtype."""
    x = x.astype(opmath_dtype(x.dtype), copy=False)
    mean = np.mean(x, axis=axes, keepdims=True)
    var = np.mean(np.square(x - mean), axis=axes, keepdims=True)
    return mean, var, 1 / np.sqrt(var + eps)


def _affine(xhat: np.ndarray, weight: Optional[np.ndarray], bias: Optional[np.ndarray], shape: Sequence[int]
            ) -> np.ndarray:
    """xhat * weight + bias, the parameters reshaped to ``shape`` to broadcast."""
    if weight is not None:
        xhat = xhat * weight.reshape(shape)
    if bias is not None:
        xhat = xhat + bias.reshape(shape)
    return xhat


def _grad_of_normalized(g: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The gradient of x given the gradient ``g`` of xhat = (x - mean) * rstd
    with the statistics taken over ``axes``: rstd * (g - mean(g) - xhat * mean(g * xhat))."""
    grad: np.ndarray = rstd * (g - np.mean(g, axis=axes, keepdims=True)
                               - xhat * np.mean(g * xhat, axis=axes, keepdims=True))
    return grad


def _unasked(dtype: np.dtype) -> np.ndarray:
    """See Note [Gradients not asked for] in convolution.py."""
    return np.empty(0, dtype)


def _parameter_grads(go: np.ndarray, xhat: np.ndarray, axes: tuple[int, ...], mask: Sequence[bool],
                     dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """(grad weight, grad bias): go * xhat and go summed over ``axes``, in ``dtype``."""
    gw = np.sum(go * xhat, axis=axes).astype(dtype, copy=False) if mask[1] else _unasked(dtype)
    gb = np.sum(go, axis=axes).astype(dtype, copy=False) if mask[2] else _unasked(dtype)
    return gw, gb


def _optional(*tensors: Optional[Tensor]) -> list[Tensor]:
    return [t for t in tensors if t is not None]


def _check_channels(op: str, name: str, t: Optional[Tensor], channels: int) -> None:
    if t is not None and list(t.shape) != [channels]:
        raise RuntimeError(f"{op}: expected {name} to be a tensor of {channels} elements (one per channel), got "
                           f"shape {list(t.shape)}")


# --- batch norm ------------------------------------------------------------------------------------------


def _check_batch_norm(op: str, input: Tensor, *per_channel: tuple[str, Optional[Tensor]]) -> None:
    if input.ndim < 2 or input.numel() == 0:
        raise RuntimeError(f"{op}: input tensor must have at least two dimensions and one element, but got "
                           f"input_sizes = {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {input.dtype}")
    for name, t in per_channel:
        _check_channels(op, name, t, input.shape[1])


def _channel_axes(ndim: int) -> tuple[int, ...]:
    return (0, *range(2, ndim))


def _channel_shape(ndim: int) -> list[int]:
    return [1, -1, *([1] * (ndim - 2))]


def _batch_norm_training(x: np.ndarray, weight: Optional[np.ndarray], bias: Optional[np.ndarray],
                         running_mean: Optional[np.ndarray], running_var: Optional[np.ndarray], momentum: float,
                         eps: float, stats_dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalises with the batch's statistics per channel and, when given,
    moves the running statistics toward them (the variance unbiased); the
    saved statistics are returned in ``stats_dtype`` (_stats_dtype)."""
    axes = _channel_axes(x.ndim)
    mean, var, rstd = _stats(x, axes, eps)
    # PyTorch normalises with the statistics it saves, rounded to their dtype (float16 for an all-float16 call).
    saved_mean, saved_rstd = mean.astype(stats_dtype, copy=False), rstd.astype(stats_dtype, copy=False)
    xhat = (x - saved_mean.astype(mean.dtype, copy=False)) * saved_rstd.astype(rstd.dtype, copy=False)
    out = _affine(xhat, weight, bias, _channel_shape(x.ndim)).astype(x.dtype, copy=False)
    if running_mean is not None and running_var is not None:
        n = x.size // x.shape[1]
        running_mean *= 1 - momentum
        running_mean += momentum * mean.reshape(-1)
        running_var *= 1 - momentum
        running_var += momentum * var.reshape(-1) * n / (n - 1)
    return out, saved_mean.reshape(-1), saved_rstd.reshape(-1)


def _batch_norm_eval(x: np.ndarray, weight: Optional[np.ndarray], bias: Optional[np.ndarray],
                     running_mean: np.ndarray, running_var: np.ndarray, eps: float) -> np.ndarray:
    shape = _channel_shape(x.ndim)
    calc = opmath_dtype(x.dtype)
    mean, var = running_mean.astype(calc, copy=False), running_var.astype(calc, copy=False)
    xhat = (x.astype(calc, copy=False) - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps)
    out: np.ndarray = _affine(xhat, weight, bias, shape).astype(x.dtype, copy=False)
    return out


def _stats_dtype(input: Tensor, *params: Optional[Tensor]) -> Any:
    """The dtype of batch norm's saved statistics: float32 for a float16
    input with a float32 parameter (weight, bias, running statistics), the
    input's dtype otherwise. PyTorch: batch_norm_cpu (is_mixed_type)."""
    mixed = input.dtype == _C.float16 and any(p is not None and p.dtype == _C.float32 for p in params)
    return _C.float32 if mixed else input.dtype


def _legit_cpu(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Tensor,
               running_var: Tensor, training: bool, momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    op = "od::_native_batch_norm_legit"
    _check_batch_norm(op, input, ("weight", weight), ("bias", bias), ("running_mean", running_mean),
                      ("running_var", running_var))
    if training:
        stats = _stats_dtype(input, weight, bias, running_mean, running_var).to_numpy()
        result = call_numpy_triple(_batch_norm_training, input, weight, bias, running_mean,
                                                           running_var, momentum, eps, stats)
        return result
    empty = _C.empty((0,), dtype=_stats_dtype(input, weight, bias, running_mean, running_var))
    return call_numpy(_batch_norm_eval, input, weight, bias, running_mean, running_var, eps), empty, empty


def _legit_meta(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Tensor,
                running_var: Tensor, training: bool, momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    op = "od::_native_batch_norm_legit"
    check_device(op, input, running_mean, running_var, *_optional(weight, bias))
    _check_batch_norm(op, input, ("weight", weight), ("bias", bias), ("running_mean", running_mean),
                      ("running_var", running_var))
    n = input.shape[1] if training else 0
    stats = _stats_dtype(input, weight, bias, running_mean, running_var)
    return meta_like(input.shape, input.dtype), meta_like((n,), stats), meta_like((n,), stats)


def _no_stats_cpu(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], training: bool, momentum: float,
                  eps: float) -> tuple[Tensor, Tensor, Tensor]:
    _check_no_stats(input, weight, bias, training)
    result = call_numpy_triple(_batch_norm_training, input, weight, bias, None, None,
                                                       momentum, eps, _stats_dtype(input, weight, bias).to_numpy())
    return result


def _check_no_stats(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], training: bool) -> None:
    op = "od::_native_batch_norm_legit.no_stats"
    if not training:
        raise RuntimeError(f"{op}: training=False needs running statistics: call _native_batch_norm_legit_no_training")
    _check_batch_norm(op, input, ("weight", weight), ("bias", bias))


def _no_stats_meta(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], training: bool, momentum: float,
                   eps: float) -> tuple[Tensor, Tensor, Tensor]:
    check_device("od::_native_batch_norm_legit.no_stats", input, *_optional(weight, bias))
    _check_no_stats(input, weight, bias, training)
    c, stats = input.shape[1], _stats_dtype(input, weight, bias)
    return meta_like(input.shape, input.dtype), meta_like((c,), stats), meta_like((c,), stats)


def _no_training_cpu(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Tensor,
                     running_var: Tensor, momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    _check_batch_norm("od::_native_batch_norm_legit_no_training", input, ("weight", weight), ("bias", bias),
                      ("running_mean", running_mean), ("running_var", running_var))
    empty = _C.empty((0,), dtype=_stats_dtype(input, weight, bias, running_mean, running_var))
    return call_numpy(_batch_norm_eval, input, weight, bias, running_mean, running_var, eps), empty, empty


def _no_training_meta(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Tensor,
                      running_var: Tensor, momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    op = "od::_native_batch_norm_legit_no_training"
    check_device(op, input, running_mean, running_var, *_optional(weight, bias))
    _check_batch_norm(op, input, ("weight", weight), ("bias", bias), ("running_mean", running_mean),
                      ("running_var", running_var))
    stats = _stats_dtype(input, weight, bias, running_mean, running_var)
    return meta_like(input.shape, input.dtype), meta_like((0,), stats), meta_like((0,), stats)


def _batch_norm_formula(training: Optional[bool], with_stats: bool) -> tuple[Callable[..., None], Callable[..., Any]]:
    """(setup_context, backward) of one of the three batch norm operators:
    native_batch_norm_backward with the saved statistics. ``training`` None:
    the operator's own argument. PyTorch: derivatives.yaml _native_batch_norm_legit*."""

    def setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        input, weight = inputs[0], inputs[1]
        running = (inputs[3], inputs[4]) if with_stats else (None, None)
        ctx.training = inputs[5 if with_stats else 3] if training is None else training
        ctx.eps = inputs[-1]
        ctx.mark_non_differentiable(output[1], output[2])
        ctx.save_for_backward(input, weight, *running, output[1], output[2])

    def backward(ctx: Any, grad: Optional[Tensor], *_: Any) -> tuple[Any, ...]:
        input, weight, running_mean, running_var, save_mean, save_invstd = ctx.saved_tensors
        n_args = 8 if with_stats and training is None else 7 if with_stats else 6
        if grad is None:
            return (None,) * n_args
        mask = [bool(m) for m in ctx.needs_input_grad[:3]]
        gi, gw, gb = native_batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean,
                                                save_invstd, ctx.training, ctx.eps, mask)
        return (gi if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None) + (None,) * (n_args - 3)

    return setup, backward


_legit_setup, _legit_backward = _batch_norm_formula(None, True)
_no_stats_setup, _no_stats_backward = _batch_norm_formula(None, False)
_no_training_setup, _no_training_backward = _batch_norm_formula(False, True)


def _batch_norm_backward_of(go: np.ndarray, x: np.ndarray, weight: Optional[np.ndarray],
                            running_mean: Optional[np.ndarray], running_var: Optional[np.ndarray],
                            save_mean: Optional[np.ndarray], save_invstd: Optional[np.ndarray], train: bool,
                            eps: float, mask: Sequence[bool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    shape = _channel_shape(x.ndim)
    axes = _channel_axes(x.ndim)
    calc = opmath_dtype(x.dtype)
    if train:
        assert save_mean is not None and save_invstd is not None  # checked by the caller
        mean, rstd = save_mean.reshape(shape), save_invstd.reshape(shape)
    else:
        assert running_mean is not None and running_var is not None
        mean, rstd = running_mean.reshape(shape), 1 / np.sqrt(running_var.reshape(shape) + eps)
    go32 = go.astype(calc, copy=False)
    xhat = (x.astype(calc, copy=False) - mean) * rstd
    scale = 1 if weight is None else weight.reshape(shape)
    if not mask[0]:
        gi = _unasked(x.dtype)
    elif train:
        gi = (_grad_of_normalized(go32, xhat, rstd, axes) * scale).astype(x.dtype, copy=False)
    else:
        gi = (go32 * rstd * scale).astype(x.dtype, copy=False)
    param_dtype = x.dtype if weight is None else weight.dtype
    return (gi, *_parameter_grads(go32, xhat, axes, mask, param_dtype))


def _check_batch_norm_backward(op: str, grad_out: Tensor, input: Tensor, weight: Optional[Tensor],
                               running_mean: Optional[Tensor], running_var: Optional[Tensor],
                               save_mean: Optional[Tensor], save_invstd: Optional[Tensor], train: bool) -> None:
    _check_batch_norm(op, input, ("weight", weight))
    if list(grad_out.shape) != list(input.shape):
        raise RuntimeError(f"{op}: expected grad_out of the input's shape {list(input.shape)}, got "
                           f"{list(grad_out.shape)}")
    needed = ((("save_mean", save_mean), ("save_invstd", save_invstd)) if train else
              (("running_mean", running_mean), ("running_var", running_var)))
    for name, t in needed:
        if t is None:
            raise RuntimeError(f"{op}: {name} must be given when train={train}")
        _check_channels(op, name, t, input.shape[1])


def _batch_norm_backward_cpu(grad_out: Tensor, input: Tensor, weight: Optional[Tensor],
                             running_mean: Optional[Tensor], running_var: Optional[Tensor],
                             save_mean: Optional[Tensor], save_invstd: Optional[Tensor], train: bool, eps: float,
                             output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    _check_batch_norm_backward("od::native_batch_norm_backward", grad_out, input, weight, running_mean, running_var,
                               save_mean, save_invstd, train)
    result = call_numpy_triple(_batch_norm_backward_of, grad_out, input, weight, running_mean,
                                                       running_var, save_mean, save_invstd, train, eps,
                                                       list(output_mask))
    return result


def _grads_meta(input: Tensor, param_shape: Sequence[int], param_dtype: Any, mask: Sequence[bool]
                ) -> tuple[Tensor, Tensor, Tensor]:
    return (meta_like(input.shape if mask[0] else (0,), input.dtype),
            meta_like(param_shape if mask[1] else (0,), param_dtype),
            meta_like(param_shape if mask[2] else (0,), param_dtype))


def _batch_norm_backward_meta(grad_out: Tensor, input: Tensor, weight: Optional[Tensor],
                              running_mean: Optional[Tensor], running_var: Optional[Tensor],
                              save_mean: Optional[Tensor], save_invstd: Optional[Tensor], train: bool, eps: float,
                              output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    op = "od::native_batch_norm_backward"
    check_device(op, grad_out, input, *_optional(weight, running_mean, running_var, save_mean, save_invstd))
    _check_batch_norm_backward(op, grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train)
    return _grads_meta(input, (input.shape[1],), input.dtype if weight is None else weight.dtype, output_mask)


# Note [Double backward by decomposition]
# The gradient operators of the normalisations are differentiable too
# (PyTorch: batchnorm_double_backward, layer_norm_double_backward, ...
# in FunctionsManual.cpp). Here their Autograd kernel computes the same
# gradients with differentiable od operators when an input requires grad, so
# autograd records that computation and differentiates it; otherwise it
# runs the NumPy kernel below autograd. The saved mean and rstd are the
# forward's outputs and carry no history, yet depend on the input: as
# PyTorch's formulas do, the decompositions differentiate through them as
# statistics of the input (_live_stats).


def _live_stats(x: Tensor, dims: list[int], mean: Tensor, rstd: Tensor) -> tuple[Tensor, Tensor]:
    """The given mean and rstd of x over ``dims`` (keepdim shapes), as values,
    with the gradients of mean(x) and (var(x) + eps)^-1/2 with respect to x
    (eps = 1/rstd^2 - var(x), held constant): each is ``value + f(x) -
    detach(f(x))``. See Note [Double backward by decomposition]."""
    live_mean = reduction.mean_dim(x, dims, True)
    centred = elementwise.sub(x, live_mean)
    var = reduction.mean_dim(elementwise.mul(centred, centred), dims, True)
    rstd = views.detach(rstd)
    eps = elementwise.sub(elementwise.pow_tensor_scalar(rstd, -2), views.detach(var))
    live_rstd = elementwise.pow_tensor_scalar(elementwise.add(var, eps), -0.5)

    def valued(value: Tensor, live: Tensor) -> Tensor:
        return elementwise.add(views.detach(value), elementwise.sub(live, views.detach(live)))

    return valued(mean, live_mean), valued(rstd, live_rstd)


def _normalized(x: Tensor, mean: Tensor, rstd: Tensor) -> Tensor:
    return elementwise.mul(elementwise.sub(x, mean), rstd)


def _grad_of_normalized_od(g: Tensor, xhat: Tensor, rstd: Tensor, dims: list[int]) -> Tensor:
    """_grad_of_normalized in od operators."""
    centred = elementwise.sub(g, reduction.mean_dim(g, dims, True))
    return elementwise.mul(rstd, elementwise.sub(centred, elementwise.mul(
        xhat, reduction.mean_dim(elementwise.mul(g, xhat), dims, True))))


def _empty_like_param(like: Tensor) -> Tensor:
    return _C.empty((0,), dtype=like.dtype, device=like.device)


def _parameter_grads_od(go: Tensor, xhat: Tensor, dims: list[int], shape: Sequence[int], mask: Sequence[bool],
                        like: Tensor) -> tuple[Tensor, Tensor]:
    gw = views.reshape(reduction.sum_dim(elementwise.mul(go, xhat), dims), list(shape)) if mask[1] \
        else _empty_like_param(like)
    gb = views.reshape(reduction.sum_dim(go, dims), list(shape)) if mask[2] else _empty_like_param(like)
    return gw, gb


def _batch_norm_backward_decomposed(grad_out: Tensor, input: Tensor, weight: Optional[Tensor],
                                    running_mean: Optional[Tensor], running_var: Optional[Tensor],
                                    save_mean: Optional[Tensor], save_invstd: Optional[Tensor], train: bool,
                                    eps: float, output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    """native_batch_norm_backward in differentiable od operators (Note [Double backward by decomposition])."""
    _check_batch_norm_backward("od::native_batch_norm_backward", grad_out, input, weight, running_mean, running_var,
                               save_mean, save_invstd, train)
    shape = _channel_shape(input.ndim)
    dims = list(_channel_axes(input.ndim))
    if train:
        assert save_mean is not None and save_invstd is not None
        mean, rstd = _live_stats(input, dims, views.reshape(save_mean, shape), views.reshape(save_invstd, shape))
    else:
        assert running_mean is not None and running_var is not None
        mean = views.reshape(running_mean, shape)
        rstd = elementwise.pow_tensor_scalar(elementwise.add_scalar(views.reshape(running_var, shape), eps), -0.5)
    xhat = _normalized(input, mean, rstd)
    g = grad_out if weight is None else elementwise.mul(grad_out, views.reshape(weight, shape))
    if not output_mask[0]:
        gi = _empty_like_param(input)
    else:
        gi = _grad_of_normalized_od(g, xhat, rstd, dims) if train else elementwise.mul(g, rstd)
    return (gi, *_parameter_grads_od(grad_out, xhat, dims, [input.shape[1]], output_mask,
                                     input if weight is None else weight))


native_batch_norm_backward = defop(
    "native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
    "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)", tags=PT2, cpu=_batch_norm_backward_cpu, meta=_batch_norm_backward_meta,
    autograd=differentiable_decomposition(_batch_norm_backward_decomposed))
_native_batch_norm_legit = defop(
    "_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, "
    "Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)", tags=CORE,
    cpu=_legit_cpu, meta=_legit_meta, backward=_legit_backward, setup_context=_legit_setup)
_native_batch_norm_legit_no_stats = defop(
    "_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, "
    "float eps) -> (Tensor, Tensor, Tensor)", tags=CORE,
    cpu=_no_stats_cpu, meta=_no_stats_meta, backward=_no_stats_backward, setup_context=_no_stats_setup)
_native_batch_norm_legit_no_training = defop(
    "_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, "
    "Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)", tags=CORE,
    cpu=_no_training_cpu, meta=_no_training_meta, backward=_no_training_backward, setup_context=_no_training_setup)


def _batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Optional[Tensor],
                running_var: Optional[Tensor], training: bool, momentum: float, eps: float,
                cudnn_enabled: bool) -> Tensor:
    """The batch norm operator for the case: with running statistics
    (updated in place when training), evaluation on them, or training on
    the batch alone. PyTorch: at::native::batch_norm (CompositeImplicitAutograd),
    as torch._decomp lowers native_batch_norm to the _legit operators."""
    if training and running_mean is None and running_var is None:
        return _native_batch_norm_legit_no_stats(input, weight, bias, True, momentum, eps)[0]
    if running_mean is None or running_var is None:
        missing = "running_mean" if running_mean is None else "running_var"
        if not training:
            raise RuntimeError(f"od::batch_norm: {missing} must be defined in evaluation mode")
        raise RuntimeError(f"od::batch_norm: give both running_mean and running_var, or neither ({missing} is None)")
    if training:
        return _native_batch_norm_legit(input, weight, bias, running_mean, running_var, True, momentum, eps)[0]
    return _native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var, momentum, eps)[0]


batch_norm: Op = defop(
    "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
    tags=(Tag.maybe_aliasing_or_mutating, Tag.pt2_compliant_tag), composite=_batch_norm)


# --- layer norm --------------------------------------------------------------------------------------------


def _check_layer_norm(op: str, input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor],
                      bias: Optional[Tensor]) -> int:
    """The first normalised dimension; RuntimeError with PyTorch's messages otherwise. PyTorch: _check_layer_norm_inputs."""
    shape = [int(s) for s in normalized_shape]
    if not shape:
        raise RuntimeError(f"{op}: Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
                           f"one element, but got normalized_shape = {shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and list(t.shape) != shape:
            raise RuntimeError(f"{op}: Expected {name} to be of same shape as normalized_shape, but got {name} of "
                               f"shape {list(t.shape)} and normalized_shape = {shape}")
    if input.ndim < len(shape) or list(input.shape)[input.ndim - len(shape):] != shape:
        raise RuntimeError(f"{op}: Given normalized_shape={shape}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {input.dtype}")
    return input.ndim - len(shape)


def _layer_norm_of(x: np.ndarray, axis: int, weight: Optional[np.ndarray], bias: Optional[np.ndarray], eps: float
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    axes = tuple(range(axis, x.ndim))
    if x.size == 0:
        stats = np.zeros((*x.shape[:axis], *([1] * len(axes))), x.dtype)
        return np.empty(x.shape, x.dtype), stats, stats.copy()
    mean, _, rstd = _stats(x, axes, eps)
    shape = x.shape[axis:]
    out = _affine((x - mean) * rstd, weight, bias, shape).astype(x.dtype, copy=False)
    return out, mean.astype(x.dtype, copy=False), rstd.astype(x.dtype, copy=False)


def _layer_norm_cpu(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor], bias: Optional[Tensor],
                    eps: float) -> tuple[Tensor, Tensor, Tensor]:
    axis = _check_layer_norm("od::native_layer_norm", input, normalized_shape, weight, bias)
    result = call_numpy_triple(_layer_norm_of, input, axis, weight, bias, eps)
    return result


def _stats_shape(input: Tensor, axis: int) -> list[int]:
    return [*input.shape[:axis], *([1] * (input.ndim - axis))]


def _layer_norm_meta(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor],
                     bias: Optional[Tensor], eps: float) -> tuple[Tensor, Tensor, Tensor]:
    check_device("od::native_layer_norm", input, *_optional(weight, bias))
    axis = _check_layer_norm("od::native_layer_norm", input, normalized_shape, weight, bias)
    stats = _stats_shape(input, axis)
    return meta_like(input.shape, input.dtype), meta_like(stats, input.dtype), meta_like(stats, input.dtype)


def _layer_norm_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, ctx.normalized_shape, weight, bias, _ = inputs
    ctx.mark_non_differentiable(output[1], output[2])
    ctx.save_for_backward(input, weight, bias, output[1], output[2])


def _layer_norm_backward(ctx: Any, grad: Optional[Tensor], *_: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml native_layer_norm (native_layer_norm_backward)."""
    if grad is None:
        return (None,) * 5
    input, weight, bias, mean, rstd = ctx.saved_tensors
    needs = ctx.needs_input_grad
    mask = [bool(needs[0]), bool(needs[2]), bool(needs[3])]
    gi, gw, gb = native_layer_norm_backward(grad, input, ctx.normalized_shape, mean, rstd, weight, bias, mask)
    return gi if mask[0] else None, None, gw if mask[1] else None, gb if mask[2] else None, None


def _layer_norm_backward_of(go: np.ndarray, x: np.ndarray, axis: int, mean: np.ndarray, rstd: np.ndarray,
                            weight: Optional[np.ndarray], bias: Optional[np.ndarray], mask: Sequence[bool]
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    calc = opmath_dtype(x.dtype)
    axes = tuple(range(axis, x.ndim))
    go32 = go.astype(calc, copy=False)
    rstd = rstd.astype(calc, copy=False)
    xhat = (x.astype(calc, copy=False) - mean) * rstd
    g = go32 if weight is None else go32 * weight
    gi = _grad_of_normalized(g, xhat, rstd, axes).astype(x.dtype, copy=False) if mask[0] and x.size \
        else np.zeros(x.shape, x.dtype) if mask[0] else _unasked(x.dtype)
    param_dtype = weight.dtype if weight is not None else bias.dtype if bias is not None else x.dtype
    gw, gb = _parameter_grads(go32, xhat, tuple(range(axis)), mask, param_dtype)
    return gi, gw if weight is not None or not mask[1] else _unasked(x.dtype), \
        gb if bias is not None or not mask[2] else _unasked(x.dtype)


def _check_layer_norm_backward(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
                               rstd: Tensor, weight: Optional[Tensor], bias: Optional[Tensor]) -> int:
    op = "od::native_layer_norm_backward"
    axis = _check_layer_norm(op, input, normalized_shape, weight, bias)
    if list(grad_out.shape) != list(input.shape):
        raise RuntimeError(f"{op}: expected grad_out of the input's shape {list(input.shape)}, got "
                           f"{list(grad_out.shape)}")
    stats = _stats_shape(input, axis)
    if mean.numel() != math.prod(stats) or rstd.numel() != math.prod(stats):
        raise RuntimeError(f"{op}: expected mean and rstd of {math.prod(stats)} elements (shape {stats}), got "
                           f"{list(mean.shape)} and {list(rstd.shape)}")
    return axis


def _layer_norm_backward_cpu(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
                             rstd: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                             output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    axis = _check_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias)
    stats = _stats_shape(input, axis)
    result = call_numpy_triple(
        _layer_norm_backward_of, grad_out, input, axis, views.reshape(mean, stats), views.reshape(rstd, stats),
        weight, bias, list(output_mask))
    return result


def _layer_norm_backward_meta(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
                              rstd: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                              output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    check_device("od::native_layer_norm_backward", grad_out, input, mean, rstd, *_optional(weight, bias))
    _check_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias)
    gi = meta_like(input.shape if output_mask[0] else (0,), input.dtype)
    gw = meta_like(weight.shape if output_mask[1] and weight is not None else (0,),
                   input.dtype if weight is None else weight.dtype)
    gb = meta_like(bias.shape if output_mask[2] and bias is not None else (0,),
                   input.dtype if bias is None else bias.dtype)
    return gi, gw, gb


def _layer_norm_backward_decomposed(grad_out: Tensor, input: Tensor, normalized_shape: Sequence[int], mean: Tensor,
                                    rstd: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                                    output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    """native_layer_norm_backward in differentiable od operators (Note [Double backward by decomposition])."""
    axis = _check_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias)
    stats = _stats_shape(input, axis)
    dims = list(range(axis, input.ndim))
    mean, rstd = _live_stats(input, dims, views.reshape(mean, stats), views.reshape(rstd, stats))
    xhat = _normalized(input, mean, rstd)
    g = grad_out if weight is None else elementwise.mul(grad_out, weight)
    gi = _grad_of_normalized_od(g, xhat, rstd, dims) if output_mask[0] else _empty_like_param(input)
    batch = list(range(axis))
    shape = list(normalized_shape)
    gw = views.reshape(reduction.sum_dim(elementwise.mul(grad_out, xhat), batch), shape) \
        if output_mask[1] and weight is not None else _empty_like_param(input)
    gb = views.reshape(reduction.sum_dim(grad_out, batch), shape) if output_mask[2] and bias is not None \
        else _empty_like_param(input)
    return gi, gw, gb


native_layer_norm_backward = defop(
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, "
    "Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)", tags=CORE,
    cpu=_layer_norm_backward_cpu, meta=_layer_norm_backward_meta,
    autograd=differentiable_decomposition(_layer_norm_backward_decomposed))
native_layer_norm = defop(
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)", tags=CORE, cpu=_layer_norm_cpu, meta=_layer_norm_meta,
    backward=_layer_norm_backward, setup_context=_layer_norm_setup)


def _layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
                bias: Optional[Tensor] = None, eps: float = 1e-05, cudnn_enable: bool = True) -> Tensor:
    """PyTorch: at::native::layer_norm (CompositeImplicitAutograd)."""
    return native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


layer_norm: Op = defop("layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                       "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor", tags=PT2,
                       composite=_layer_norm)


# --- group norm ----------------------------------------------------------------------------------------------


def _check_group_norm(op: str, input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], n: int, c: int,
                      hxw: int, group: int) -> None:
    if group <= 0 or c % group:
        raise RuntimeError(f"{op}: Expected number of channels in input to be divisible by num_groups, but got input "
                           f"of shape {list(input.shape)} and num_groups={group}")
    if input.numel() != n * c * hxw or (input.ndim >= 2 and input.shape[:2] != (n, c)):
        raise RuntimeError(f"{op}: expected input of N={n}, C={c} and HxW={hxw} ({n * c * hxw} elements), got "
                           f"shape {list(input.shape)}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {input.dtype}")
    _check_channels(op, "weight", weight, c)
    _check_channels(op, "bias", bias, c)


def _group_norm_of(x: np.ndarray, weight: Optional[np.ndarray], bias: Optional[np.ndarray], n: int, c: int,
                   hxw: int, group: int, eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xg = x.reshape(n, group, -1)
    if xg.size == 0:
        stats = np.zeros((n, group), x.dtype)
        return np.empty(x.shape, x.dtype), stats, stats.copy()
    mean, _, rstd = _stats(xg, (2,), eps)
    xhat = ((xg - mean) * rstd).reshape(n, c, hxw)
    out = _affine(xhat, weight, bias, (1, c, 1)).astype(x.dtype, copy=False).reshape(x.shape)
    return out, mean.reshape(n, group).astype(x.dtype), rstd.reshape(n, group).astype(x.dtype)


def _group_norm_cpu(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], n: int, c: int, hxw: int,
                    group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    _check_group_norm("od::native_group_norm", input, weight, bias, n, c, hxw, group)
    result = call_numpy_triple(_group_norm_of, input, weight, bias, n, c, hxw, group, eps)
    return result


def _group_norm_meta(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], n: int, c: int, hxw: int,
                     group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    check_device("od::native_group_norm", input, *_optional(weight, bias))
    _check_group_norm("od::native_group_norm", input, weight, bias, n, c, hxw, group)
    return meta_like(input.shape, input.dtype), meta_like((n, group), input.dtype), \
        meta_like((n, group), input.dtype)


def _group_norm_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, weight, _, *ctx.sizes, _ = inputs
    ctx.mark_non_differentiable(output[1], output[2])
    ctx.save_for_backward(input, weight, output[1], output[2])


def _group_norm_backward(ctx: Any, grad: Optional[Tensor], *_: Any) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml native_group_norm (native_group_norm_backward)."""
    if grad is None:
        return (None,) * 8
    input, weight, mean, rstd = ctx.saved_tensors
    mask = [bool(m) for m in ctx.needs_input_grad[:3]]
    gi, gw, gb = native_group_norm_backward(grad, input, mean, rstd, weight, *ctx.sizes, mask)
    return (gi if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None) + (None,) * 5


def _group_norm_backward_of(go: np.ndarray, x: np.ndarray, mean: np.ndarray, rstd: np.ndarray,
                            weight: Optional[np.ndarray], n: int, c: int, hxw: int, group: int, mask: Sequence[bool]
                            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    calc = opmath_dtype(x.dtype)
    cg = c // group
    xg = x.astype(calc, copy=False).reshape(n, group, cg, hxw)
    go32 = go.astype(calc, copy=False).reshape(n, group, cg, hxw)
    mean = mean.astype(calc, copy=False).reshape(n, group, 1, 1)
    rstd = rstd.astype(calc, copy=False).reshape(n, group, 1, 1)
    xhat = (xg - mean) * rstd
    g = go32 if weight is None else go32 * weight.reshape(1, group, cg, 1)
    gi = _grad_of_normalized(g, xhat, rstd, (2, 3)).astype(x.dtype, copy=False).reshape(x.shape) if mask[0] \
        else _unasked(x.dtype)
    gw, gb = _parameter_grads(go32, xhat, (0, 3), mask, x.dtype if weight is None else weight.dtype)
    return gi, gw.reshape(-1), gb.reshape(-1)


def _check_group_norm_backward(grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor,
                               weight: Optional[Tensor], n: int, c: int, hxw: int, group: int) -> None:
    op = "od::native_group_norm_backward"
    _check_group_norm(op, input, weight, None, n, c, hxw, group)
    if list(grad_out.shape) != list(input.shape):
        raise RuntimeError(f"{op}: expected grad_out of the input's shape {list(input.shape)}, got "
                           f"{list(grad_out.shape)}")
    if mean.numel() != n * group or rstd.numel() != n * group:
        raise RuntimeError(f"{op}: expected mean and rstd of N * group = {n * group} elements, got "
                           f"{list(mean.shape)} and {list(rstd.shape)}")


def _group_norm_backward_cpu(grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, weight: Optional[Tensor],
                             n: int, c: int, hxw: int, group: int, output_mask: Sequence[bool]
                             ) -> tuple[Tensor, Tensor, Tensor]:
    _check_group_norm_backward(grad_out, input, mean, rstd, weight, n, c, hxw, group)
    result = call_numpy_triple(_group_norm_backward_of, grad_out, input, mean, rstd, weight,
                                                       n, c, hxw, group, list(output_mask))
    return result


def _group_norm_backward_meta(grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor, weight: Optional[Tensor],
                              n: int, c: int, hxw: int, group: int, output_mask: Sequence[bool]
                              ) -> tuple[Tensor, Tensor, Tensor]:
    check_device("od::native_group_norm_backward", grad_out, input, mean, rstd, *_optional(weight))
    _check_group_norm_backward(grad_out, input, mean, rstd, weight, n, c, hxw, group)
    return _grads_meta(input, (c,), input.dtype if weight is None else weight.dtype, output_mask)


def _group_norm_backward_decomposed(grad_out: Tensor, input: Tensor, mean: Tensor, rstd: Tensor,
                                    weight: Optional[Tensor], n: int, c: int, hxw: int, group: int,
                                    output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    """native_group_norm_backward in differentiable od operators (Note [Double backward by decomposition])."""
    _check_group_norm_backward(grad_out, input, mean, rstd, weight, n, c, hxw, group)
    cg = c // group
    shape = [n, group, cg, hxw]
    x, go = views.reshape(input, shape), views.reshape(grad_out, shape)
    mean, rstd = _live_stats(x, [2, 3], views.reshape(mean, [n, group, 1, 1]), views.reshape(rstd, [n, group, 1, 1]))
    xhat = _normalized(x, mean, rstd)
    g = go if weight is None else elementwise.mul(go, views.reshape(weight, [1, group, cg, 1]))
    gi = views.reshape(_grad_of_normalized_od(g, xhat, rstd, [2, 3]), list(input.shape)) if output_mask[0] \
        else _empty_like_param(input)
    return (gi, *_parameter_grads_od(go, xhat, [0, 3], [c], output_mask, input if weight is None else weight))


native_group_norm_backward = defop(
    "native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, "
    "SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)", tags=CORE,
    cpu=_group_norm_backward_cpu, meta=_group_norm_backward_meta,
    autograd=differentiable_decomposition(_group_norm_backward_decomposed))
native_group_norm = defop(
    "native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, "
    "float eps) -> (Tensor, Tensor, Tensor)", tags=CORE, cpu=_group_norm_cpu, meta=_group_norm_meta,
    backward=_group_norm_backward, setup_context=_group_norm_setup)


def _group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
                eps: float = 1e-05, cudnn_enabled: bool = True) -> Tensor:
    """PyTorch: at::native::group_norm (CompositeImplicitAutograd): native_group_norm with N, C, HxW of the input."""
    if input.ndim < 2:
        raise RuntimeError(f"od::group_norm: Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c = input.shape[0], input.shape[1]
    hxw = math.prod(input.shape[2:])
    return native_group_norm(input, weight, bias, n, c, hxw, num_groups, eps)[0]


group_norm: Op = defop("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
                       "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor", tags=PT2,
                       composite=_group_norm)
