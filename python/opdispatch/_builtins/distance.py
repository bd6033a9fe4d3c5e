"""Pairwise p-norm distances: the Core ATen operators _cdist_forward
(between the rows of two batches of matrices) and _pdist_forward (between
the rows of one matrix, i < j, condensed), their gradient operators
(_cdist_backward, _pdist_backward), and cdist / pdist as their
CompositeImplicitAutograd front ends, as PyTorch splits them."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ._numpy import broadcast_shape, call_numpy, check_device, meta_like
from ._registry import CORE, PT2, Op, defop


def _norms(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm of ``diff`` over its last axis (p 0 counts non-zeros, inf takes the maximum)."""
    a = np.abs(diff)
    norms: np.ndarray
    if p == 0:
        norms = np.count_nonzero(a, axis=-1).astype(diff.dtype)
    elif p == math.inf:
        norms = a.max(axis=-1, initial=0)
    elif p == 1:
        norms = a.sum(axis=-1)
    elif p == 2:
        norms = np.sqrt(np.square(a).sum(axis=-1))
    else:
        norms = np.power(np.power(a, p).sum(axis=-1), 1 / p)
    return norms


def _norm_grads(grad: np.ndarray, diff: np.ndarray, dist: np.ndarray, p: float) -> np.ndarray:
    """d dist / d diff times grad, per element (grad and dist broadcast over
    the last axis). PyTorch: the Dist<...>::backward functors (Distance.cpp)."""
    g, d = grad[..., None], dist[..., None]
    a, sign = np.abs(diff), np.sign(diff)
    out: np.ndarray
    if p == 0:
        out = np.zeros_like(diff)
        return out
    if p == 1:
        out = sign * g
        return out
    if p == math.inf:
        out = sign * (a == d) * g
        return out
    with np.errstate(all="ignore"):
        if p == 2:
            out = g * diff / d
        elif p < 2:
            out = sign * np.power(a, p - 1) * g / np.power(d, p - 1)
            out = np.where((a == 0) & (p < 1), 0, out)
        else:
            out = diff * np.power(a, p - 2) * g / np.power(d, p - 1)
    out = np.where(d == 0, 0, out)
    return out


def _uses_mm(p: float, compute_mode: Optional[int], r1: int, r2: int) -> bool:
    """Whether p = 2 distances come from the matrix product |x1|^2 + |x2|^2 - 2 x1.x2 (compute_mode 1, or
    None/0 with more than 25 rows). PyTorch: cdist_impl, Note [cdist relies on cdist_impl redispatching]."""
    mode = 0 if compute_mode is None else compute_mode
    return p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))


def _check_cdist(x1: Any, x2: Any, p: float, compute_mode: Optional[int]) -> list[int]:
    op = "od::_cdist_forward"
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"{op}: cdist only supports at least 2D tensors, X1 got: {x1.ndim}D, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"{op}: X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: "
                           f"{x2.shape[-1]}")
    if not x1.dtype.is_floating_point or x1.dtype != x2.dtype:
        raise RuntimeError(f"{op}: cdist only supports floating-point dtypes, of one dtype: got {x1.dtype} and "
                           f"{x2.dtype}")
    if p < 0:
        raise RuntimeError(f"{op}: cdist only supports non-negative p values")
    if compute_mode not in (None, 0, 1, 2):
        raise RuntimeError(f"{op}: possible modes: None, 1, 2, but was: {compute_mode}")
    batch = broadcast_shape(op, x1.shape[:-2], x2.shape[:-2])
    return [*batch, x1.shape[-2], x2.shape[-2]]


def _cdist_of(x1: np.ndarray, x2: np.ndarray, p: float, compute_mode: Optional[int]) -> np.ndarray:
    if _uses_mm(p, compute_mode, x1.shape[-2], x2.shape[-2]):
        squares = np.square(x1).sum(-1)[..., :, None] + np.square(x2).sum(-1)[..., None, :]
        dist: np.ndarray = np.sqrt(np.maximum(squares - 2 * np.matmul(x1, np.swapaxes(x2, -1, -2)), 1e-30))
        return dist.astype(x1.dtype)
    return _norms(x1[..., :, None, :] - x2[..., None, :, :], p).astype(x1.dtype, copy=False)


