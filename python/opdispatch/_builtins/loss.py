"""Losses: the negative log-likelihood loss (nll_loss over nll_loss_forward
and nll_loss_backward, with class weights, ignore_index and none/mean/sum
reduction, as PyTorch splits them) and cross_entropy_loss over
_log_softmax and nll_loss."""
from __future__ import annotations

import functools
from typing import Any, Optional, cast

import numpy as np

from .. import _C
from . import comparison, elementwise, factories, reduction, softmax, views
from ._numpy import call_numpy, call_numpy_pair, check_device, meta_like
from ._registry import PT2, Op, PairOp, defop
from .._tensor_type import Tensor


#: nll_loss's ``reduction`` argument (PyTorch: at::Reduction::Reduction).
NONE: int = 0
MEAN: int = 1
SUM: int = 2


# --- nll_loss -------------------------------------------------------------------------------------


_INTEGER_DTYPES = frozenset({_C.uint8, _C.int8, _C.int16, _C.int32, _C.int64})


def _check_nll(op: str, self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int) -> None:
    """RuntimeError (ValueError for reduction) naming ``op`` unless the
    arguments make an nll_loss (devices are checked by the caller)."""
    if self.ndim not in (1, 2):
        raise RuntimeError(f"{op}: input tensor should be 1D or 2D, got shape {list(self.shape)}")
    if target.dtype not in _INTEGER_DTYPES:
        raise RuntimeError(f"{op}: expected target of an integer dtype (class indices), got {target.dtype}")
    if target.shape != self.shape[:-1]:
        raise RuntimeError(f"{op}: expected target of shape {list(self.shape[:-1])} for input of shape "
                           f"{list(self.shape)}, got {list(target.shape)}")
    if weight is not None and weight.shape != self.shape[-1:]:
        raise RuntimeError(f"{op}: weight tensor should be defined either for all {self.shape[-1]} classes or no "
                           f"classes but got weight tensor of shape {list(weight.shape)}")
    if reduction_ not in (NONE, MEAN, SUM):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction_}")


@functools.lru_cache(maxsize=8)
def _rows(n: int) -> np.ndarray:
    """0..n-1 (read-only, shared): the row index of a per-sample gather."""
    rows = np.arange(n)
    rows.flags.writeable = False
    return rows


def _gathered(x: np.ndarray, t: np.ndarray, ignore_index: int) -> Optional[np.ndarray]:
    """``x[n, t[n]]`` for every sample when every target is a class and none
    can be ``ignore_index`` (the common case, which needs no masks), else None."""
    if 0 <= ignore_index < x.shape[1] or (len(t) and _min_of(t) < 0):
        return None
    try:
        picked: np.ndarray = x[_rows(len(t)), t]
        return picked
    except IndexError:  # a target past the last class: _picked_weights names it
        return None


_min_of = np.minimum.reduce


