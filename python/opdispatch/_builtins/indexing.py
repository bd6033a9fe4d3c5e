"""Indexing by an index tensor: index_select and its gradient operator
index_select_backward, gather and scatter_add (each the other's gradient);
the adding ones use NumPy's np.add.at, so repeated indices add up."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import _C
from . import comparison, elementwise, factories, reduction
from ._numpy import broadcast_shape, call_numpy, check_device, meta_like, wrap_dim
from ._output_strides import call_numpy_strided, preserved_strides
from ._pointwise import _names
from ._registry import CORE, DYNAMIC_OUTPUT_SHAPE, INPLACE, PT2, Kernels, Op, defop
from .._ops import Tag
from .._tensor_type import Tensor


def _check_index(op: str, index: Tensor, size: int, values: bool) -> None:
    """PyTorch's rules for index_select's ``index``: at most 1-D, int32 or
    int64, and (when ``values``, on cpu) every entry in [0, size)."""
    if index.ndim > 1:
        raise IndexError(f"{op}: index_select(): Index is supposed to be a vector")
    if index.dtype not in (_C.int32, _C.int64):
        raise RuntimeError(f"{op}: index_select(): Expected dtype int32 or int64 for index")
    if values and not index.is_meta:
        entries = index.numpy().reshape(-1)
        bad = entries[(entries < 0) | (entries >= size)]
        if bad.size:
            raise RuntimeError(f"{op}: INDICES element is out of DATA bounds, id={bad[0]} axis_dim={size}")


def _selected_shape(op: str, self: Tensor, dim: int, index: Tensor) -> tuple[int, tuple[int, ...]]:
    d = wrap_dim(op, dim, self.ndim)
    if self.ndim == 0:
        if index.numel() != 1:
            raise RuntimeError(f"{op}: index_select(): Index to scalar can have only 1 value, got {index.numel()} "
                               f"value(s)")
        return d, ()
    shape = list(self.shape)
    shape[d] = index.numel()
    return d, tuple(shape)


def _index_select_of(a: np.ndarray, d: int, index: np.ndarray) -> np.ndarray:
    return a.copy() if a.ndim == 0 else np.take(a, index.reshape(-1), axis=d)


def _index_select_cpu(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d, _ = _selected_shape("od::index_select", self, dim, index)
    _check_index("od::index_select", index, self.shape[d] if self.ndim else 1, True)
    return call_numpy(_index_select_of, self, d, index)


def _index_select_meta(self: Tensor, dim: int, index: Tensor) -> Tensor:
    d, shape = _selected_shape("od::index_select", self, dim, index)
    _check_index("od::index_select", index, self.shape[d] if self.ndim else 1, False)
    return meta_like(shape, self.dtype)


def _index_select_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, ctx.dim, index = inputs
    ctx.shape = list(self.shape)
    ctx.save_for_backward(index)


index_select: Op = defop("index_select(Tensor self, int dim, Tensor index) -> Tensor", tags=CORE,
                         cpu=_index_select_cpu, meta=_index_select_meta, setup_context=_index_select_setup,
                         backward=lambda ctx, grad: (index_select_backward(grad, ctx.shape, ctx.dim,
                                                                           ctx.saved_tensors[0]), None, None))


def _added_at(grad: np.ndarray, sizes: tuple[int, ...], d: int, index: np.ndarray) -> np.ndarray:
    out = np.zeros(sizes, grad.dtype)
    if not sizes:
        out[()] = grad.reshape(())
        return out
    where: Any = (slice(None),) * d + (index.reshape(-1),)
    np.add.at(out, where, grad)
    return out


def _index_select_backward_cpu(grad: Tensor, self_sizes: Sequence[int], dim: int, index: Tensor) -> Tensor:
    """Zeros of ``self_sizes`` with each row of ``grad`` added at its index (repeated indices add up)."""
    d = wrap_dim("od::index_select_backward", dim, len(self_sizes))
    return call_numpy(_added_at, grad, tuple(self_sizes), d, index)


def _index_select_backward_meta(grad: Tensor, self_sizes: Sequence[int], dim: int, index: Tensor) -> Tensor:
    wrap_dim("od::index_select_backward", dim, len(self_sizes))
    return meta_like(tuple(self_sizes), grad.dtype)


def _index_select_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dim = inputs[2]
    ctx.save_for_backward(inputs[3])


index_select_backward: Op = defop(
    "index_select_backward(Tensor grad, SymInt[] self_sizes, int dim, Tensor index) -> Tensor", tags=PT2,
    cpu=_index_select_backward_cpu, meta=_index_select_backward_meta, setup_context=_index_select_backward_setup,
    backward=lambda ctx, grad: (index_select(grad, ctx.dim, ctx.saved_tensors[0]), None, None, None))


# --- gather, scatter_add ----------------------------------------------------------------------


def _check_gather_index(op: str, self: Tensor, d: int, index: Tensor, src: Any = None) -> None:
    """PyTorch's shape and dtype rules for gather's and scatter_add's
    ``index`` (0-d tensors count as 1-D): int32 or int64; as many dims as
    ``self``; no larger than ``self`` but along ``d``, nor than ``src``.
    PyTorch: gather_shape_check, scatter_shape_check."""
    if index.dtype not in (_C.int32, _C.int64):
        raise RuntimeError(f"{op}: Expected dtype int32 or int64 for index")
    ndim = max(self.ndim, 1)
    if max(index.ndim, 1) != ndim or (src is not None and max(src.ndim, 1) != ndim):
        raise RuntimeError(f"{op}: Index tensor must have the same number of dimensions as input tensor")
    shape, sizes = list(index.shape) or [1], list(self.shape) or [1]
    if src is None:
        for i in range(ndim):
            if i != d and shape[i] > sizes[i]:
                raise RuntimeError(f"{op}: Size does not match at dimension {i} expected index {shape} to be no "
                                   f"larger than self {sizes} apart from dimension {d}")
        return
    src_sizes = list(src.shape) or [1]
    if any((i != d and shape[i] > sizes[i]) or shape[i] > src_sizes[i] for i in range(ndim)):
        raise RuntimeError(f"{op}: Expected index {shape} to be no larger than self {sizes} apart from dimension "
                           f"{d} and to be no larger size than src {src_sizes}")


def _check_gather_values(op: str, self: Tensor, d: int, index: Tensor) -> None:
    """Every entry of ``index`` in [0, size of ``self`` along ``d``) (cpu only: data-dependent)."""
    if index.is_meta or not index.numel():
        return
    size = self.shape[d] if self.ndim else 1
    entries = index.numpy().reshape(-1)
    bad = entries[(entries < 0) | (entries >= size)]
    if bad.size:
        raise RuntimeError(f"{op}: index {bad[0]} is out of bounds for dimension {d} with size {size}")


def _along(a: np.ndarray, index: np.ndarray, d: int) -> tuple[Any, ...]:
    """The NumPy index that puts ``index`` along ``d`` and each position elsewhere (index's shape)."""
    grids = np.ogrid[tuple(slice(0, n) for n in index.shape)]
    return tuple(index.astype(np.intp) if i == d else grids[i] for i in range(index.ndim))


def _gather_of(a: np.ndarray, d: int, index: np.ndarray) -> np.ndarray:
    flat = a.reshape(a.shape or (1,))
    picked = flat[_along(flat, index.reshape(index.shape or (1,)), d)]
    return np.asarray(picked).reshape(index.shape)


def _gather_cpu(self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    d = wrap_dim("od::gather", dim, self.ndim)
    _check_gather_index("od::gather", self, d, index)
    _check_gather_values("od::gather", self, d, index)
    return call_numpy(_gather_of, self, d, index)


def _gather_meta(self: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    _check_gather_index("od::gather", self, wrap_dim("od::gather", dim, self.ndim), index)
    return meta_like(index.shape, self.dtype)


def _gather_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    self, ctx.dim, index = inputs[:3]
    ctx.save_for_backward(self, index)


def _gather_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None]:
    """The gradient added into zeros at the gathered positions. PyTorch: gather_backward."""
    self, index = ctx.saved_tensors
    return scatter_add(factories.zeros_like(self, dtype=grad.dtype), ctx.dim, index, grad), None, None


gather: Op = defop("gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", tags=CORE,
                   cpu=_gather_cpu, meta=_gather_meta, backward=_gather_backward, setup_context=_gather_setup)


def _scattered(a: np.ndarray, d: int, index: np.ndarray, src: Any, add: bool) -> np.ndarray:
    """A copy of ``a`` with ``src`` (an array at least index's size, or a
    scalar) written (or, with ``add``, added: np.add.at, so repeated indices
    add up) at ``index`` along ``d``."""
    out = np.array(a, order="C", copy=True)
    flat = out.reshape(out.shape or (1,))
    shaped = index.reshape(index.shape or (1,))
    sizes: tuple[int, ...] = shaped.shape
    where = _along(flat, shaped, d)
    if isinstance(src, np.ndarray):
        leading = tuple(slice(0, n) for n in sizes)  # src may be larger than index
        src = src.reshape(src.shape or (1,))[leading]
    if add:
        np.add.at(flat, where, src)
    else:
        flat[where] = src
    return out


def _check_scatter(op: str, self: Tensor, dim: int, index: Tensor, src: Tensor) -> int:
    d = wrap_dim(op, dim, self.ndim)
    if self.dtype != src.dtype:
        raise RuntimeError(f"{op}: scatter(): Expected self.dtype to be equal to src.dtype")
    _check_gather_index(op, self, d, index, src)
    return d


def _scatter_kernels(name: str, add: bool) -> Kernels:
    """Kernels of scatter_add (``add``) and scatter.src: ``src`` added or
    written at ``index`` along ``dim`` into a copy of ``self``, after
    PyTorch's shape and dtype checks (index values on cpu only)."""

    def cpu(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
        d = _check_scatter(name, self, dim, index, src)
        _check_gather_values(name, self, d, index)
        return call_numpy(_scattered, self, d, index, src, add)

    def meta(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
        _check_scatter(name, self, dim, index, src)
        return meta_like(self.shape, self.dtype)

    return _names(name, cpu, meta)


def _scatter_add_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dim = inputs[1]
    ctx.save_for_backward(inputs[2])


def _scatter_add_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, Any]:
    """self's gradient passes through; src's is the gradient gathered at index. PyTorch: derivatives.yaml."""
    (index,) = ctx.saved_tensors
    return grad, None, None, gather(grad, ctx.dim, index) if ctx.needs_input_grad[3] else None


scatter_add: Op = defop("scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", tags=CORE,
                        **_scatter_kernels("od::scatter_add", True), backward=_scatter_add_backward,
                        setup_context=_scatter_add_setup)


def _scatter_value_cpu(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    d = wrap_dim("od::scatter.value", dim, self.ndim)
    _check_gather_index("od::scatter.value", self, d, index)
    _check_gather_values("od::scatter.value", self, d, index)
    return call_numpy(_scattered, self, d, index, value, False)


def _scatter_value_meta(self: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    _check_gather_index("od::scatter.value", self, wrap_dim("od::scatter.value", dim, self.ndim), index)
    return meta_like(self.shape, self.dtype)


def _scatter_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, Any]:
    """self's gradient is grad with zeros where values were written; src's the
    gradient gathered at index (scatter.src only). PyTorch: derivatives.yaml scatter."""
    (index,) = ctx.saved_tensors
    src_grad = gather(grad, ctx.dim, index) if ctx.src and ctx.needs_input_grad[3] else None
    return scatter_value(grad, ctx.dim, index, 0), None, None, src_grad


def _scatter_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _scatter_add_setup(ctx, inputs, output)
    ctx.src = isinstance(inputs[3], Tensor)


scatter_src: Op = defop("scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", tags=CORE,
                        **_scatter_kernels("od::scatter.src", False), backward=_scatter_backward,
                        setup_context=_scatter_setup)
scatter_value: Op = defop("scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor", tags=CORE,
                          cpu=_scatter_value_cpu, meta=_scatter_value_meta, backward=_scatter_backward,
                          setup_context=_scatter_setup)


# --- scatter_reduce ---------------------------------------------------------------------------

#: scatter_reduce's reductions: the ufunc that combines values (mean sums, then divides).
_SCATTER_REDUCTIONS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}


def _check_scatter_reduce(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str) -> int:
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"od::scatter_reduce.two: reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    return _check_scatter("od::scatter_reduce.two", self, dim, index, src)


def _identity(ufunc: np.ufunc, dtype: np.dtype) -> Any:
    """The value that ``ufunc`` leaves any other unchanged (for a position whose own value is left out)."""
    if ufunc is np.maximum:
        return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min if dtype.kind in "iu" else False
    if ufunc is np.minimum:
        return np.inf if dtype.kind in "fc" else np.iinfo(dtype).max if dtype.kind in "iu" else True
    return ufunc.identity


def _scatter_reduced(a: np.ndarray, d: int, index: np.ndarray, src: np.ndarray, reduce: str,
                     include_self: bool) -> np.ndarray:
    """``a`` with each of ``src``'s entries reduced into the position ``index``
    names along ``d`` (ufunc.at, so repeated positions all count); without
    ``include_self`` a position that receives entries forgets its own value.
    mean divides by the count (self counting once when included), flooring for integers."""
    ufunc = _SCATTER_REDUCTIONS[reduce]
    if a.dtype == np.float16:  # PyTorch's CPU kernel reduces float16 in float32 and rounds once
        return _scatter_reduced(a.astype(np.float32), d, index, src.astype(np.float32), reduce,
                                include_self).astype(np.float16)
    out = np.array(a, order="C", copy=True)
    flat = out.reshape(out.shape or (1,))
    shaped = index.reshape(index.shape or (1,))
    where = _along(flat, shaped, d)
    sizes: tuple[int, ...] = shaped.shape
    values = src.reshape(src.shape or (1,))[tuple(slice(0, n) for n in sizes)]  # src may be larger than index
    touched = np.zeros(flat.shape, bool)
    touched[where] = True
    if not include_self:
        flat[touched] = _identity(ufunc, flat.dtype)
    ufunc.at(flat, where, values)
    if reduce == "mean":
        counts = np.where(touched & (not include_self), 0, 1)
        np.add.at(counts, where, 1)
        if flat.dtype.kind in "fc":
            flat /= counts
        else:
            flat //= counts.astype(flat.dtype)
    return out


def _scatter_reduce_cpu(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                        include_self: bool = True) -> Tensor:
    d = _check_scatter_reduce(self, dim, index, src, reduce)
    _check_gather_values("od::scatter_reduce.two", self, d, index)
    return call_numpy(_scatter_reduced, self, d, index, src, reduce, include_self)


def _scatter_reduce_meta(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                         include_self: bool = True) -> Tensor:
    _check_scatter_reduce(self, dim, index, src, reduce)
    return meta_like(self.shape, self.dtype)


def _scatter_reduce_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any],
                          output: Any) -> None:
    self, ctx.dim, index, src, ctx.reduce = inputs
    ctx.include_self = keyword_only_inputs.get("include_self", True)
    ctx.save_for_backward(self, index, src, output)


def _scatter_reduce_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, Any, None]:
    """PyTorch: scatter_reduce_backward (FunctionsManual.cpp): sum passes grad
    to self and gathers it for src; mean divides it by the counts first; amax
    / amin share it evenly among self and the src entries equal to the result;
    prod gives each the result over its own value (no zeros: a zero gives
    inf or nan there, where PyTorch's takes the product of the others). Without
    include_self, self gets nothing where entries were reduced."""
    self, index, src, out = ctx.saved_tensors
    dim = ctx.dim
    if ctx.reduce == "sum":
        grad_self, grad_src = grad, gather(grad, dim, index)
    elif ctx.reduce == "mean":
        counts = factories.ones_like(self) if ctx.include_self else factories.zeros_like(self)
        counts = scatter_add(counts, dim, index, factories.ones_like(src))
        counts = elementwise.where(comparison.eq_scalar(counts, 0), factories.ones_like(counts), counts)
        grad_self = elementwise.div(grad, counts)
        grad_src = gather(grad_self, dim, index)
    elif ctx.reduce == "prod":
        scaled = elementwise.mul(grad, out)
        grad_self = elementwise.div(scaled, self)
        grad_src = elementwise.div(gather(scaled, dim, index), src)
    else:
        self_is_result = elementwise.as_dtype(comparison.eq(self, out), grad.dtype)
        src_is_result = elementwise.as_dtype(comparison.eq(src, gather(out, dim, index)), grad.dtype)
        shares = scatter_add(self_is_result, dim, index, src_is_result)
        grad_distributed = elementwise.div(grad, shares)
        grad_self = elementwise.mul(self_is_result, grad_distributed)
        grad_src = elementwise.mul(src_is_result, gather(grad_distributed, dim, index))
    if not ctx.include_self:
        grad_self = scatter_value(grad_self, dim, index, 0)
    return grad_self, None, None, grad_src if ctx.needs_input_grad[3] else None, None


