"""Average pooling: the Core ATen operators avg_pool2d, avg_pool3d (window
means over a zero-padded input, with count_include_pad and
divisor_override) and avg_pool2d_backward, avg_pool3d_backward, and
avg_pool1d as a CompositeImplicitAutograd decomposition, as PyTorch splits them."""
from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

import numpy as np

from . import factories, views
from ._numpy import call_numpy, check_device, meta_like, opmath
from ._registry import CORE, PT2, Op, defop
from ._windows import PoolParams, padded, pool_params, windows


def _params(op: str, self: Any, k: int, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
            ceil_mode: bool, divisor_override: Optional[int]) -> PoolParams:
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    return pool_params(op, self, k, kernel_size, stride, padding, [1], ceil_mode)


def _divisors(p: PoolParams, size: Sequence[int], count_include_pad: bool, divisor_override: Optional[int]
              ) -> np.ndarray:
    """The divisor of each window (shape ``p.out``): the window's elements
    inside the padded input (count_include_pad) or inside the input, unless
    overridden. Per dimension, then their outer product. PyTorch: the CPU
    avg_pool kernels (AvgPoolKernel.cpp)."""
    if divisor_override is not None:
        return np.full(p.out, float(divisor_override))
    counts = []
    for out, k, s, pad, n in zip(p.out, p.kernel, p.stride, p.padding, size):
        start = np.arange(out) * s - pad
        end = np.minimum(start + k, n + pad)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        counts.append((end - start).astype(np.float64))
    divisor = counts[0]
    for c in counts[1:]:
        divisor = np.multiply.outer(divisor, c)
    return divisor


def _divided(sums: np.ndarray, divisor: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """sums / divisor in ``dtype``; integers truncate toward zero, as C++'s division does."""
    if dtype.kind in "iub":
        quotient: np.ndarray = np.trunc(sums / divisor).astype(dtype)
        return quotient
    mean: np.ndarray = (sums / divisor.astype(dtype, copy=False)).astype(dtype, copy=False)
    return mean


@opmath
def _avg_pool_of(x: np.ndarray, p: PoolParams, count_include_pad: bool, divisor_override: Optional[int]
                 ) -> np.ndarray:
    k = len(p.kernel)
    size = x.shape[-k:]
    lo, hi = p.pads(size)
    win = windows(padded(x, lo, hi), p.kernel, p.stride, p.dilation, p.out)
    sums = np.add.reduce(win, axis=tuple(range(win.ndim - k, win.ndim)), dtype=np.int64 if x.dtype.kind in "iub"
                         else x.dtype)
    return _divided(sums, _divisors(p, size, count_include_pad, divisor_override), x.dtype)


def _avg_pool_kernels(name: str, k: int) -> dict[str, Any]:
    op = f"od::{name}"

    def cpu(self: Any, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
            ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Optional[int] = None) -> Any:
        p = _params(op, self, k, kernel_size, stride, padding, ceil_mode, divisor_override)
        return call_numpy(_avg_pool_of, self, p, count_include_pad, divisor_override)

    def meta(self: Any, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
             ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: Optional[int] = None) -> Any:
        p = _params(op, self, k, kernel_size, stride, padding, ceil_mode, divisor_override)
        return meta_like((*self.shape[:-k], *p.out), self.dtype)

    return {"cpu": cpu, "meta": meta}


def _spread(go: np.ndarray, x: np.ndarray, p: PoolParams, count_include_pad: bool,
            divisor_override: Optional[int]) -> np.ndarray:
    """Each window's gradient divided by its divisor and added to every input
    element of the window: one strided add per kernel offset, the offsets
    last to first, so that each input element receives its windows' shares in
    the order PyTorch's kernel adds them (output positions ascending) and
    float16 rounds after each add as there (cpu_avg_pool_backward adds in
    scalar_t, not in float32)."""
    k = len(p.kernel)
    size = x.shape[-k:]
    lo, hi = p.pads(size)
    g = go / _divisors(p, size, count_include_pad, divisor_override).astype(go.dtype, copy=False)
    grad = np.zeros((*x.shape[:-k], *(n + a + b for n, a, b in zip(size, lo, hi))), go.dtype)
    for offset in reversed(list(itertools.product(*(range(kk) for kk in p.kernel)))):
        target = tuple(slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, p.stride, p.out))
        grad[(Ellipsis,) + target] += g
    inside = tuple(slice(a, a + n) for a, n in zip(lo, size))
    result: np.ndarray = grad[(Ellipsis,) + inside]
    return result