def _picked_weights(x: np.ndarray, t: np.ndarray, w: Optional[np.ndarray], ignore_index: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Per sample: the class index (0 where ignored) and its weight in x's
    dtype (0 where ignored). IndexError for a class out of range."""
    n_classes = x.shape[1]
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {int(t[bad][0])} is out of bounds (there are {n_classes} classes)")
    picked = np.where(valid, t, 0)
    weights = valid.astype(x.dtype) if w is None else np.where(valid, w[picked], 0).astype(x.dtype, copy=False)
    return picked, weights


def _nll_forward(x: np.ndarray, t: np.ndarray, w: Optional[np.ndarray], reduction_: int, ignore_index: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    shape = t.shape
    x = x.reshape(-1, x.shape[-1])
    t = t.reshape(-1)
    gathered = _gathered(x, t, ignore_index) if w is None else None
    if gathered is not None:
        if reduction_ == NONE:
            return np.negative(gathered).reshape(shape), np.zeros((), x.dtype)
        total = np.negative(reduction.sum_of(gathered))
        return (total / len(t) if reduction_ == MEAN else total), np.asarray(len(t), x.dtype)
    picked, weights = _picked_weights(x, t, w, ignore_index)
    losses = np.multiply(np.negative(x[_rows(len(t)), picked]), weights)
    if reduction_ == NONE:
        return losses.reshape(shape), np.zeros((), x.dtype)
    total_weight = reduction.sum_of(weights)
    total = reduction.sum_of(losses)
    return (total / total_weight if reduction_ == MEAN else total), total_weight


def _nll_loss_forward_cpu(self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int,
                          ignore_index: int) -> tuple[Tensor, Tensor]:
    _check_nll("od::nll_loss_forward", self, target, weight, reduction_)
    try:
        return call_numpy_pair(_nll_forward, self, target, weight, reduction_, ignore_index)
    except IndexError as e:
        raise IndexError(f"od::nll_loss_forward: {e}") from None


def _nll_loss_forward_meta(self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int,
                           ignore_index: int) -> tuple[Tensor, Tensor]:
    check_device("od::nll_loss_forward", self, target, *([weight] if weight is not None else []))
    _check_nll("od::nll_loss_forward", self, target, weight, reduction_)
    return meta_like(target.shape if reduction_ == NONE else (), self.dtype), meta_like((), self.dtype)


def _nll_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, target, weight, ctx.reduction, ctx.ignore_index = inputs
    ctx.mark_non_differentiable(output[1])
    # total_weight is an output without history, kept as a plain attribute (no version to check).
    ctx.total_weight = output[1]
    ctx.save_for_backward(self, target, weight)


def _nll_forward_backward(ctx: Any, grad: Tensor, grad_total_weight: Any) -> tuple[Any, None, None, None, None]:
    """PyTorch: derivatives.yaml nll_loss_forward (the weight gets no gradient)."""
    if ctx.needs_input_grad[2]:
        raise RuntimeError("od::nll_loss_forward: the derivative for 'weight' is not implemented")
    self, target, weight = ctx.saved_tensors
    return nll_loss_backward(grad, self, target, weight, ctx.reduction, ctx.ignore_index, ctx.total_weight), \
        None, None, None, None


nll_loss_forward = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    "nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, SymInt ignore_index) "
    "-> (Tensor output, Tensor total_weight)", tags=PT2,
    cpu=_nll_loss_forward_cpu, meta=_nll_loss_forward_meta, backward=_nll_forward_backward, setup_context=_nll_setup))


def _nll_grad(grad: np.ndarray, x: np.ndarray, t: np.ndarray, w: Optional[np.ndarray], reduction_: int,
              ignore_index: int, total_weight: np.ndarray) -> np.ndarray:
    """d loss / d x[n, c] = -w[c] [c == target[n] != ignore_index], times
    grad_output (per sample for reduction none), over total_weight for mean."""
    shape = x.shape
    x = x.reshape(-1, x.shape[-1])
    t = t.reshape(-1)
    scale = np.negative(grad.reshape(-1) if reduction_ == NONE else grad)
    if reduction_ == MEAN:
        scale = scale / total_weight
    out = np.zeros(x.shape, x.dtype)
    if w is None and _gathered(x, t, ignore_index) is not None:
        out[_rows(len(t)), t] = scale
    else:
        picked, weights = _picked_weights(x, t, w, ignore_index)
        out[_rows(len(t)), picked] = weights * scale
    return out.reshape(shape)


def _check_nll_backward(grad_output: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor],
                        reduction_: int, total_weight: Tensor) -> None:
    op = "od::nll_loss_backward"
    _check_nll(op, self, target, weight, reduction_)
    expected = tuple(target.shape) if reduction_ == NONE else ()
    if tuple(grad_output.shape) != expected:
        raise RuntimeError(f"{op}: expected grad_output of shape {list(expected)}, got {list(grad_output.shape)}")
    if total_weight.numel() != 1:
        raise RuntimeError(f"{op}: expected a single-element total_weight, got shape {list(total_weight.shape)}")


def _nll_loss_backward_cpu(grad_output: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor],
                           reduction_: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    _check_nll_backward(grad_output, self, target, weight, reduction_, total_weight)
    try:
        return call_numpy(_nll_grad, grad_output, self, target, weight, reduction_, ignore_index, total_weight)
    except IndexError as e:
        raise IndexError(f"od::nll_loss_backward: {e}") from None


def _nll_loss_backward_meta(grad_output: Tensor, self: Tensor, target: Tensor, weight: Optional[Tensor],
                            reduction_: int, ignore_index: int, total_weight: Tensor) -> Tensor:
    check_device("od::nll_loss_backward", grad_output, self, target, total_weight,
                 *([weight] if weight is not None else []))
    _check_nll_backward(grad_output, self, target, weight, reduction_, total_weight)
    return meta_like(self.shape, self.dtype)


def _nll_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, self, target, weight, ctx.reduction, ctx.ignore_index, _ = inputs
    ctx.save_for_backward(self, target, weight)


def _nll_backward_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """nll_loss_backward is linear in grad_output: its gradient is nll_loss of
    the incoming gradient. PyTorch: derivatives.yaml nll_loss_backward."""
    if ctx.needs_input_grad[3] or ctx.needs_input_grad[6]:
        raise RuntimeError("od::nll_loss_backward: the derivative for 'weight' and 'total_weight' is not implemented")
    self, target, weight = ctx.saved_tensors
    g_grad = nll_loss(grad, target, weight, ctx.reduction, ctx.ignore_index) if ctx.needs_input_grad[0] else None
    g_self = factories.zeros_like(self) if ctx.needs_input_grad[1] else None
    return g_grad, g_self, None, None, None, None, None


nll_loss_backward: Op = defop(
    "nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, int reduction, "
    "SymInt ignore_index, Tensor total_weight) -> Tensor", tags=PT2,
    cpu=_nll_loss_backward_cpu, meta=_nll_loss_backward_meta, backward=_nll_backward_backward,
    setup_context=_nll_backward_setup)


def _nll_loss(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction_: int = MEAN,
              ignore_index: int = -100) -> Tensor:
    """PyTorch: at::native::nll_loss (CompositeImplicitAutograd)."""
    return nll_loss_forward(self, target, weight, reduction_, ignore_index)[0]


nll_loss: Op = defop("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
                     "SymInt ignore_index=-100) -> Tensor", tags=PT2, composite=_nll_loss)


# --- cross_entropy_loss ---------------------------------------------------------------------------


def _nll_loss_nd(self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int, ignore_index: int
                 ) -> tuple[Tensor, Tensor]:
    """nll_loss_forward of (N, C, d1, ...) log-probabilities as the (N*d1*..., C)
    rows they hold: (loss, total_weight), the loss of reduction none in
    target's shape. PyTorch: nll_loss_nd (nll_loss2d for 4-d inputs, a
    reshape otherwise)."""
    if self.ndim <= 2:
        return nll_loss_forward(self, target, weight, reduction_, ignore_index)
    n_classes = self.shape[1]
    rows = views.reshape(views.permute(self, [0, *range(2, self.ndim), 1]), [-1, n_classes])
    loss, total = nll_loss_forward(rows, views.reshape(target, [-1]), weight, reduction_, ignore_index)
    return (views.reshape(loss, list(target.shape)) if reduction_ == NONE else loss), total


def _reduced(loss: Tensor, reduction_: int, count: Any) -> Tensor:
    if reduction_ == NONE:
        return loss
    total = reduction.sum_(loss)
    return total if reduction_ == SUM else elementwise.div(total, count) if isinstance(count, Tensor) \
        else elementwise.div_scalar(total, count)


def _class_weight_view(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """weight (C,) shaped to broadcast along ``class_dim`` of an ``ndim``-d input."""
    return views.view(weight, [-1 if d == class_dim else 1 for d in range(ndim)])


def _cross_entropy_loss(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction_: int = MEAN,
                        ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over the class dimension (1, or 0 for unbatched input),
    then the negative log-likelihood of class indices (nll_loss_forward) or
    the cross entropy with class probabilities (a float target of input's
    shape), with ``label_smoothing`` mixing in the uniform distribution.
    PyTorch: at::native::cross_entropy_loss (CompositeImplicitAutograd) and
    its _prob_target / _label_smoothing helpers."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"od::cross_entropy_loss: label_smoothing must be between 0.0 and 1.0, got "
                           f"{label_smoothing}")
    class_dim = 1 if self.ndim >= 2 else 0
    n_classes = self.shape[class_dim]
    logp = softmax.log_softmax(self, class_dim)
    if target.dtype.is_floating_point:  # class probabilities
        if tuple(target.shape) != tuple(self.shape):
            raise RuntimeError(f"od::cross_entropy_loss: expected a probability target of the input's shape "
                               f"{list(self.shape)}, got {list(target.shape)}")
        if weight is not None:
            logp = elementwise.mul(logp, _class_weight_view(weight, self.ndim, class_dim))
        if label_smoothing > 0:
            target = elementwise.add_scalar(elementwise.mul_scalar(target, 1 - label_smoothing),
                                            label_smoothing / n_classes)
        loss = elementwise.neg(elementwise.mul(logp, target))
        if reduction_ == NONE:
            return reduction.sum_dim(loss, [class_dim])
        return _reduced(loss, reduction_, max(self.numel() // n_classes, 1) if reduction_ == MEAN else 1)
    nll, total_weight = _nll_loss_nd(logp, target, weight, reduction_, ignore_index)
    if label_smoothing == 0:
        return nll
    weighted = logp if weight is None else elementwise.mul(logp, _class_weight_view(weight, self.ndim, class_dim))
    smooth = elementwise.neg(reduction.sum_dim(weighted, [class_dim]))
    smooth = elementwise.where(comparison.eq_scalar(target, ignore_index), factories.zeros_like(smooth), smooth)
    smooth = _reduced(smooth, reduction_, total_weight)
    return elementwise.add(elementwise.mul_scalar(nll, 1 - label_smoothing),
                           elementwise.mul_scalar(smooth, label_smoothing / n_classes))


cross_entropy_loss: Op = defop(
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, SymInt ignore_index=-100, "
    "float label_smoothing=0.) -> Tensor", tags=PT2, composite=_cross_entropy_loss)
