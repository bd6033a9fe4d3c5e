"""Neural-network operators: softmax and log_softmax over one dimension, and
the negative log-likelihood loss (nll_loss, with class weights, ignore_index
and none/mean/sum reduction)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .. import _C
from . import comparison, elementwise, factories, reduction, views
from ._numpy import arr, check_device, meta_like, tensor, wrap_dim
from ._registry import defop

Tensor = _C.TensorBase

#: nll_loss's ``reduction`` argument (PyTorch: at::Reduction::Reduction).
NONE, MEAN, SUM = 0, 1, 2


def _softmax_kernels(name: str, fn: Callable[[np.ndarray, int], np.ndarray]) -> dict[str, Callable[..., Tensor]]:
    def out_dtype(self: Tensor, dtype: Any) -> Any:
        dtype = self.dtype if dtype is None else dtype
        if not dtype.is_floating_point:
            raise RuntimeError(f"{name}: expected a floating-point input (or dtype=), got {dtype}")
        return dtype

    def cpu(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
        d = wrap_dim(name, dim, self.ndim)
        a = arr(self).astype(out_dtype(self, dtype).to_numpy())
        with np.errstate(all="ignore"):
            return tensor(fn(a, d if a.ndim else None))

    def meta(self: Tensor, dim: int, dtype: Any = None) -> Tensor:
        wrap_dim(name, dim, self.ndim)
        return meta_like(self.shape, out_dtype(self, dtype))

    return {"cpu": cpu, "meta": meta}


def _shifted(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    """``a`` minus its maximum along ``axis`` (so exp cannot overflow); empty inputs stay as they are."""
    return a - np.max(a, axis=axis, keepdims=True) if a.size else a


def _softmax(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    e = np.exp(_shifted(a, axis))
    return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    s = _shifted(a, axis)
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))


def _softmax_setup(ctx: Any, inputs: tuple, output: Any) -> None:
    ctx.dim = wrap_dim("od::softmax", inputs[1], inputs[0].ndim)  # the kernel checked dim
    ctx.save_for_backward(output)


def _softmax_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    """out * (grad - sum(grad * out)). PyTorch: _softmax_backward_data."""
    (out,) = ctx.saved_tensors
    dot = reduction.sum_dim(elementwise.mul(grad, out), [ctx.dim], True)
    return elementwise.mul(out, elementwise.sub(grad, dot)), None, None


def _log_softmax_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    """grad - exp(out) * sum(grad). PyTorch: _log_softmax_backward_data."""
    (out,) = ctx.saved_tensors
    total = reduction.sum_dim(grad, [ctx.dim], True)
    return elementwise.sub(grad, elementwise.mul(elementwise.exp(out), total)), None, None


softmax = defop("softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                **_softmax_kernels("od::softmax.int", _softmax),
                backward=_softmax_backward, setup_context=_softmax_setup)
log_softmax = defop("log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                    **_softmax_kernels("od::log_softmax.int", _log_softmax),
                    backward=_log_softmax_backward, setup_context=_softmax_setup)

# --- nll_loss -------------------------------------------------------------------------------------


def _check_nll(self: Tensor, target: Tensor, weight: Optional[Tensor], reduction_: int) -> None:
    op = "od::nll_loss"
    check_device(op, self, target, *([weight] if weight is not None else []))
    if self.ndim not in (1, 2):
        raise RuntimeError(f"{op}: input tensor should be 1D or 2D, got shape {list(self.shape)}")
    if target.dtype.is_floating_point or target.dtype.is_complex or target.dtype == _C.bool:
        raise RuntimeError(f"{op}: expected target of an integer dtype (class indices), got {target.dtype}")
    if tuple(target.shape) != tuple(self.shape[:-1]):
        raise RuntimeError(f"{op}: expected target of shape {list(self.shape[:-1])} for input of shape "
                           f"{list(self.shape)}, got {list(target.shape)}")
    if weight is not None and tuple(weight.shape) != (self.shape[-1],):
        raise RuntimeError(f"{op}: weight tensor should be defined either for all {self.shape[-1]} classes or no "
                           f"classes but got weight tensor of shape {list(weight.shape)}")
    if reduction_ not in (NONE, MEAN, SUM):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction_}")


def _nll_loss_cpu(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction_: int = MEAN,
                  ignore_index: int = -100) -> Tensor:
    _check_nll(self, target, weight, reduction_)
    x = arr(self).reshape(-1, self.shape[-1])
    t = arr(target).reshape(-1)
    valid = t != ignore_index
    bad = valid & ((t < 0) | (t >= x.shape[1]))
    if bad.any():
        raise IndexError(f"od::nll_loss: Target {int(t[bad][0])} is out of bounds (there are {x.shape[1]} classes)")
    picked = np.where(valid, t, 0)
    w = np.where(valid, 1 if weight is None else arr(weight)[picked], 0).astype(x.dtype)
    losses = -w * x[np.arange(len(t)), picked]
    if reduction_ == NONE:
        return tensor(losses.reshape(target.shape))
    with np.errstate(all="ignore"):
        total = losses.sum() / w.sum() if reduction_ == MEAN else losses.sum()
    return tensor(np.asarray(total, x.dtype))


def _nll_loss_meta(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction_: int = MEAN,
                   ignore_index: int = -100) -> Tensor:
    _check_nll(self, target, weight, reduction_)
    return meta_like(target.shape if reduction_ == NONE else (), self.dtype)


def _nll_setup(ctx: Any, inputs: tuple, output: Any) -> None:
    self, target, weight, ctx.reduction, ctx.ignore_index = inputs
    ctx.n_classes = self.shape[-1]
    ctx.save_for_backward(target, weight)


def _nll_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, None, None]:
    """d loss / d self[n, c] = -w[c] [c == target[n] != ignore_index] (over the total weight for mean).
    PyTorch: nll_loss_backward."""
    if ctx.needs_input_grad[2]:
        raise RuntimeError("od::nll_loss: the derivative for 'weight' is not implemented")
    target, weight = ctx.saved_tensors
    classes = factories.arange(ctx.n_classes, device=grad.device)
    column = views.unsqueeze(target, -1)
    chosen = elementwise.mul(comparison.eq(column, classes), comparison.ne_scalar(column, ctx.ignore_index))
    weights = chosen if weight is None else elementwise.mul(chosen, weight)
    if ctx.reduction == NONE:
        scaled = elementwise.mul(weights, views.unsqueeze(grad, -1))
    elif ctx.reduction == SUM:
        scaled = elementwise.mul(weights, grad)
    else:
        scaled = elementwise.div(elementwise.mul(weights, grad), reduction.sum_(weights))
    return elementwise.neg(scaled), None, None, None, None


nll_loss = defop("nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
                 "SymInt ignore_index=-100) -> Tensor",
                 cpu=_nll_loss_cpu, meta=_nll_loss_meta, backward=_nll_backward, setup_context=_nll_setup)
