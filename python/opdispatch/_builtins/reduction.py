"""Reductions: sum, mean, amax / amin, max.dim / min.dim, argmax / argmin, any (over all or some dimensions,
with keepdim), prod, var, the scan cumsum, and the sum_to helper that gradients of broadcasting use."""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Optional, Sequence, cast

import numpy as np

from .. import _C
from . import comparison, elementwise, factories, shape, views
from ._numpy import call_numpy, call_numpy_pair, meta_like, opmath_dtype, wrap_dim
from ._pointwise import _names
from ._registry import CORE, NONCORE_REDUCTION, PT2, REDUCTION, Kernels, Op, PairOp, defop
from .._tensor_type import Tensor


def _dims(op: str, dim: Optional[Sequence[int]], ndim: int) -> tuple[int, ...]:
    """The reduced dimensions: all for None or [], else ``dim`` wrapped; RuntimeError for a repeated dimension."""
    if dim is None or len(dim) == 0:
        return tuple(range(ndim))
    dims = tuple(wrap_dim(op, d, ndim) for d in dim)
    if ndim == 0:
        return ()  # a 0-d tensor accepts dim 0 / -1 and has nothing to reduce
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"{op}: dimension list {list(dim)} names a dimension twice")
    return dims


def _reduced_shape(shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> tuple[int, ...]:
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keepdim or i not in dims)


def _check_nonempty(op: str, self: Tensor, dims: Sequence[int]) -> None:
    if any(self.shape[d] == 0 for d in dims):
        raise IndexError(f"{op}: expected reduction dimensions {list(dims)} of the input of shape {list(self.shape)} "
                         f"to be non-empty (the reduction has no identity)")


def _restore(grad: Tensor, shape: Sequence[int], dims: Sequence[int], keepdim: bool) -> Tensor:
    """``grad`` of a reduction with the reduced dimensions back as size 1 (broadcastable to ``shape``)."""
    return grad if keepdim else views.reshape(grad, _reduced_shape(shape, dims, True))


def _reduction_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    """Saves the input's shape and the ``(dim, keepdim)`` arguments of a
    ``(self, dim=None, keepdim=False)`` reduction (see _reduced_dims). (A
    ``dtype=`` result's gradient is cast back by the engine: Note [Gradients
    of broadcast and promoted inputs].)"""
    ctx.shape = inputs[0].shape
    if len(inputs) > 1:
        ctx.dim_args = inputs[1:]


def _dim_args(ctx: Any) -> tuple[Any, ...]:
    return getattr(ctx, "dim_args", ())


def _reduced_dims(ctx: Any) -> tuple[tuple[int, ...], bool]:
    """The reduced dimensions and keepdim of the reduction ``ctx`` recorded (the kernel checked them)."""
    dim_args = _dim_args(ctx)
    dim = dim_args[0] if dim_args else None
    keepdim = bool(dim_args[1]) if len(dim_args) > 1 else False
    return _dims("od::reduction", [dim] if isinstance(dim, int) else dim, len(ctx.shape)), keepdim


def _no_grads(ctx: Any) -> tuple[None, ...]:
    return (None,) * len(_dim_args(ctx))


# --- sum, mean ------------------------------------------------------------------------


#: The NumPy dtype sum gives a tensor of each dtype. PyTorch: integral and
#: bool inputs sum to int64 unless a dtype is given.
_SUM_DTYPES = {d: np.dtype(np.int64) if d.to_numpy().kind in "biu" else d.to_numpy()
               for d in (getattr(_C, n) for n in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                                  "float32", "float64", "complex64", "complex128"))}


def _sum_dtype(self: Tensor, dtype: Any) -> np.dtype:
    return _SUM_DTYPES[self.dtype] if dtype is None else dtype.to_numpy()


def _mean_dtype(self: Tensor, dtype: Any) -> np.dtype:
    npd = self.dtype.to_numpy() if dtype is None else dtype.to_numpy()
    if npd.kind not in "fc":
        raise RuntimeError(f"od::mean: could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {self.dtype if dtype is None else dtype}")
    return npd