def _cdist_cpu(x1: Any, x2: Any, p: float, compute_mode: Optional[int]) -> Any:
    _check_cdist(x1, x2, p, compute_mode)
    return call_numpy(_cdist_of, x1, x2, p, compute_mode)


def _cdist_meta(x1: Any, x2: Any, p: float, compute_mode: Optional[int]) -> Any:
    check_device("od::_cdist_forward", x1, x2)
    return meta_like(_check_cdist(x1, x2, p, compute_mode), x1.dtype)


def _cdist_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    x1, x2, ctx.p, _ = inputs
    ctx.save_for_backward(x1, x2, output)


def _cdist_formula(ctx: Any, grad: Any) -> tuple[Any, Any, None, None]:
    """PyTorch: derivatives.yaml _cdist_forward (x2's gradient through the transposed problem)."""
    x1, x2, dist = ctx.saved_tensors
    g1 = _cdist_backward(grad.contiguous(), x1, x2, ctx.p, dist) if ctx.needs_input_grad[0] else None
    g2 = _cdist_backward(grad.mT.contiguous(), x2, x1, ctx.p, dist.mT.contiguous()) \
        if ctx.needs_input_grad[1] else None
    return g1, g2, None, None


_cdist_forward: Op = defop("_cdist_forward(Tensor x1, Tensor x2, float p, int? compute_mode) -> Tensor", tags=CORE,
                           cpu=_cdist_cpu, meta=_cdist_meta, backward=_cdist_formula, setup_context=_cdist_setup)


def _cdist_grad_of(grad: np.ndarray, x1: np.ndarray, x2: np.ndarray, p: float, dist: np.ndarray) -> np.ndarray:
    """The gradient of x1 expanded to the broadcast batch (the engine sums it
    to x1's shape, as PyTorch's _cdist_backward leaves it)."""
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    grads: np.ndarray = _norm_grads(grad, diff, dist, p).sum(axis=-2).astype(x1.dtype, copy=False)
    return grads


def _check_cdist_backward(grad: Any, x1: Any, x2: Any, cdist: Any) -> None:
    op = "od::_cdist_backward"
    expected = [*broadcast_shape(op, x1.shape[:-2], x2.shape[:-2]), x1.shape[-2], x2.shape[-2]]
    if list(grad.shape) != expected or list(cdist.shape) != expected:
        raise RuntimeError(f"{op}: expected grad and cdist of shape {expected}, got {list(grad.shape)} and "
                           f"{list(cdist.shape)}")


def _cdist_backward_cpu(grad: Any, x1: Any, x2: Any, p: float, cdist: Any) -> Any:
    _check_cdist_backward(grad, x1, x2, cdist)
    return call_numpy(_cdist_grad_of, grad, x1, x2, p, cdist)


def _cdist_backward_meta(grad: Any, x1: Any, x2: Any, p: float, cdist: Any) -> Any:
    check_device("od::_cdist_backward", grad, x1, x2, cdist)
    _check_cdist_backward(grad, x1, x2, cdist)
    return meta_like([*grad.shape[:-1], x1.shape[-1]], x1.dtype)


def _not_differentiable(name: str) -> Any:
    def formula(ctx: Any, *grads: Any) -> Any:
        """PyTorch: derivatives.yaml gives this gradient operator not_implemented."""
        raise RuntimeError(f"od::{name}: the derivative of {name} is not implemented (as in PyTorch)")

    return formula


_cdist_backward: Op = defop("_cdist_backward(Tensor grad, Tensor x1, Tensor x2, float p, Tensor cdist) -> Tensor",
                            tags=PT2, cpu=_cdist_backward_cpu, meta=_cdist_backward_meta,
                            backward=_not_differentiable("_cdist_backward"))


