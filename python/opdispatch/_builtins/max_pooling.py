"""Max pooling: the Core ATen operators max_pool2d_with_indices and
max_pool3d_with_indices (the maximum of each window and its flat index in
the input plane), their gradient operators (the gradient scattered to those
indices), and max_pool1d/2d/3d as CompositeImplicitAutograd decompositions,
as PyTorch splits them."""
from __future__ import annotations

import math
from typing import Any, Sequence, cast

import numpy as np

from .. import _C
from . import factories, views
from ._numpy import call_numpy, call_numpy_pair, check_device, meta_like
from ._registry import CORE, PT2, Op, PairOp, defop
from ._windows import PoolParams, padded, pool_params, windows
from .._tensor_type import Tensor


def _lowest(dtype: np.dtype) -> Any:
    """The padding value no element beats: -inf, or the integer dtype's minimum."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _max_pool_of(x: np.ndarray, p: PoolParams) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of max pooling x (N, C, *size) or (C, *size); an index
    is the maximum's flat position in its (*size) plane, the first one of a
    tie, a NaN counting as the maximum (PyTorch's scan order)."""
    k = len(p.kernel)
    size = x.shape[-k:]
    lo, hi = p.pads(size)
    win = windows(padded(x, lo, hi, _lowest(x.dtype)), p.kernel, p.stride, p.dilation, p.out)
    flat = win.reshape(*win.shape[:-k], math.prod(p.kernel))
    arg = np.argmax(flat, axis=-1)  # NumPy's argmax also takes the first NaN
    values = np.take_along_axis(flat, arg[..., None], -1)[..., 0]
    offsets = np.unravel_index(arg, p.kernel)
    index = np.zeros(arg.shape, np.int64)
    for dim in range(k):  # one whole-array step per spatial dimension
        start = (np.arange(p.out[dim]) * p.stride[dim] - p.padding[dim]).reshape(
            [-1 if d == dim else 1 for d in range(k)])
        index = index * size[dim] + start + offsets[dim] * p.dilation[dim]
    return values, index