# Note [Small sums]
# NumPy's reductions cost several times a binary ufunc before the first
# element is added (about 1.7 us for 10 elements, against 0.3 us for a dot
# product). Below NumPy's pairwise-summation block (128 elements, summed
# with 8 running accumulators) a contiguous float32/float64 sum of every
# element is the dot product with a vector of ones: BLAS sums with running
# accumulators too, in the same dtype, and x * 1 is exact.
_PAIRWISE_BLOCK = 128
_BLAS_DTYPES = {_C.float32: np.dtype(np.float32), _C.float64: np.dtype(np.float64)}
_dot = np.ndarray.dot
_BLAS_NUMPY_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


@functools.lru_cache(maxsize=2 * _PAIRWISE_BLOCK)
def _ones(n: int, dtype: np.dtype) -> np.ndarray:
    ones = np.ones(n, dtype)
    ones.flags.writeable = False
    return ones


def _small_sum(a: np.ndarray) -> Any:
    """Note [Small sums]."""
    return a.reshape(-1).dot(_ones(a.size, a.dtype))


def sum_of(a: np.ndarray) -> Any:
    """The sum of every element of a NumPy array, in its dtype (for kernels; see Note [Small sums])."""
    if a.dtype in _BLAS_NUMPY_DTYPES and 0 < a.size <= _PAIRWISE_BLOCK and a.flags.c_contiguous:
        return _small_sum(a)
    return _sum_all(a)


# Note [Reductions along short rows]
# NumPy reduces a C-contiguous matrix along its last axis one row at a time
# (an inner loop per row), so with short rows a reduction costs about a row
# count of small loops: 1.5 us for the sums of the rows of a 32x10 matrix.
# Kernels summing along the last axis of such a matrix (softmax and its
# gradients) use a matrix-vector product with ones instead (Note [Small
# sums]; 0.4 us).


def sums_along(a: np.ndarray, axis: Optional[int]) -> np.ndarray:
    """``a`` summed along ``axis``, keeping the dimension (for kernels; Note [Reductions along short rows])."""
    if (axis in (1, -1) and a.ndim == 2 and a.dtype in _BLAS_NUMPY_DTYPES and 0 < a.shape[1] <= _PAIRWISE_BLOCK
            and a.flags.c_contiguous):
        sums: np.ndarray = a.dot(_ones(a.shape[1], a.dtype)).reshape(a.shape[0], 1)
        return sums
    return _sum_all(a, axis, keepdims=True)