def _avg_pool_backward_kernels(name: str, k: int) -> dict[str, Any]:
    op = f"od::{name}"

    def check(grad_output: Any, self: Any, kernel_size: Sequence[int], stride: Sequence[int],
              padding: Sequence[int], ceil_mode: bool, divisor_override: Optional[int]) -> PoolParams:
        p = _params(op, self, k, kernel_size, stride, padding, ceil_mode, divisor_override)
        shape = [*self.shape[:-k], *p.out]
        if list(grad_output.shape) != shape:
            raise RuntimeError(f"{op}: expected grad_output of shape {shape}, got {list(grad_output.shape)}")
        return p

    def cpu(grad_output: Any, self: Any, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
            ceil_mode: bool, count_include_pad: bool, divisor_override: Optional[int]) -> Any:
        p = check(grad_output, self, kernel_size, stride, padding, ceil_mode, divisor_override)
        return call_numpy(_spread, grad_output, self, p, count_include_pad, divisor_override)

    def meta(grad_output: Any, self: Any, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
             ceil_mode: bool, count_include_pad: bool, divisor_override: Optional[int]) -> Any:
        check_device(op, grad_output, self)
        check(grad_output, self, kernel_size, stride, padding, ceil_mode, divisor_override)
        return meta_like(self.shape, grad_output.dtype)

    return {"cpu": cpu, "meta": meta}


def _avg_pool_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.args = inputs[1:]
    ctx.save_for_backward(inputs[0])


def _avg_pool_formula(backward_op: Any) -> Any:
    def formula(ctx: Any, grad: Any) -> tuple[Any, ...]:
        """PyTorch: derivatives.yaml avg_pool{2,3}d."""
        (self,) = ctx.saved_tensors
        return (backward_op(grad, self, *ctx.args),) + (None,) * 6

    return formula


def _avg_pool_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.args = inputs[2:]
    ctx.save_for_backward(inputs[1])


def _avg_pool_backward_formula(forward_op: Any) -> Any:
    def formula(ctx: Any, grad: Any) -> tuple[Any, ...]:
        """Linear in grad_output: its gradient is the pooling of the incoming
        one. PyTorch: derivatives.yaml avg_pool{2,3}d_backward."""
        (self,) = ctx.saved_tensors
        g_go = forward_op(grad, *ctx.args) if ctx.needs_input_grad[0] else None
        return (g_go, factories.zeros_like(self) if ctx.needs_input_grad[1] else None) + (None,) * 6

    return formula


def _schema(name: str, k: int) -> str:
    return (f"{name}(Tensor self, int[{k}] kernel_size, int[{k}] stride=[], int[{k}] padding=0, bool ceil_mode=False, "
            f"bool count_include_pad=True, int? divisor_override=None) -> Tensor")


def _backward_schema(name: str, k: int) -> str:
    return (f"{name}(Tensor grad_output, Tensor self, int[{k}] kernel_size, int[{k}] stride, int[{k}] padding, "
            f"bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor")


def _define(k: int, backward_tags: Any) -> tuple[Op, Op]:
    """avg_pool{k}d and avg_pool{k}d_backward, each the other's formula."""
    ops: dict[str, Op] = {}
    name = f"avg_pool{k}d"
    ops["backward"] = defop(_backward_schema(f"{name}_backward", k), tags=backward_tags,
                            **_avg_pool_backward_kernels(f"{name}_backward", k),
                            backward=_avg_pool_backward_formula(lambda *a: ops["forward"](*a)),
                            setup_context=_avg_pool_backward_setup)
    ops["forward"] = defop(_schema(name, k), tags=CORE, **_avg_pool_kernels(name, k),
                           backward=_avg_pool_formula(ops["backward"]), setup_context=_avg_pool_setup)
    return ops["forward"], ops["backward"]


avg_pool2d, avg_pool2d_backward = _define(2, CORE)
avg_pool3d, avg_pool3d_backward = _define(3, PT2)


def _avg_pool1d(self: Any, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
                ceil_mode: bool = False, count_include_pad: bool = True) -> Any:
    """avg_pool2d over a height-1 plane. PyTorch: at::native::avg_pool1d (CompositeImplicitAutograd)."""
    if self.ndim not in (2, 3):
        raise RuntimeError(f"od::avg_pool1d: Expected 2D or 3D input tensor, got {list(self.shape)}")
    if len(kernel_size) != 1 or len(stride) > 1 or len(padding) != 1:
        raise RuntimeError("od::avg_pool1d: kernel_size, stride and padding must be single ints (stride may be [])")
    strides = [1, stride[0]] if len(stride) else [1, kernel_size[0]]
    out = avg_pool2d(views.unsqueeze(self, -2), [1, kernel_size[0]], strides, [0, padding[0]], ceil_mode,
                     count_include_pad)
    return views.squeeze_dim(out, -2)


avg_pool1d: Op = defop("avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
                       "bool ceil_mode=False, bool count_include_pad=True) -> Tensor", tags=CORE,
                       composite=_avg_pool1d)