def _max_pool_kernels(name: str, k: int) -> dict[str, Any]:
    op = f"od::{name}"

    def cpu(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
            dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
        p = pool_params(op, self, k, kernel_size, stride, padding, dilation, ceil_mode)
        result = call_numpy_pair(_max_pool_of, self, p)
        return result

    def meta(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
             dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
        p = pool_params(op, self, k, kernel_size, stride, padding, dilation, ceil_mode)
        shape = (*self.shape[:-k], *p.out)
        return meta_like(shape, self.dtype), meta_like(shape, _C.int64)

    return {"cpu": cpu, "meta": meta}


def _max_pool_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.args = inputs[1:]
    ctx.mark_non_differentiable(output[1])
    ctx.save_for_backward(inputs[0], output[1])


def _max_pool_formula(backward_op: Any) -> Any:
    def formula(ctx: Any, grad: Any, grad_indices: Any) -> tuple[Any, ...]:
        """PyTorch: derivatives.yaml max_pool{2,3}d_with_indices."""
        self, indices = ctx.saved_tensors
        return (backward_op(grad, self, *ctx.args, indices),) + (None,) * 5

    return formula


# --- the gradient operators ---------------------------------------------------------------------------


def _scattered(go: np.ndarray, indices: np.ndarray, shape: Sequence[int], k: int) -> np.ndarray:
    """Zeros of ``shape`` with each gradient added at its index in its plane."""
    planes = int(np.prod(shape[:-k]))
    plane = int(np.prod(shape[-k:]))
    out = np.zeros(planes * plane, go.dtype)
    rows = np.arange(planes).reshape(-1, 1) * plane
    np.add.at(out, (rows + indices.reshape(planes, math.prod(indices.shape[-k:]))).reshape(-1), go.reshape(-1))
    return out.reshape(shape)


def _max_pool_backward_kernels(name: str, k: int) -> dict[str, Any]:
    op = f"od::{name}"

    def check(grad_output: Tensor, self: Tensor, kernel_size: Sequence[int], stride: Sequence[int],
              padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool, indices: Tensor) -> None:
        p = pool_params(op, self, k, kernel_size, stride, padding, dilation, ceil_mode)
        shape = [*self.shape[:-k], *p.out]
        if list(grad_output.shape) != shape or list(indices.shape) != shape:
            raise RuntimeError(f"{op}: expected grad_output and indices of shape {shape}, got "
                               f"{list(grad_output.shape)} and {list(indices.shape)}")
        if indices.dtype != _C.int64:
            raise RuntimeError(f"{op}: expected indices of dtype int64, got {indices.dtype}")

    def cpu(grad_output: Tensor, self: Tensor, kernel_size: Sequence[int], stride: Sequence[int],
            padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool, indices: Tensor) -> Tensor:
        check(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
        return call_numpy(_scattered, grad_output, indices, tuple(self.shape), k)

    def meta(grad_output: Tensor, self: Tensor, kernel_size: Sequence[int], stride: Sequence[int],
             padding: Sequence[int], dilation: Sequence[int], ceil_mode: bool, indices: Tensor) -> Tensor:
        check_device(op, grad_output, self, indices)
        check(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices)
        return meta_like(self.shape, grad_output.dtype)

    return {"cpu": cpu, "meta": meta}


def _gathered(g: np.ndarray, indices: np.ndarray, k: int) -> np.ndarray:
    plane = math.prod(g.shape[-k:])
    planes = g.reshape(-1, plane)
    picked = np.take_along_axis(planes, indices.reshape(planes.shape[0], math.prod(indices.shape[-k:])), axis=1)
    return picked.reshape(indices.shape)


def gather_planes(grad: Tensor, indices: Tensor, k: int) -> Tensor:
    """``grad`` (..., *size) read at each flat plane index of ``indices``
    (..., *out): the gradient of grad_output in a max pooling's double
    backward. PyTorch: max_pool_double_backward (a gather along the flattened
    plane). TODO(#31): od::gather once it exists, so that this step is
    differentiable (a third derivative) too."""
    if grad.is_meta:
        return meta_like(indices.shape, grad.dtype)
    return call_numpy(_gathered, grad, indices, k)


def _max_pool_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.self_shape = inputs[1].shape
    ctx.save_for_backward(inputs[1], inputs[7])


def _max_pool_backward_formula(k: int) -> Any:
    def formula(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
        """PyTorch: derivatives.yaml max_pool{2,3}d_with_indices_backward."""
        self, indices = ctx.saved_tensors
        g_go = gather_planes(grad, indices, k) if ctx.needs_input_grad[0] else None
        g_self = factories.zeros_like(self) if ctx.needs_input_grad[1] else None
        return (g_go, g_self) + (None,) * 6

    return formula


def _pool_schema(name: str, k: int, returns: str) -> str:
    return (f"{name}(Tensor self, int[{k}] kernel_size, int[{k}] stride=[], int[{k}] padding=0, int[{k}] dilation=1, "
            f"bool ceil_mode=False) -> {returns}")


def _pool_backward_schema(name: str, k: int) -> str:
    return (f"{name}(Tensor grad_output, Tensor self, int[{k}] kernel_size, int[{k}] stride, int[{k}] padding, "
            f"int[{k}] dilation, bool ceil_mode, Tensor indices) -> Tensor")


max_pool2d_with_indices_backward: Op = defop(
    _pool_backward_schema("max_pool2d_with_indices_backward", 2), tags=CORE,
    **_max_pool_backward_kernels("max_pool2d_with_indices_backward", 2),
    backward=_max_pool_backward_formula(2), setup_context=_max_pool_backward_setup)
max_pool3d_with_indices_backward: Op = defop(
    _pool_backward_schema("max_pool3d_with_indices_backward", 3), tags=PT2,
    **_max_pool_backward_kernels("max_pool3d_with_indices_backward", 3),
    backward=_max_pool_backward_formula(3), setup_context=_max_pool_backward_setup)
max_pool2d_with_indices = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    _pool_schema("max_pool2d_with_indices", 2, "(Tensor, Tensor)"), tags=CORE,
    **_max_pool_kernels("max_pool2d_with_indices", 2),
    backward=_max_pool_formula(max_pool2d_with_indices_backward), setup_context=_max_pool_setup))
max_pool3d_with_indices = cast(PairOp, defop(
    _pool_schema("max_pool3d_with_indices", 3, "(Tensor, Tensor)"), tags=CORE,
    **_max_pool_kernels("max_pool3d_with_indices", 3),
    backward=_max_pool_formula(max_pool3d_with_indices_backward), setup_context=_max_pool_setup))


# --- max_pool1d/2d/3d ------------------------------------------------------------------------------------


def _max_pool2d(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
                dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Tensor:
    """PyTorch: at::native::max_pool2d (CompositeImplicitAutograd; the values of max_pool2d_with_indices)."""
    return max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _max_pool3d(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
                dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Tensor:
    """PyTorch: at::native::max_pool3d (CompositeImplicitAutograd)."""
    return max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode)[0]


def _one(values: Sequence[int], name: str) -> int:
    if len(values) != 1:
        raise RuntimeError(f"od::max_pool1d: {name} must be a single int, got {list(values)}")
    return int(values[0])


def _max_pool1d(self: Tensor, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
                dilation: Sequence[int] = (1,), ceil_mode: bool = False) -> Tensor:
    """max_pool2d_with_indices over a height-1 plane. PyTorch: at::native::max_pool1d (CompositeImplicitAutograd)."""
    if self.ndim not in (2, 3) or 0 in tuple(self.shape)[1:]:
        raise RuntimeError(f"od::max_pool1d: Expected 2D or 3D input tensor with non-zero size for the non-batch "
                           f"dimensions, got {list(self.shape)}")
    kernel = _one(kernel_size, "kernel_size")
    strides = [1, _one(stride, "stride")] if len(stride) else [1, kernel]
    plane = views.unsqueeze(self, -2)
    out = max_pool2d_with_indices(plane, [1, kernel], strides, [0, _one(padding, "padding")],
                                  [1, _one(dilation, "dilation")], ceil_mode)[0]
    return views.squeeze_dim(out, -2)


max_pool1d: Op = defop("max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
                       "int[1] dilation=[1], bool ceil_mode=False) -> Tensor", tags=PT2, composite=_max_pool1d)
max_pool2d: Op = defop(_pool_schema("max_pool2d", 2, "Tensor"), tags=PT2, composite=_max_pool2d)
max_pool3d: Op = defop(_pool_schema("max_pool3d", 3, "Tensor"), tags=PT2, composite=_max_pool3d)
