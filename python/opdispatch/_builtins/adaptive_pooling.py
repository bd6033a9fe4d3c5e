"""Adaptive average pooling: the Core ATen operators _adaptive_avg_pool2d,
_adaptive_avg_pool3d (output cell o of n averages input elements
[floor(o * I / n), ceil((o + 1) * I / n)) per dimension), their gradient
operators, and adaptive_avg_pool1d/2d/3d as CompositeImplicitAutograd
decompositions, as PyTorch splits them. Pooling is separable: one averaging
matrix per dimension, applied with tensordot (and its transpose for the gradient)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from . import factories, reduction, views
from ._numpy import call_numpy, check_device, meta_like, opmath
from ._registry import CORE, PT2, Op, defop
from ._windows import check_pool_input


def _averaging(n_in: int, n_out: int, dtype: np.dtype) -> np.ndarray:
    """(n_out, n_in): row o averages input elements [floor(o*n_in/n_out), ceil((o+1)*n_in/n_out)).
    PyTorch: start_index / end_index (AdaptivePooling.h)."""
    o = np.arange(n_out)
    start = (o * n_in) // n_out
    end = -((-(o + 1) * n_in) // n_out)
    i = np.arange(n_in)
    inside = (i >= start[:, None]) & (i < end[:, None])
    matrix: np.ndarray = (inside / (end - start)[:, None]).astype(dtype)
    return matrix


@opmath
def _apply(x: np.ndarray, sizes: Sequence[int], transpose: bool) -> np.ndarray:
    """x with each of its trailing len(sizes) dimensions mapped by its
    averaging matrix (to ``sizes``), or by the transpose (back to ``sizes``)."""
    k = len(sizes)
    for d in range(k):
        axis = x.ndim - k + d
        n = x.shape[axis]
        matrix = _averaging(sizes[d], n, x.dtype).T if transpose else _averaging(n, sizes[d], x.dtype)
        x = np.moveaxis(np.tensordot(x, matrix, axes=([axis], [1])), -1, axis)
    return x


def _check(op: str, self: Any, output_size: Sequence[int], k: int) -> list[int]:
    check_pool_input(op, self, k)
    if len(output_size) != k or min(output_size) < 0:
        raise RuntimeError(f"{op}: output_size must be {k} non-negative integers, got {list(output_size)}")
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{op}: expected a floating-point input, got {self.dtype}")
    return [*self.shape[:-k], *output_size]


def _pool_kernels(name: str, k: int) -> dict[str, Any]:
    op = f"od::{name}"

    def cpu(self: Any, output_size: Sequence[int]) -> Any:
        _check(op, self, output_size, k)
        return call_numpy(_apply, self, list(output_size), False)

    def meta(self: Any, output_size: Sequence[int]) -> Any:
        return meta_like(_check(op, self, output_size, k), self.dtype)

    return {"cpu": cpu, "meta": meta}


def _pool_backward_kernels(name: str, k: int) -> dict[str, Any]:
    op = f"od::{name}"

    def check(grad_output: Any, self: Any) -> None:
        check_pool_input(op, self, k)
        if grad_output.ndim != self.ndim or grad_output.shape[:-k] != self.shape[:-k]:
            raise RuntimeError(f"{op}: expected grad_output of shape [{', '.join(map(str, self.shape[:-k]))}, "
                               f"*output_size], got {list(grad_output.shape)}")

    def cpu(grad_output: Any, self: Any) -> Any:
        check(grad_output, self)
        return call_numpy(_apply, grad_output, list(self.shape[-k:]), True)

    def meta(grad_output: Any, self: Any) -> Any:
        check_device(op, grad_output, self)
        check(grad_output, self)
        return meta_like(self.shape, grad_output.dtype)

    return {"cpu": cpu, "meta": meta}


def _setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.save_for_backward(inputs[0])


def _define(k: int, backward_tags: Any) -> tuple[Op, Op]:
    """_adaptive_avg_pool{k}d and its gradient operator, each the other's formula."""
    ops: dict[str, Op] = {}
    name = f"_adaptive_avg_pool{k}d"

    def forward_formula(ctx: Any, grad: Any) -> tuple[Any, None]:
        """PyTorch: derivatives.yaml _adaptive_avg_pool{2,3}d."""
        (self,) = ctx.saved_tensors
        return ops["backward"](grad, self), None

    def backward_formula(ctx: Any, grad: Any) -> tuple[Any, Any]:
        """Linear in grad_output: its gradient pools the incoming one.
        PyTorch: derivatives.yaml _adaptive_avg_pool{2,3}d_backward."""
        (self,) = ctx.saved_tensors
        g_go = ops["forward"](grad, ctx.output_size) if ctx.needs_input_grad[0] else None
        return g_go, factories.zeros_like(self) if ctx.needs_input_grad[1] else None

    def backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        grad_output, self = inputs
        ctx.output_size = list(grad_output.shape[-k:])
        ctx.save_for_backward(self)

    ops["backward"] = defop(f"{name}_backward(Tensor grad_output, Tensor self) -> Tensor", tags=backward_tags,
                            **_pool_backward_kernels(f"{name}_backward", k), backward=backward_formula,
                            setup_context=backward_setup)
    ops["forward"] = defop(f"{name}(Tensor self, SymInt[{k}] output_size) -> Tensor", tags=CORE,
                           **_pool_kernels(name, k), backward=forward_formula, setup_context=_setup)
    return ops["forward"], ops["backward"]


_adaptive_avg_pool2d, _adaptive_avg_pool2d_backward = _define(2, CORE)
_adaptive_avg_pool3d, _adaptive_avg_pool3d_backward = _define(3, PT2)


def _adaptive(k: int, impl: Op) -> Any:
    def adaptive_avg_pool(self: Any, output_size: Sequence[int]) -> Any:
        """The mean over the plane for an output of ones (PyTorch's shortcut),
        else the _adaptive_avg_pool operator. PyTorch: at::native::adaptive_avg_pool{2,3}d."""
        if len(output_size) == k and all(o == 1 for o in output_size):
            return reduction.mean_dim(self, list(range(-k, 0)), True)
        return impl(self, output_size)

    adaptive_avg_pool.__name__ = f"adaptive_avg_pool{k}d"
    return adaptive_avg_pool


adaptive_avg_pool2d: Op = defop("adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", tags=PT2,
                                composite=_adaptive(2, _adaptive_avg_pool2d))
adaptive_avg_pool3d: Op = defop("adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor", tags=PT2,
                                composite=_adaptive(3, _adaptive_avg_pool3d))


def _adaptive_avg_pool1d(self: Any, output_size: Sequence[int]) -> Any:
    """adaptive_avg_pool2d over a height-1 plane. PyTorch: at::native::adaptive_avg_pool1d (CompositeImplicitAutograd)."""
    if self.ndim not in (2, 3) or len(output_size) != 1:
        raise RuntimeError(f"od::adaptive_avg_pool1d: expected a 2D or 3D input and one output size, got input "
                           f"{list(self.shape)} and output_size {list(output_size)}")
    return views.squeeze_dim(adaptive_avg_pool2d(views.unsqueeze(self, -2), [1, output_size[0]]), -2)


adaptive_avg_pool1d: Op = defop("adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor", tags=CORE,
                                composite=_adaptive_avg_pool1d)