def _reducer(name: str, fn: Callable[..., np.ndarray], out_dtype: Callable[[Tensor, Any], np.dtype]
             ) -> Kernels:
    def cpu(self: Tensor, dim: Optional[Sequence[int]] = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        dims = None if dim is None else _dims(name, dim, self.ndim)
        return call_numpy(fn, self, dims, out_dtype(self, dtype), None, keepdim)

    def meta(self: Tensor, dim: Optional[Sequence[int]] = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
        dims = _dims(name, dim, self.ndim)
        return meta_like(_reduced_shape(self.shape, dims, keepdim), out_dtype(self, dtype))

    return {"cpu": cpu, "meta": meta}


def _expanded_grad(ctx: Any, grad: Tensor) -> Tensor:
    """The gradient of a sum or mean spread over its input's shape with the
    calls PyTorch's sum_backward makes (FunctionsManual.cpp): over dims given
    without keepdim, each reduced dim is put back by unsqueeze, in increasing
    order, then expanded; a full reduction's 0-d gradient is expanded as it is."""
    dims, keepdim = _reduced_dims(ctx)
    dim_args = _dim_args(ctx)
    dims_given = bool(dim_args) and dim_args[0] is not None and (isinstance(dim_args[0], int) or len(dim_args[0]) > 0)
    if not keepdim and ctx.shape and dims_given:
        for d in sorted(dims):
            grad = views.unsqueeze(grad, d)
    return views.expand(grad, ctx.shape)


def _sum_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    return (_expanded_grad(ctx, grad),) + _no_grads(ctx)


def _mean_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    dims, _ = _reduced_dims(ctx)
    count = int(np.prod([ctx.shape[d] for d in dims]))
    return (elementwise.div_scalar(_expanded_grad(ctx, grad), count),) + _no_grads(ctx)


def _mean_of(a: np.ndarray, axis: Any, dtype: np.dtype, out: None, keepdims: bool) -> np.ndarray:
    mean: np.ndarray = np.mean(a, axis=axis, dtype=dtype, keepdims=keepdims)
    return mean


_sum_all = np.add.reduce

sum_dim: Op = defop("sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                    tags=REDUCTION, **_reducer("od::sum.dim_IntList", _sum_all, _sum_dtype),
                    backward=_sum_backward, setup_context=_reduction_setup)


#: ``(dtype, numel)`` of a small float tensor -> the vector of ones its sum
#: is the dot product with (Note [Small sums]), filled by _sum_ones. Keyed by
#: the opdispatch dtype: hashing a NumPy dtype (the key of _ones) costs more
#: than the rest of a 10-element sum's kernel.
_SUM_ONES: dict[tuple[Any, int], np.ndarray] = {}


def _sum_ones(dtype: Any, n: int) -> Optional[np.ndarray]:
    """The entry of _SUM_ONES for a tensor of ``dtype`` and ``n`` elements, made
    on first use; None for one whose sum is not a dot product (never kept)."""
    numpy_dtype = _BLAS_DTYPES.get(dtype)
    if numpy_dtype is None or not 0 < n <= _PAIRWISE_BLOCK:
        return None
    ones = _SUM_ONES[dtype, n] = _ones(n, numpy_dtype)
    return ones


def _sum_cpu(self: Tensor, *, dtype: Any = None) -> Tensor:
    """od::sum: a small contiguous float tensor as a dot product (Note [Small sums])."""
    if dtype is None:
        dt, n = self.dtype, self.numel()
        ones = _SUM_ONES.get((dt, n))
        if ones is None:
            ones = _sum_ones(dt, n)
        if ones is not None and self.is_contiguous():
            return call_numpy(_dot, self, ones) if self.ndim == 1 else call_numpy(_small_sum, self)
    return call_numpy(_sum_all, self, None, _sum_dtype(self, dtype))


sum_: Op = defop("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", tags=NONCORE_REDUCTION,
                 cpu=_sum_cpu, meta=_reducer("od::sum", _sum_all, _sum_dtype)["meta"], backward=_sum_backward,
                 setup_context=_reduction_setup)
mean_dim: Op = defop("mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                     tags=REDUCTION, **_reducer("od::mean.dim", _mean_of, _mean_dtype),
                     backward=_mean_backward, setup_context=_reduction_setup)
mean: Op = defop("mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", tags=REDUCTION,
                 **_reducer("od::mean", _mean_of, _mean_dtype), backward=_mean_backward, setup_context=_reduction_setup)


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Sums ``grad`` over the dimensions that broadcasting added or stretched
    to reach its shape from ``shape``. PyTorch: at::sum_to."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    stretched = [lead + i for i, s in enumerate(shape) if s == 1 and grad.shape[lead + i] != 1]
    if stretched:
        grad = sum_dim(grad, stretched, True)
    if lead:
        grad = sum_dim(grad, list(range(lead)), False)
    return grad

# --- amax / amin, max.dim / min.dim, argmax / argmin -----------------------------------------
# Each pair is one builder given NumPy's maximum or minimum (and argmax or argmin).


def _extremum(name: str, ufunc: np.ufunc) -> Kernels:
    """Kernels of amax / amin: ``ufunc.reduce`` over ``dim`` (every dim when
    empty); IndexError naming ``name`` for a bad dim, RuntimeError for an
    empty reduced dimension."""

    def cpu(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
        dims = _dims(name, dim, self.ndim)
        _check_nonempty(name, self, dims)
        return call_numpy(ufunc.reduce, self, dims, None, None, keepdim)

    def meta(self: Tensor, dim: Sequence[int] = (), keepdim: bool = False) -> Tensor:
        dims = _dims(name, dim, self.ndim)
        _check_nonempty(name, self, dims)
        return meta_like(_reduced_shape(self.shape, dims, keepdim), self.dtype)

    return _names(name, cpu, meta)


def _extremum_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _reduction_setup(ctx, inputs, output)
    ctx.save_for_backward(inputs[0], output)


def _extremum_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """The gradient is shared evenly among the elements equal to the result.
    PyTorch: derivatives.yaml amax, amin (scale_grad_by_count)."""
    self, out = ctx.saved_tensors
    dims, keepdim = _reduced_dims(ctx)
    mask = comparison.eq(self, _restore(out, ctx.shape, dims, keepdim))
    count = sum_dim(mask, list(dims), True, dtype=grad.dtype)
    g = elementwise.div(elementwise.mul(_restore(grad, ctx.shape, dims, keepdim), mask), count)
    return (g,) + _no_grads(ctx)


amax: Op = defop("amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", tags=REDUCTION,
                 **_extremum("od::amax", np.maximum), backward=_extremum_backward, setup_context=_extremum_setup)
amin: Op = defop("amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", tags=REDUCTION,
                 **_extremum("od::amin", np.minimum), backward=_extremum_backward, setup_context=_extremum_setup)


def _select_along(arg: Callable[..., np.ndarray], a: np.ndarray, d: int,
                  keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """The values ``arg`` (np.argmax or np.argmin) picks along ``d``, and their int64 indices."""
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    indices = arg(a, axis=d, keepdims=True)
    values = np.take_along_axis(a, indices, axis=d)
    if not keepdim:
        values, indices = values.squeeze(d), indices.squeeze(d)
    return values, indices.astype(np.int64)


def _value_and_index(name: str, arg: Callable[..., np.ndarray]) -> Kernels:
    """Kernels of max.dim / min.dim: the extreme values along ``dim`` and their indices."""

    def cpu(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        d = wrap_dim(name, dim, self.ndim)
        _check_nonempty(name, self, (d,) if self.ndim else ())
        return call_numpy_pair(_select_along, arg, self, d, keepdim)

    def meta(self: Tensor, dim: int, keepdim: bool = False) -> tuple[Tensor, Tensor]:
        d = wrap_dim(name, dim, self.ndim)
        _check_nonempty(name, self, (d,) if self.ndim else ())
        shape = _reduced_shape(self.shape, (d,) if self.ndim else (), keepdim)
        return meta_like(shape, self.dtype), meta_like(shape, _C.int64)

    return _names(name, cpu, meta)


def _value_and_index_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _reduction_setup(ctx, inputs, output)
    ctx.save_for_backward(output[1])


def _value_and_index_backward(ctx: Any, grad: Tensor, grad_indices: Tensor) -> tuple[Any, ...]:
    """The gradient goes to the element whose index max.dim / min.dim returned.
    PyTorch: value_selecting_reduction_backward."""
    (indices,) = ctx.saved_tensors
    if not ctx.shape:
        return (grad,) + _no_grads(ctx)
    dims, keepdim = _reduced_dims(ctx)
    d = dims[0]
    positions = views.reshape(factories.arange(ctx.shape[d], device=grad.device),
                              [ctx.shape[d] if i == d else 1 for i in range(len(ctx.shape))])
    chosen = comparison.eq(positions, _restore(indices, ctx.shape, dims, keepdim))
    restored = _restore(grad, ctx.shape, dims, keepdim)
    return (elementwise.where(chosen, restored, factories.zeros_like(restored)),) + _no_grads(ctx)


max_dim = cast(PairOp, defop(  # returns two tensors (defop's type says one)
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", tags=REDUCTION,
    **_value_and_index("od::max.dim", np.argmax), backward=_value_and_index_backward,
    setup_context=_value_and_index_setup))
min_dim = cast(PairOp, defop(
    "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", tags=REDUCTION,
    **_value_and_index("od::min.dim", np.argmin), backward=_value_and_index_backward,
    setup_context=_value_and_index_setup))


def _arg_of(arg: Callable[..., np.ndarray], a: np.ndarray, axis: Optional[int], keepdim: bool) -> np.ndarray:
    indices: np.ndarray = arg(a, axis=axis, keepdims=keepdim)
    return indices.astype(np.int64)


def _index_of_extremum(name: str, arg: Callable[..., np.ndarray]) -> Kernels:
    """Kernels of argmax / argmin: the int64 index of the extreme value
    (over the flattened tensor when ``dim`` is None)."""

    def dims_of(self: Tensor, dim: Optional[int]) -> tuple[int, ...]:
        dims = _dims(name, None if dim is None else [dim], self.ndim)
        _check_nonempty(name, self, dims)
        return dims

    def cpu(self: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
        dims = dims_of(self, dim)
        axis = None if dim is None or self.ndim == 0 else dims[0]
        return call_numpy(_arg_of, arg, self, axis, keepdim)

    def meta(self: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
        return meta_like(_reduced_shape(self.shape, dims_of(self, dim), keepdim), _C.int64)

    return _names(name, cpu, meta)


argmax: Op = defop("argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", tags=REDUCTION,
                   **_index_of_extremum("od::argmax", np.argmax), differentiable=False)
argmin: Op = defop("argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", tags=REDUCTION,
                   **_index_of_extremum("od::argmin", np.argmin), differentiable=False)


# --- any ------------------------------------------------------------------------------------


def _any_kernels(name: str, dims_of: Callable[[Tensor, Any], tuple[int, ...]]) -> Kernels:
    """Kernels of an ``any`` overload: whether some element along the
    dimensions ``dims_of(self, dim)`` is nonzero (NaN counts), bool, or
    uint8 for a uint8 input as in PyTorch; empty dimensions give False."""

    def dtype_of(self: Tensor) -> _C.dtype:
        return _C.uint8 if self.dtype == _C.uint8 else _C.bool

    def cpu(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        dims = dims_of(self, dim)
        return call_numpy(_any_of, self, dims, keepdim, dtype_of(self).to_numpy())

    def meta(self: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
        return meta_like(_reduced_shape(self.shape, dims_of(self, dim), keepdim), dtype_of(self))

    return _names(name, cpu, meta)


def _any_of(a: np.ndarray, dims: tuple[int, ...], keepdim: bool, dtype: np.dtype) -> np.ndarray:
    return np.asarray(np.any(a, axis=dims, keepdims=keepdim)).astype(dtype)


def _any_dims(self: Tensor, dim: Optional[Sequence[int]]) -> tuple[int, ...]:
    """any.dims reduces every dimension for None and none for []."""
    if dim is not None and len(dim) == 0:
        return ()
    return _dims("od::any.dims", dim, self.ndim)


any_: Op = defop("any(Tensor self) -> Tensor", tags=REDUCTION,
                 **_any_kernels("od::any", lambda self, dim: tuple(range(self.ndim))), differentiable=False)
any_dim: Op = defop("any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", tags=REDUCTION,
                    **_any_kernels("od::any.dim", lambda self, dim: _dims("od::any.dim", [dim], self.ndim)),
                    differentiable=False)
any_dims: Op = defop("any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor", tags=REDUCTION,
                     **_any_kernels("od::any.dims", _any_dims), differentiable=False)


# --- cumsum, cumprod ---------------------------------------------------------------------------


def _scan_kernels(name: str, scan: Callable[..., np.ndarray]) -> Kernels:
    """Kernels of a running reduction along ``dim`` (``scan``: np.cumsum or
    np.cumprod) in ``dtype``, or int64 for integral and bool inputs when none
    is given; float16 accumulates in float32, as PyTorch's CPU kernels do."""

    def scan_of(a: np.ndarray, axis: int, dtype: np.dtype) -> np.ndarray:
        if a.ndim == 0:
            return a.astype(dtype)
        return scan(a, axis=axis, dtype=opmath_dtype(dtype)).astype(dtype, copy=False)

    def cpu(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        return call_numpy(scan_of, self, wrap_dim(name, dim, self.ndim), _sum_dtype(self, dtype))

    def meta(self: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
        wrap_dim(name, dim, self.ndim)
        return meta_like(self.shape, _sum_dtype(self, dtype))

    return {"cpu": cpu, "meta": meta}


def _cumsum_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    ctx.ndim, ctx.dim, ctx.dtype = inputs[0].ndim, inputs[1], inputs[0].dtype


def _reversed_cumsum(t: Tensor, d: int) -> Tensor:
    """The running sums of ``t`` along ``d`` from the end."""
    return shape.flip(cumsum(shape.flip(t, [d]), d), [d])


def _cumsum_backward(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    """The running sums of ``grad`` from the end, in the input's dtype. PyTorch: derivatives.yaml cumsum."""
    if ctx.ndim == 0:
        return elementwise.as_dtype(grad, ctx.dtype), None
    return elementwise.as_dtype(_reversed_cumsum(grad, ctx.dim), ctx.dtype), None


cumsum: Op = defop("cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", tags=CORE,
                   **_scan_kernels("od::cumsum", np.cumsum), backward=_cumsum_backward, setup_context=_cumsum_setup)


def _cumprod_setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
    ctx.ndim, ctx.dtype = inputs[0].ndim, inputs[0].dtype
    ctx.dim = wrap_dim("od::cumprod", inputs[1], inputs[0].ndim) if inputs[0].ndim else 0
    ctx.save_for_backward(inputs[0], output)


def _cumprod_backward(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    """d out[j] / d x[k] is the product of x[0..j] but x[k]. Before a slice's
    first zero that is out[j] / x[k]; at the first zero, the running product
    with that zero taken as 1; after it, 0. PyTorch: cumprod_backward
    (FunctionsManual.cpp), which splits at the first zero the same way."""
    self, out = ctx.saved_tensors
    if ctx.ndim == 0:
        return elementwise.as_dtype(grad, ctx.dtype), None
    d = ctx.dim
    x = elementwise.as_dtype(self, out.dtype)
    zero = comparison.eq_scalar(x, 0)
    zeros_so_far = cumsum(zero, d)
    before = comparison.eq_scalar(zeros_so_far, 0)
    first = elementwise.where(zero, comparison.eq_scalar(zeros_so_far, 1), zero)
    ones = factories.ones_like(x)
    safe = elementwise.where(before, x, ones)
    before_first = elementwise.div(_reversed_cumsum(elementwise.mul(grad, out), d), safe)
    at_first = _reversed_cumsum(elementwise.mul(grad, cumprod(elementwise.where(first, ones, x), d)), d)
    g = elementwise.where(before, before_first, elementwise.where(first, at_first, factories.zeros_like(x)))
    return elementwise.as_dtype(g, ctx.dtype), None


cumprod: Op = defop("cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", tags=PT2,
                    **_scan_kernels("od::cumprod", np.cumprod), backward=_cumprod_backward,
                    setup_context=_cumprod_setup)


# --- prod -----------------------------------------------------------------------------------


def _prod_of(a: np.ndarray, axis: Optional[int], keepdim: bool, dtype: np.dtype) -> np.ndarray:
    """The product along ``axis`` (every element when None) in ``dtype``;
    float16 multiplies in float32, as PyTorch's CPU kernel accumulates."""
    return np.asarray(np.prod(a, axis=axis, dtype=opmath_dtype(dtype), keepdims=keepdim)).astype(dtype, copy=False)


def _prod_cpu(self: Tensor, *, dtype: Any = None) -> Tensor:
    return call_numpy(_prod_of, self, None, False, _sum_dtype(self, dtype))


def _prod_meta(self: Tensor, *, dtype: Any = None) -> Tensor:
    return meta_like((), _sum_dtype(self, dtype))


def _prod_dim_cpu(self: Tensor, dim: int, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    d = wrap_dim("od::prod.dim_int", dim, self.ndim)
    return call_numpy(_prod_of, self, d if self.ndim else None, keepdim, _sum_dtype(self, dtype))


def _prod_dim_meta(self: Tensor, dim: int, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    d = wrap_dim("od::prod.dim_int", dim, self.ndim)
    return meta_like(_reduced_shape(self.shape, (d,) if self.ndim else (), keepdim), _sum_dtype(self, dtype))


def _prod_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _reduction_setup(ctx, inputs, output)
    ctx.save_for_backward(inputs[0], output)


def _prod_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """The product of the other elements of each element's slice: result / x
    where the slice has no zero; at a slice's only zero, the product of the
    rest; 0 elsewhere. PyTorch: prod_backward and prod_safe_zeros_backward
    (FunctionsManual.cpp), which avoid dividing by zero the same way."""
    self, out = ctx.saved_tensors
    if not ctx.shape:
        return (grad,) + _no_grads(ctx)
    dims, keepdim = _reduced_dims(ctx)
    restored_out = _restore(out, ctx.shape, dims, keepdim)
    if len(dims) != 1:  # prod over every element: one slice, the flattened tensor
        x, d = views.reshape(self, [-1]), 0
        restored_out = views.reshape(restored_out, [1])
    else:
        x, d = self, dims[0]
    zero = comparison.eq_scalar(x, 0)
    safe = elementwise.where(zero, factories.ones_like(x), x)
    only_zero = comparison.eq_scalar(sum_dim(zero, [d], True), 1)
    rest = elementwise.mul(prod_dim(safe, d, True), only_zero)
    others = elementwise.where(zero, rest, elementwise.div(restored_out, safe))
    g = elementwise.mul(views.reshape(others, ctx.shape), _restore(grad, ctx.shape, dims, keepdim))
    return (g,) + _no_grads(ctx)


prod: Op = defop("prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", tags=REDUCTION, cpu=_prod_cpu,
                 meta=_prod_meta, backward=_prod_backward, setup_context=_prod_setup)
prod_dim: Op = defop("prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                     tags=REDUCTION, cpu=_prod_dim_cpu, meta=_prod_dim_meta, backward=_prod_backward,
                     setup_context=_prod_setup)


# --- var ------------------------------------------------------------------------------------


def _var_dims(op: str, self: Tensor, dim: Optional[Sequence[int]]) -> tuple[int, ...]:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"{op}: std and var only support floating point and complex dtypes")
    return _dims(op, dim, self.ndim)


def _var_of(a: np.ndarray, dims: tuple[int, ...], correction: float, keepdim: bool) -> np.ndarray:
    with warnings.catch_warnings():  # N - correction <= 0 was warned about as PyTorch words it
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.var(a, axis=dims, ddof=correction, keepdims=keepdim))


def _check_degrees_of_freedom(self: Tensor, dims: tuple[int, ...], correction: float) -> None:
    """PyTorch's warning when the divisor N - correction is not positive (the result is then inf or nan)."""
    n = 1
    for d in dims:
        n *= self.shape[d]
    if n - correction <= 0:
        warnings.warn("var(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      "factor (input numel divided by output numel).", UserWarning, stacklevel=2)


def _var_kernels(name: str, correction_of: Callable[[dict[str, Any]], tuple[float, bool]]) -> Kernels:
    """Kernels of a var overload: the variance over ``dim`` (every dim when
    None or []) divided by N - correction, where ``correction_of`` reads the
    correction from the call's other arguments. PyTorch: var (ReduceOps.cpp)."""

    def cpu(self: Tensor, dim: Optional[Sequence[int]] = None, *args: Any, **kwargs: Any) -> Tensor:
        dims = _var_dims(name, self, dim)
        correction, keepdim = correction_of({"args": args, **kwargs})
        _check_degrees_of_freedom(self, dims, correction)
        return call_numpy(_var_of, self, dims, correction, keepdim)

    def meta(self: Tensor, dim: Optional[Sequence[int]] = None, *args: Any, **kwargs: Any) -> Tensor:
        dims = _var_dims(name, self, dim)
        _, keepdim = correction_of({"args": args, **kwargs})
        real = _C.float64 if self.dtype == _C.complex128 else _C.float32 if self.dtype.is_complex else self.dtype
        return meta_like(_reduced_shape(self.shape, dims, keepdim), real)

    return _names(name, cpu, meta)


def _correction_kwargs(call: dict[str, Any]) -> tuple[float, bool]:
    """var.correction's correction (default 1) and keepdim, both keyword-only."""
    correction = call.get("correction")
    return (1 if correction is None else correction), call.get("keepdim", False)


def _unbiased_args(call: dict[str, Any]) -> tuple[float, bool]:
    """var.dim's correction (1 if unbiased, the default, else 0) and keepdim, positional or keyword."""
    args = call["args"]
    unbiased = args[0] if args else call.get("unbiased", True)
    keepdim = args[1] if len(args) > 1 else call.get("keepdim", False)
    return (1 if unbiased else 0), keepdim


def _var_setup(correction_of: Callable[[dict[str, Any]], tuple[float, bool]]) -> Callable[..., None]:
    def setup(ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any], output: Any) -> None:
        self = inputs[0]
        dim = inputs[1] if len(inputs) > 1 else None
        ctx.dims = _dims("od::var", dim, self.ndim)
        ctx.correction, ctx.keepdim = correction_of({"args": inputs[2:], **keyword_only_inputs})
        ctx.shape = tuple(self.shape)
        ctx.save_for_backward(self)

    return setup


def _var_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """grad * 2 (x - mean) / (N - correction). PyTorch: var_backward in FunctionsManual.cpp."""
    (self,) = ctx.saved_tensors
    n = 1
    for d in ctx.dims:
        n *= ctx.shape[d]
    centered = elementwise.sub(self, mean_dim(self, list(ctx.dims), True))
    scale = 2.0 / (n - ctx.correction) if n - ctx.correction else float("inf")
    g = elementwise.mul(elementwise.mul_scalar(centered, scale), _restore(grad, ctx.shape, ctx.dims, ctx.keepdim))
    return (g,) + (None,) * (len(ctx.needs_input_grad) - 1)


var_correction: Op = defop(
    "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor",
    tags=REDUCTION, **_var_kernels("od::var.correction", _correction_kwargs), backward=_var_backward,
    setup_context=_var_setup(_correction_kwargs))
var_dim: Op = defop("var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
                    tags=REDUCTION, **_var_kernels("od::var.dim", _unbiased_args), backward=_var_backward,
                    setup_context=_var_setup(_unbiased_args))