scatter_reduce: Op = defop(
    "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) "
    "-> Tensor", tags=CORE, cpu=_scatter_reduce_cpu, meta=_scatter_reduce_meta, backward=_scatter_reduce_backward,
    setup_context=_scatter_reduce_setup)


# --- masked_scatter ---------------------------------------------------------------------------


def _masked_scatter_shape(self: Tensor, mask: Tensor, source: Tensor) -> tuple[int, ...]:
    """The result's shape (self's and mask's broadcast), after PyTorch's dtype checks."""
    op = "od::masked_scatter"
    if mask.dtype != _C.bool:
        raise RuntimeError(f"{op}: masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    if source.dtype != self.dtype:
        raise RuntimeError(f"{op}: masked_scatter: expected self and source to have same dtypes but got "
                           f"{self.dtype} and {source.dtype}")
    return broadcast_shape(op, self.shape, mask.shape)


def _masked_scattered(a: np.ndarray, mask: np.ndarray, source: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """``a`` broadcast to ``shape`` with ``source``'s first elements (in C
    order) at the positions ``mask`` (broadcast too) marks, in C order."""
    out = np.array(np.broadcast_to(a, shape), order="C", copy=True)
    where = np.broadcast_to(mask, shape)
    out[where] = source.reshape(-1)[: np.count_nonzero(where)]
    return out


def _masked_scatter_cpu(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    shape = _masked_scatter_shape(self, mask, source)
    check_device("od::masked_scatter", self, mask, source)
    if int(np.count_nonzero(np.broadcast_to(mask.numpy(), shape))) > source.numel():
        raise RuntimeError("od::masked_scatter: Number of elements of source < number of ones in mask")
    return call_numpy(_masked_scattered, self, mask, source, shape)


def _masked_scatter_meta(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return meta_like(_masked_scatter_shape(self, mask, source), self.dtype)


def _masked_scatter_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, mask, source = inputs
    ctx.self_shape, ctx.source_shape = tuple(self.shape), list(source.shape)
    ctx.save_for_backward(mask)


def _masked_scatter_grad(ctx: Any, grad: Tensor) -> tuple[Any, None, Any]:
    """self's gradient is grad with zeros where the mask is set (summed back
    to self's shape if it was broadcast); source's is masked_scatter_backward's.
    PyTorch: derivatives.yaml masked_scatter."""
    (mask,) = ctx.saved_tensors
    grad_self = elementwise.where(mask, factories.zeros_like(grad), grad)
    grad_source = masked_scatter_backward(grad, mask, ctx.source_shape) if ctx.needs_input_grad[2] else None
    return reduction.sum_to(grad_self, ctx.self_shape), None, grad_source


masked_scatter: Op = defop("masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor", tags=CORE,
                           cpu=_masked_scatter_cpu, meta=_masked_scatter_meta, backward=_masked_scatter_grad,
                           setup_context=_masked_scatter_setup)


def _masked_selected(grad: np.ndarray, mask: np.ndarray, sizes: list[int]) -> np.ndarray:
    """The elements of ``grad`` that ``mask`` (broadcast) marks, in C order,
    zero-filled to ``sizes``' element count and shaped so."""
    picked = grad[np.broadcast_to(mask, grad.shape)]
    out = np.zeros(int(np.prod(sizes)), grad.dtype)
    out[: picked.size] = picked
    return out.reshape(sizes)


def _masked_scatter_backward_cpu(grad_output: Tensor, mask: Tensor, sizes: Sequence[int]) -> Tensor:
    """RuntimeError (as PyTorch's view) when the mask selects more elements than ``sizes`` holds (cpu only)."""
    selected = int(np.count_nonzero(np.broadcast_to(mask.numpy(), grad_output.shape)))
    if selected > int(np.prod(list(sizes))):
        raise RuntimeError(f"od::masked_scatter_backward: shape '{list(sizes)}' is invalid for input of size "
                           f"{selected}")
    return call_numpy(_masked_selected, grad_output, mask, list(sizes))


def _masked_scatter_backward_meta(grad_output: Tensor, mask: Tensor, sizes: Sequence[int]) -> Tensor:
    return meta_like(list(sizes), grad_output.dtype)


masked_scatter_backward: Op = defop(
    "masked_scatter_backward(Tensor grad_output, Tensor mask, SymInt[] sizes) -> Tensor", tags=PT2,
    cpu=_masked_scatter_backward_cpu, meta=_masked_scatter_backward_meta, differentiable=False)


# --- nonzero ----------------------------------------------------------------------------------


def _nonzero_of(a: np.ndarray) -> np.ndarray:
    """The int64 coordinates of ``a``'s nonzero elements (NaN counts) in C
    order, one row per dimension: (ndim, n). A 0-d array has 0 or 1 of them."""
    coords = np.nonzero(a.reshape(1)) if a.ndim == 0 else np.nonzero(a)
    return np.stack(coords[: a.ndim]).astype(np.int64) if a.ndim else np.zeros((0, len(coords[0])), np.int64)


def _nonzero_cpu(self: Tensor) -> Tensor:
    """An (n, ndim) tensor of coordinates with strides (1, n), as PyTorch lays
    nonzero's result out (the transpose of a contiguous (ndim, n))."""
    coords = call_numpy(_nonzero_of, self)
    ndim, n = coords.shape
    return _C._as_strided(coords, [n, ndim], [1, n], 0)


def _nonzero_meta(self: Tensor) -> Tensor:
    """NotImplementedError: the size depends on the data, which a meta tensor
    lacks. PyTorch: the meta registration of nonzero raises NotImplementedError
    unless told to assume every element nonzero (FakeTensorMode gives a
    data-dependent size instead)."""
    raise NotImplementedError("od::nonzero: the number of nonzero elements depends on the data, which a meta tensor "
                              "does not have, so the result's size is unknown; run it on cpu")


nonzero: Op = defop("nonzero(Tensor self) -> Tensor", tags=DYNAMIC_OUTPUT_SHAPE, cpu=_nonzero_cpu,
                    meta=_nonzero_meta, differentiable=False)
# --- index, index_put: advanced indexing by a list of optional index tensors -----------------------
# PyTorch: index / index_put_ (aten/src/ATen/native/TensorAdvancedIndexing.cpp) and
# the shape rules of expandTensors / AdvancedIndex (TensorAdvancedIndexingUtils.h).

_INDEX_DTYPES = (_C.int64, _C.int32, _C.uint8, _C.bool)
_MASK_DTYPES = (_C.uint8, _C.bool)


def _check_indices(op: str, self: Tensor, indices: Sequence[Optional[Tensor]]) -> None:
    """PyTorch's metadata checks of ``indices`` (IndexError), in its order:
    at least one entry, index dtypes, no more indexed dims than ``self`` has
    (a mask indexes as many as it has), each mask's shape equal to the dims
    it covers. Broadcasting is checked by ``_numpy_index`` (masks: data)."""
    if not indices:
        raise IndexError(f"{op}: at least one index must be provided")
    for t in indices:
        if t is not None and t.dtype not in _INDEX_DTYPES:
            raise IndexError(f"{op}: tensors used as indices must be long, int, byte or bool tensors")
    used = sum(max(t.ndim, 1) if t is not None and t.dtype in _MASK_DTYPES else 1 for t in indices)
    if used > self.ndim:
        raise IndexError(f"{op}: too many indices for tensor of dimension {self.ndim} (got {used})")
    d = 0
    for t in indices:
        if t is not None and t.dtype in _MASK_DTYPES:
            for j, n in enumerate(t.shape):
                if n != self.shape[d + j]:
                    raise IndexError(f"{op}: The shape of the mask {list(t.shape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {list(self.shape)} at index {d + j}")
            d += t.ndim
        else:
            d += 1
    if all(t is None for t in indices):
        raise RuntimeError(f"{op}: at least one index must be a tensor (every entry is None)")
    if any(t is not None and t.dtype in _MASK_DTYPES and t.ndim == 0 for t in indices):
        raise RuntimeError(f"{op}: a 0-dimensional bool or byte index is not supported (PyTorch 2.13 fails an "
                           f"internal assert there)")


def _numpy_index(op: str, shape: Sequence[int], arrays: Sequence[Optional[np.ndarray]]) -> tuple[Any, ...]:
    """The NumPy index equal to PyTorch's: None a full slice, a mask its
    nonzero() positions, integer indices checked against their dim's size
    (IndexError numbering the index tensors as PyTorch does) and broadcast
    together. NumPy's placement of the indexed dims is PyTorch's: in place
    when the index tensors are adjacent, first otherwise."""
    items: list[Any] = []
    for a in arrays:
        if a is None:
            items.append(slice(None))
        elif a.dtype in (np.bool_, np.uint8):
            items.extend(np.nonzero(a.astype(bool)))
        else:
            items.append(a.astype(np.intp))
    tensors = [i for i in items if not isinstance(i, slice)]
    for k, (dim, item) in enumerate((d, i) for d, i in enumerate(items) if not isinstance(i, slice)):
        bad = item[(item < -shape[dim]) | (item >= shape[dim])]
        if bad.size:
            raise IndexError(f"{op}: index {bad.flat[0]} is out of bounds for dimension {k} with size {shape[dim]}")
    try:
        np.broadcast_shapes(*(i.shape for i in tensors))
    except ValueError:
        shapes = ", ".join(str(list(i.shape)) for i in tensors)
        raise IndexError(f"{op}: shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{shapes}") from None
    return tuple(items)


def _indexed_shape(op: str, self: Tensor, indices: Sequence[Optional[Tensor]]) -> tuple[int, ...]:
    """The result shape of integer ``indices`` (a mask's count is data: NotImplementedError on meta, as
    PyTorch's meta nonzero)."""
    if any(t is not None and t.dtype in _MASK_DTYPES for t in indices):
        raise NotImplementedError(f"{op}: a bool or byte mask index gives a data-dependent shape, which a meta "
                                  f"tensor cannot have")
    dims = [d for d, t in enumerate(indices) if t is not None]
    try:
        broadcast = np.broadcast_shapes(*(tuple(indices[d].shape) for d in dims))  # type: ignore[union-attr]
    except ValueError:
        shapes = ", ".join(str(list(indices[d].shape)) for d in dims)  # type: ignore[union-attr]
        raise IndexError(f"{op}: shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{shapes}") from None
    rest = [n for d, n in enumerate(self.shape) if d not in dims]
    if dims == list(range(dims[0], dims[-1] + 1)):
        return tuple(rest[:dims[0]]) + broadcast + tuple(rest[dims[0]:])
    return broadcast + tuple(rest)


def _arrays(indices: Sequence[Optional[Tensor]]) -> list[Optional[np.ndarray]]:
    return [None if t is None else t.numpy(force=True) for t in indices]


def _index_cpu(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    _check_indices("od::index.Tensor", self, indices)
    items = _numpy_index("od::index.Tensor", self.shape, _arrays(indices))
    return call_numpy(lambda a: np.asarray(a[items]), self)


def _index_meta(self: Tensor, indices: Sequence[Optional[Tensor]]) -> Tensor:
    _check_indices("od::index.Tensor", self, indices)
    return meta_like(_indexed_shape("od::index.Tensor", self, indices), self.dtype)


def _index_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.indices = list(inputs[1])
    ctx.self = factories.empty_like(inputs[0])


def _index_backward(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    """The gradient added into zeros at the indexed positions (repeats add up). PyTorch: index_backward."""
    return index_put(factories.zeros_like(ctx.self, dtype=grad.dtype), ctx.indices, grad, True), None


index: Op = defop("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
                  tags=(Tag.core, Tag.dynamic_output_shape, Tag.pt2_compliant_tag),
                  cpu=_index_cpu, meta=_index_meta, backward=_index_backward, setup_context=_index_setup)


def _is_masked_fill(indices: Sequence[Optional[Tensor]], values: Tensor) -> bool:
    """Whether index_put without accumulate writes a 0-d value through one
    mask, which PyTorch runs as masked_fill_ (the value is cast to self's
    dtype). PyTorch: canDispatchToMaskedFill (TensorAdvancedIndexing.cpp)."""
    given = [t for t in indices if t is not None]
    return values.ndim == 0 and len(given) == 1 and given[0].dtype in _MASK_DTYPES


def _check_index_put(op: str, self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor,
                     accumulate: bool = False) -> None:
    if values.dtype != self.dtype and not (not accumulate and _is_masked_fill(indices, values)):
        from .linalg import _TYPE_NAMES  # linalg imports elementwise, which imports this module

        raise RuntimeError(f"{op}: Index put requires the source and destination dtypes match, got "
                           f"{_TYPE_NAMES[self.dtype.name][0]} for the destination and "
                           f"{_TYPE_NAMES[values.dtype.name][0]} for the source.")
    _check_indices(op, self, indices)


def _check_values_shape(values_shape: Sequence[int], target_shape: Sequence[int]) -> None:
    try:
        ok = np.broadcast_shapes(tuple(values_shape), tuple(target_shape)) == tuple(target_shape)
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(f"od::index_put: shape mismatch: value tensor of shape {list(values_shape)} cannot be "
                           f"broadcast to indexing result of shape {list(target_shape)}")


def _put(a: np.ndarray, values: np.ndarray, items: tuple[Any, ...], accumulate: bool) -> np.ndarray:
    return _put_into(np.array(a, order="K", copy=True), values, items, accumulate)


def _put_into(out: np.ndarray, values: np.ndarray, items: tuple[Any, ...], accumulate: bool) -> np.ndarray:
    target_shape = out[items].shape
    _check_values_shape(values.shape, target_shape)
    values = np.broadcast_to(values, target_shape)
    if accumulate:
        np.add.at(out, items, values)
    else:
        out[items] = values
    return out


def _index_put_cpu(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False
                   ) -> Tensor:
    _check_index_put("od::index_put", self, indices, values, accumulate)
    items = _numpy_index("od::index_put", self.shape, _arrays(indices))
    # PyTorch: self.clone(preserve_format).index_put_(...)
    return call_numpy_strided(self.shape, preserved_strides(self), _put, self, values, items, accumulate)


def _check_index_put_meta(op: str, self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor,
                          accumulate: bool) -> None:
    _check_index_put(op, self, indices, values, accumulate)
    if not any(t is not None and t.dtype in _MASK_DTYPES for t in indices):  # a mask's count is data
        _check_values_shape(values.shape, _indexed_shape(op, self, indices))


def _index_put_meta(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False
                    ) -> Tensor:
    _check_index_put_meta("od::index_put", self, indices, values, accumulate)
    return meta_like(self.shape, self.dtype, preserved_strides(self))


def _index_put_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.indices = list(inputs[1])
    ctx.values_shape = tuple(inputs[2].shape)
    ctx.accumulate = inputs[3] if len(inputs) > 3 else False


def _index_put_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, Any, None]:
    """self: the gradient, with the overwritten positions zeroed unless
    accumulating; values: the gradient at the indexed positions, summed to
    values' shape. PyTorch: derivatives.yaml (index_put)."""
    from .reduction import sum_to  # reduction imports views, which imports this module

    self_grad = grad if ctx.accumulate else index_put(grad, ctx.indices, factories.zeros([], dtype=grad.dtype))
    values_grad = sum_to(index(grad, ctx.indices), ctx.values_shape) if ctx.needs_input_grad[2] else None
    return self_grad, None, values_grad, None


index_put: Op = defop("index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
                      tags=CORE, cpu=_index_put_cpu, meta=_index_put_meta, backward=_index_put_backward,
                      setup_context=_index_put_setup)


def _index_put__cpu(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False
                    ) -> Tensor:
    _check_index_put("od::index_put_", self, indices, values, accumulate)
    items = _numpy_index("od::index_put_", self.shape, _arrays(indices))
    return call_numpy(_put_into, self, values, items, accumulate)


def _index_put__meta(self: Tensor, indices: Sequence[Optional[Tensor]], values: Tensor, accumulate: bool = False
                     ) -> Tensor:
    _check_index_put_meta("od::index_put_", self, indices, values, accumulate)
    return self


#: index_put in place, as Tensor.__setitem__ writes through advanced indices (PyTorch: aten::index_put_).
index_put_: Op = defop("index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) "
                       "-> Tensor(a!)", tags=INPLACE, cpu=_index_put__cpu, meta=_index_put__meta,
                       backward=_index_put_backward, setup_context=_index_put_setup)