# --- pdist --------------------------------------------------------------------------------------------------


def _check_pdist(self: Any, p: float) -> int:
    op = "od::_pdist_forward"
    if self.ndim != 2:
        raise RuntimeError(f"{op}: pdist only supports 2D tensors, got: {self.ndim}D")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{op}: pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError(f"{op}: pdist only supports non-negative p values")
    n: int = self.shape[0]
    return n * (n - 1) // 2


def _pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, 1)


def _pdist_of(x: np.ndarray, p: float) -> np.ndarray:
    i, j = _pairs(x.shape[0])
    return _norms(x[i] - x[j], p).astype(x.dtype, copy=False)


def _pdist_cpu(self: Any, p: float = 2.0) -> Any:
    _check_pdist(self, p)
    return call_numpy(_pdist_of, self, p)


def _pdist_meta(self: Any, p: float = 2.0) -> Any:
    return meta_like([_check_pdist(self, p)], self.dtype)


def _pdist_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, ctx.p = inputs
    ctx.save_for_backward(self, output)


def _pdist_formula(ctx: Any, grad: Any) -> tuple[Any, None]:
    """PyTorch: derivatives.yaml _pdist_forward."""
    self, dist = ctx.saved_tensors
    return _pdist_backward(grad, self, ctx.p, dist), None


_pdist_forward: Op = defop("_pdist_forward(Tensor self, float p=2.) -> Tensor", tags=CORE, cpu=_pdist_cpu,
                           meta=_pdist_meta, backward=_pdist_formula, setup_context=_pdist_setup)


def _pdist_grad_of(grad: np.ndarray, x: np.ndarray, p: float, dist: np.ndarray) -> np.ndarray:
    i, j = _pairs(x.shape[0])
    g = _norm_grads(grad, x[i] - x[j], dist, p)
    out = np.zeros_like(x)
    np.add.at(out, i, g)
    np.add.at(out, j, -g)
    return out


def _check_pdist_backward(grad: Any, self: Any, p: float, pdist: Any) -> None:
    n = _check_pdist(self, p)
    if list(grad.shape) != [n] or list(pdist.shape) != [n]:
        raise RuntimeError(f"od::_pdist_backward: expected grad and pdist of shape [{n}], got {list(grad.shape)} "
                           f"and {list(pdist.shape)}")


def _pdist_backward_cpu(grad: Any, self: Any, p: float, pdist: Any) -> Any:
    _check_pdist_backward(grad, self, p, pdist)
    return call_numpy(_pdist_grad_of, grad, self, p, pdist)


def _pdist_backward_meta(grad: Any, self: Any, p: float, pdist: Any) -> Any:
    check_device("od::_pdist_backward", grad, self, pdist)
    _check_pdist_backward(grad, self, p, pdist)
    return meta_like(self.shape, self.dtype)


_pdist_backward: Op = defop("_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor", tags=PT2,
                            cpu=_pdist_backward_cpu, meta=_pdist_backward_meta,
                            backward=_not_differentiable("_pdist_backward"))


def _cdist(x1: Any, x2: Any, p: float = 2.0, compute_mode: Optional[int] = None) -> Any:
    """PyTorch: at::native::cdist (CompositeImplicitAutograd). PyTorch
    computes its matrix-product case (p 2, many rows) with differentiable
    operators (_euclidean_dist); here _cdist_forward computes it, with the same formula."""
    return _cdist_forward(x1, x2, p, compute_mode)


def _pdist(self: Any, p: float = 2.0) -> Any:
    """PyTorch: at::native::pdist (CompositeImplicitAutograd)."""
    return _pdist_forward(self, p)


cdist: Op = defop("cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor", tags=PT2,
                  composite=_cdist)
pdist: Op = defop("pdist(Tensor self, float p=2.) -> Tensor", tags=PT2, composite=_pdist)
