"""Custom operators made with opdispatch.library.custom_op, with fake impls,
autograd formulas and sample inputs: the test cases opcheck and gradcheck run
over (tests/test_opcheck.py). Ported from PyTorch's
torch/testing/_internal/custom_op_db.py (namespace _torch_testing ->
_opdispatch_testing; NumPy kernels; the vmap rules are left out, as
opdispatch has no vmap). Importing this module registers the operators for
the rest of the process.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

import opdispatch
from opdispatch import Tensor
from opdispatch.library import Library, custom_op, get_ctx, register_fake
from opdispatch.types import Number

NS = "_opdispatch_testing"


def to_numpy(t: Tensor) -> np.ndarray:
    return t.numpy()


def new_tensor(a: Any) -> Tensor:
    """A new cpu tensor holding a copy of the array ``a`` (PyTorch: torch.tensor(a, device=x.device))."""
    return opdispatch.tensor(np.asarray(a))


def _slices_along(x: Tensor, splits: Sequence[int], dim: int) -> list[Tensor]:
    """Views of ``x`` split along ``dim`` before each index in ``splits`` (PyTorch: tensor_split)."""
    bounds = [0, *splits, x.shape[dim]]
    lead = (slice(None),) * (dim % x.dim())
    return [x[lead + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:])]


# --- numpy_cube ----------------------------------------------------------------------------------

@custom_op(f"{NS}::numpy_cube", mutates_args=())
def numpy_cube(x: Tensor) -> Tuple[Tensor, Tensor]:
    x_np = to_numpy(x)
    return new_tensor(x_np ** 3), new_tensor(3 * x_np ** 2)


@numpy_cube.register_fake
def _(x):
    return x.clone(), x.clone()


def numpy_cube_setup_context(ctx, inputs, output):
    (x,) = inputs
    _cube, dx = output
    ctx.save_for_backward(x, dx)


def numpy_cube_backward(ctx, grad_out, grad_dx):
    x, dx = ctx.saved_tensors
    return numpy_mul(grad_out, dx) + 6 * numpy_mul(grad_dx, x)


numpy_cube.register_autograd(numpy_cube_backward, setup_context=numpy_cube_setup_context)


# --- numpy_mul, numpy_mul_scalar ----------------------------------------------------------------------

@custom_op(f"{NS}::numpy_mul", mutates_args=())
def numpy_mul(x: Tensor, y: Tensor) -> Tensor:
    return new_tensor(to_numpy(x) * to_numpy(y))


@numpy_mul.register_fake
def _(x, y):
    assert x.device == y.device, f"x.device={x.device} != y.device={y.device}"
    return (x * y).contiguous()


def numpy_mul_setup_context(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def numpy_mul_backward(ctx, grad_out):
    x, y = ctx.saved_tensors
    grad_x = grad_out * y if ctx.needs_input_grad[0] else None
    grad_y = grad_out * x if ctx.needs_input_grad[1] else None
    return grad_x, grad_y


numpy_mul.register_autograd(numpy_mul_backward, setup_context=numpy_mul_setup_context)


@custom_op(f"{NS}::numpy_mul_scalar", mutates_args=())
def numpy_mul_scalar(x: Tensor, *, scalar: float) -> Tensor:
    return new_tensor(to_numpy(x) * scalar)


@numpy_mul_scalar.register_fake
def _(x, *, scalar):
    return (x * scalar).contiguous()


def numpy_mul_scalar_setup_context(ctx, inputs, keyword_only_inputs, output):
    ctx.scalar = keyword_only_inputs["scalar"]


def numpy_mul_scalar_backward(ctx, grad_out):
    return grad_out * ctx.scalar


numpy_mul_scalar.register_autograd(numpy_mul_scalar_backward, setup_context=numpy_mul_scalar_setup_context)


# --- numpy_sort, numpy_take -----------------------------------------------------------------------------

@custom_op(f"{NS}::numpy_sort", mutates_args=())
def numpy_sort(x: Tensor, dim: int) -> Tuple[Tensor, Tensor, Tensor]:
    x = to_numpy(x)
    ind = np.argsort(x, axis=dim)
    ind_inv = np.argsort(ind, axis=dim)
    return new_tensor(np.take_along_axis(x, ind, axis=dim)), new_tensor(ind), new_tensor(ind_inv)


@numpy_sort.register_fake
def _(x, dim):
    long = opdispatch.int64
    return opdispatch.empty_like(x), opdispatch.empty_like(x, dtype=long), opdispatch.empty_like(x, dtype=long)


def numpy_sort_setup_context(ctx, inputs, output):
    _out, ind, ind_inv = output
    ctx.dim = inputs[1]
    ctx.save_for_backward(ind, ind_inv)
    ctx.mark_non_differentiable(ind, ind_inv)


def numpy_sort_backward(ctx, grad_out, grad_ind, grad_ind_inv):
    ind, ind_inv = ctx.saved_tensors
    return numpy_take(grad_out, ind_inv, ind, ctx.dim), None


numpy_sort.register_autograd(numpy_sort_backward, setup_context=numpy_sort_setup_context)


@custom_op(f"{NS}::numpy_take", mutates_args=())
def numpy_take(x: Tensor, ind: Tensor, ind_inv: Tensor, dim: int) -> Tensor:
    return new_tensor(np.take_along_axis(to_numpy(x), to_numpy(ind), dim))


@numpy_take.register_fake
def _(x, ind, ind_inv, dim):
    assert x.device == ind.device == ind_inv.device, "x, ind and ind_inv must be on one device"
    assert ind.dtype == opdispatch.int64 and ind_inv.dtype == opdispatch.int64, "ind and ind_inv must be int64"
    return opdispatch.empty_like(x)


def numpy_take_setup_context(ctx, inputs, output):
    _x, ind, ind_inv, dim = inputs
    ctx.dim = dim
    ctx.save_for_backward(ind, ind_inv)


def numpy_take_backward(ctx, grad_out):
    ind, ind_inv = ctx.saved_tensors
    return numpy_take(grad_out, ind_inv, ind, ctx.dim), None, None, None


numpy_take.register_autograd(numpy_take_backward, setup_context=numpy_take_setup_context)


# --- numpy_nonzero, numpy_nms (data-dependent output sizes) ----------------------------------------------

@custom_op(f"{NS}::numpy_nonzero", mutates_args=())
def numpy_nonzero(x: Tensor) -> Tensor:
    res = np.stack(np.nonzero(to_numpy(x)), axis=1)
    if res.shape[0] <= 1:
        raise RuntimeError("not supported")
    return new_tensor(res)


@numpy_nonzero.register_fake
def _(x):
    nnz = get_ctx().new_dynamic_size()
    return x.new_empty([nnz, x.dim()], dtype=opdispatch.int64)


@custom_op(f"{NS}::numpy_nms", mutates_args=())
def numpy_nms(boxes: Tensor, scores: Tensor, iou_threshold: Number) -> Tensor:
    # Adapted from Ross Girshick's fast-rcnn implementation at
    # https://github.com/rbgirshick/fast-rcnn/blob/master/lib/utils/nms.py
    assert boxes.device == scores.device, f"boxes.device={boxes.device} != scores.device={scores.device}"
    boxes, scores = to_numpy(boxes), to_numpy(scores)
    n = boxes.shape[0]
    assert boxes.shape == (n, 4) and scores.shape == (n,), "boxes must be (N, 4) and scores (N,)"
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)
    order = scores.argsort()[::-1]
    keep = []
    while order.size > 0:
        i = order[0]
        keep.append(i)
        xx1 = np.maximum(x1[i], x1[order[1:]])
        yy1 = np.maximum(y1[i], y1[order[1:]])
        xx2 = np.minimum(x2[i], x2[order[1:]])
        yy2 = np.minimum(y2[i], y2[order[1:]])
        inter = np.maximum(0.0, xx2 - xx1 + 1) * np.maximum(0.0, yy2 - yy1 + 1)
        ovr = inter / (areas[i] + areas[order[1:]] - inter)
        order = order[np.where(ovr <= iou_threshold)[0] + 1]
    result = new_tensor(np.stack(keep))
    assert result.shape[0] >= 2, f"result.size(0) must be >= 2, got {result.shape[0]}"
    return result


@numpy_nms.register_fake
def _(boxes, scores, iou_threshold):
    assert boxes.device == scores.device, f"boxes.device={boxes.device} != scores.device={scores.device}"
    n = boxes.shape[0]
    assert boxes.shape == (n, 4) and scores.shape == (n,), "boxes must be (N, 4) and scores (N,)"
    return boxes.new_empty([get_ctx().new_dynamic_size()], dtype=opdispatch.int64)


# --- numpy_view_copy, numpy_cat, numpy_split_copy ------------------------------------------------------------

@custom_op(f"{NS}::numpy_view_copy", mutates_args=())
def numpy_view_copy(x: Tensor, shape: Sequence[int]) -> Tensor:
    return new_tensor(np.copy(to_numpy(x).reshape(shape)))


@numpy_view_copy.register_fake
def _(x, shape) -> Tensor:
    return x.clone().view(shape).clone()


def numpy_view_copy_setup_context(ctx, inputs, output) -> None:
    ctx.x_shape = inputs[0].shape


def numpy_view_copy_backward(ctx, grad_out):
    return getattr(opdispatch.ops, NS).numpy_view_copy(grad_out, ctx.x_shape), None


numpy_view_copy.register_autograd(numpy_view_copy_backward, setup_context=numpy_view_copy_setup_context)


@custom_op(f"{NS}::numpy_cat", mutates_args=())
def numpy_cat(xs: Sequence[Tensor], dim: int) -> Tensor:
    assert len(xs) > 0, "xs must not be empty"
    assert all(x.device == xs[0].device and x.dtype == xs[0].dtype for x in xs), "xs must share device and dtype"
    return new_tensor(np.concatenate([to_numpy(x) for x in xs], axis=dim))


@numpy_cat.register_fake
def _(xs, dim):
    assert len(xs) > 0, "xs must not be empty"
    assert all(x.device == xs[0].device and x.dtype == xs[0].dtype for x in xs), "xs must share device and dtype"
    return opdispatch.cat(xs, dim)


def numpy_cat_setup_context(ctx, inputs, output):
    xs, dim = inputs
    ctx.dim_sizes = [x.shape[dim] for x in xs]
    ctx.dim = dim


def numpy_cat_backward(ctx, grad_out):
    splits = list(np.cumsum(ctx.dim_sizes)[:-1])
    return getattr(opdispatch.ops, NS).numpy_split_copy(grad_out, splits, ctx.dim), None


numpy_cat.register_autograd(numpy_cat_backward, setup_context=numpy_cat_setup_context)


@custom_op(f"{NS}::numpy_split_copy", mutates_args=())
def numpy_split_copy(x: Tensor, splits: Sequence[int], dim: int) -> List[Tensor]:
    return [new_tensor(a) for a in np.split(to_numpy(x), splits, axis=dim)]


@numpy_split_copy.register_fake
def _(x, splits, dim):
    return [xi.clone() for xi in _slices_along(x, splits, dim)]


def numpy_split_copy_setup_context(ctx, inputs, output):
    _, _, dim = inputs
    ctx.dim = dim


def numpy_split_copy_backward(ctx, grad_out):
    return getattr(opdispatch.ops, NS).numpy_cat(grad_out, dim=ctx.dim), None, None


numpy_split_copy.register_autograd(numpy_split_copy_backward, setup_context=numpy_split_copy_setup_context)


@custom_op(f"{NS}::numpy_split_copy_with_int", mutates_args=())
def numpy_split_copy_with_int(x: Tensor, splits: Sequence[int], dim: int) -> Tuple[List[Tensor], int]:
    return [new_tensor(a) for a in np.split(to_numpy(x), splits, axis=dim)], len(splits)


@numpy_split_copy_with_int.register_fake
def _(x, splits, dim):
    return [xi.clone() for xi in _slices_along(x, splits, dim)], len(splits)


def numpy_split_copy_with_int_backward(ctx, grad_out, _):
    return getattr(opdispatch.ops, NS).numpy_cat(grad_out, dim=ctx.dim), None, None


numpy_split_copy_with_int.register_autograd(numpy_split_copy_with_int_backward,
                                            setup_context=numpy_split_copy_setup_context)


# --- sample inputs ----------------------------------------------------------------------------------------------

@dataclasses.dataclass
class SampleInput:
    input: Any
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)


def make_arg(*shape: int, dtype: Any, low: float = -9.0, high: float = 9.0, requires_grad: bool = False,
             seed: int = 0) -> Tensor:
    """A tensor of uniform samples in [low, high) (PyTorch: torch.testing.make_tensor)."""
    values = np.random.default_rng(seed).uniform(low, high, shape).astype(dtype.to_numpy())
    return opdispatch.tensor(values, requires_grad=requires_grad)


def sample_inputs_numpy_cube(dtype, requires_grad):
    yield SampleInput(make_arg(1, dtype=dtype, low=0.8, high=2, requires_grad=requires_grad))


def sample_inputs_numpy_mul(dtype, requires_grad):
    yield SampleInput(make_arg(4, dtype=dtype, low=0.9, high=2, requires_grad=requires_grad),
                      (make_arg(3, 4, dtype=dtype, low=0.9, high=2, requires_grad=requires_grad, seed=1),))


def sample_inputs_numpy_mul_scalar(dtype, requires_grad):
    yield SampleInput(make_arg(4, dtype=dtype, low=0.9, high=2, requires_grad=requires_grad), kwargs={"scalar": 3.14})


def sample_inputs_numpy_sort(dtype, requires_grad):
    yield SampleInput(make_arg(3, 5, dtype=dtype, requires_grad=requires_grad), (1,))


def sample_inputs_numpy_take(dtype, requires_grad):
    x = make_arg(3, 5, dtype=dtype, requires_grad=requires_grad)
    ind = np.argsort(x.numpy(force=True), axis=1)
    yield SampleInput(x, (new_tensor(ind), new_tensor(np.argsort(ind, axis=1)), 1))


def sample_inputs_numpy_nonzero(dtype, requires_grad):
    values = make_arg(10, dtype=dtype, low=0.9, high=2).numpy()
    mask = np.random.default_rng(1).integers(0, 2, 10)
    mask[:2] = 1  # at least two nonzeros: the kernel refuses fewer
    yield SampleInput(opdispatch.tensor(values * mask.astype(values.dtype), requires_grad=requires_grad))


def sample_inputs_numpy_nms(dtype, requires_grad):
    n = 64
    xs, dx = make_arg(n, dtype=dtype, low=0, high=28, seed=1), make_arg(n, dtype=dtype, low=0, high=4, seed=2)
    ys, dy = make_arg(n, dtype=dtype, low=0, high=28, seed=3), make_arg(n, dtype=dtype, low=0, high=4, seed=4)
    boxes = opdispatch.stack([xs, ys, xs + dx, ys + dy], 1).requires_grad_(requires_grad)
    scores = make_arg(n, dtype=dtype, low=0, high=1, requires_grad=requires_grad, seed=5)
    iou_threshold = make_arg(dtype=dtype, low=0, high=1, seed=6).item()
    yield SampleInput(boxes, (scores, iou_threshold))


def sample_inputs_numpy_view_copy(dtype, requires_grad):
    yield SampleInput(make_arg(2, 3, 4, dtype=dtype, low=0.9, high=2, requires_grad=requires_grad), ([2, 12],))


def sample_inputs_numpy_cat(dtype, requires_grad):
    parts = [make_arg(n, 3, 4, dtype=dtype, low=0.9, high=2, requires_grad=requires_grad, seed=n) for n in (2, 4, 5)]
    yield SampleInput(parts, (0,))


def sample_inputs_numpy_split_copy(dtype, requires_grad):
    yield SampleInput(make_arg(2, 9, dtype=dtype, low=0.9, high=2, requires_grad=requires_grad), ([1, 3, 6], 1))


@dataclasses.dataclass
class CustomOpInfo:
    """One operator of the database (PyTorch: an OpInfo): ``op`` with sample
    inputs from ``sample_inputs(dtype, requires_grad)``; gradcheck runs on
    ``gradcheck_wrapper(op, *args, **kwargs)`` when ``supports_autograd``."""

    name: str
    op: Any
    sample_inputs: Callable[[Any, bool], Iterator[SampleInput]]
    supports_autograd: bool = True
    gradcheck_wrapper: Optional[Callable[..., Any]] = None


ops = getattr(opdispatch.ops, NS)

custom_op_db = [
    CustomOpInfo("NumpyCubeCustomOp", numpy_cube._opoverload, sample_inputs_numpy_cube),
    CustomOpInfo("NumpyMulCustomOp", numpy_mul._opoverload, sample_inputs_numpy_mul),
    CustomOpInfo("NumpyMulScalarCustomOp", numpy_mul_scalar._opoverload, sample_inputs_numpy_mul_scalar),
    CustomOpInfo("NumpySortCustomOp", numpy_sort._opoverload, sample_inputs_numpy_sort),
    CustomOpInfo("NumpyTakeCustomOp", numpy_take._opoverload, sample_inputs_numpy_take),
    CustomOpInfo("NumpyNonzeroCustomOp", numpy_nonzero._opoverload, sample_inputs_numpy_nonzero,
                 supports_autograd=False),
    CustomOpInfo("NumpyNMSCustomOp", ops.numpy_nms, sample_inputs_numpy_nms, supports_autograd=False),
    CustomOpInfo("NumpyViewCopyCustomOp", ops.numpy_view_copy, sample_inputs_numpy_view_copy),
    CustomOpInfo("NumpyCatCustomOp", ops.numpy_cat, sample_inputs_numpy_cat),
    CustomOpInfo("NumpySplitCopyCustomOp", ops.numpy_split_copy, sample_inputs_numpy_split_copy),
    CustomOpInfo("NumpySplitCopyWithIntCustomOp", ops.numpy_split_copy_with_int, sample_inputs_numpy_split_copy,
                 gradcheck_wrapper=lambda op, *args, **kwargs: op(*args, **kwargs)[0]),
]


# --- where fake impls were registered (test_library_register_fake_source) -----------------------------------------

lib = Library(NS, "FRAGMENT")

lib.define("source0(Tensor x) -> Tensor")


@register_fake(f"{NS}::source0", lib=lib)
def _(x):
    return x.clone()


lib.define("source1(Tensor x) -> Tensor")


def source1_fake(x):
    return x.clone()


register_fake(f"{NS}::source1", source1_fake, lib=lib)

lib.define("source2(Tensor x) -> Tensor")


@register_fake(f"{NS}::source2", lib=lib)
def _(x):
    return x.clone()


lib.define("source3(Tensor x) -> Tensor")


def source3_fake(x):
    return x.clone()


register_fake(f"{NS}::source3", source3_fake, lib=lib)


@custom_op(f"{NS}::source4", mutates_args=())
def source4(x: Tensor) -> Tensor:
    return x.clone()


@source4.register_fake
def _(x):
    return x.clone()


@custom_op(f"{NS}::source5", mutates_args=())
def source5(x: Tensor) -> Tensor:
    return x.clone()


def source5_fake(x):
    return x.clone()


source5.register_fake(source5_fake)
