"""View operators: outputs share the input's storage and version counter
(made with _C._as_strided), on every backend alike."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from .. import _C
from . import copy, elementwise, factories, indexing, reduction
from . import shape as shape_ops
from ._numpy import CONTIGUOUS_FORMAT, call_numpy, contiguous_strides, meta_like, tensor, wrap_dim
from ._output_strides import kept_strides
from ._registry import CORE, PT2, Op, defop
from .._ops import Tag
from .._tensor_type import Tensor


def _infer_size(op: str, size: Sequence[int], numel: int) -> tuple[int, ...]:
    size = list(size)
    unknown = [i for i, s in enumerate(size) if s == -1]
    if len(unknown) > 1:
        raise RuntimeError(f"{op}: only one dimension can be inferred (-1), got size {size}")
    known = 1
    for s in size:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"{op}: invalid size {s} in {size}")
            known *= s
    if unknown:
        if known == 0 or numel % known:
            raise RuntimeError(f"{op}: shape {size} is invalid for input of size {numel}")
        size[unknown[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"{op}: shape {size} is invalid for input of size {numel}")
    return tuple(size)


def _view_strides(old_shape: Sequence[int], old_strides: Sequence[int], new_shape: Sequence[int]
                  ) -> Optional[list[int]]:
    """Strides viewing the same memory with ``new_shape``, or None if no view exists.
    PyTorch: at::detail::computeStride."""
    if not old_shape:
        return [1] * len(new_shape)
    numel = 1
    for s in old_shape:
        numel *= s
    if numel == 0:
        return contiguous_strides(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base_stride = old_strides[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and
                             old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base_stride
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = old_strides[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return new_strides


def _view(self: Tensor, size: Sequence[int]) -> Tensor:
    shape = _infer_size("od::view", size, self.numel())
    strides = _view_strides(self.shape, self.stride(), shape)
    if strides is None:
        raise RuntimeError(
            f"od::view: view size {list(size)} is not compatible with input tensor's size {list(self.shape)} and "
            f"stride {list(self.stride())} (at least one dimension spans across two contiguous subspaces). "
            f"Use .reshape(...) instead."
        )
    return _C._as_strided(self, shape, strides, self.storage_offset())


def _shape_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.shape = tuple(inputs[0].shape)


def _reshape_back(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    return reshape(grad, ctx.shape), None


view: Op = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", tags=CORE, backend=_view,
                 backward=_reshape_back, setup_context=_shape_setup)


def _reshape(self: Tensor, shape: Sequence[int]) -> Tensor:
    size = _infer_size("od::reshape", shape, self.numel())
    if _view_strides(self.shape, self.stride(), size) is not None:
        return _view(self, size)
    return _view(copy.clone(self, memory_format=CONTIGUOUS_FORMAT), size)


reshape: Op = defop("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", tags=PT2, backend=_reshape,
                    backward=_reshape_back, setup_context=_shape_setup)


def _expand(self: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    size = list(size)
    if len(size) < self.ndim:
        raise RuntimeError(f"od::expand: the number of sizes provided ({len(size)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({self.ndim})")
    lead = len(size) - self.ndim
    strides = []
    for i, s in enumerate(size):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"od::expand: the expanded size {s} is not allowed in a leading dimension")
            strides.append(0)
            continue
        cur, cur_stride = self.shape[i - lead], self.stride()[i - lead]
        if s == -1:
            size[i] = cur
            strides.append(cur_stride)
        elif cur == s:
            strides.append(cur_stride)
        elif cur == 1:
            strides.append(0)
        else:
            raise RuntimeError(f"od::expand: the expanded size of the tensor ({s}) must match the existing size "
                               f"({cur}) at non-singleton dimension {i}. Target sizes: {list(size)}. "
                               f"Tensor sizes: {list(self.shape)}")
    return _C._as_strided(self, size, strides, self.storage_offset())


def _expand_back(ctx: Any, grad: Tensor) -> tuple[Any, None]:
    return reduction.sum_to(grad, ctx.shape), None


expand: Op = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",
                   tags=CORE, backend=_expand,
                   backward=_expand_back, setup_context=_shape_setup)


def _strided(self: Tensor, shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> Tensor:
    """A view of ``self`` with ``shape`` and ``strides``, ``offset`` elements past self's first."""
    return _C._as_strided(self, list(shape), list(strides), self.storage_offset() + offset)


# --- transpose, permute --------------------------------------------------------------


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    d0, d1 = wrap_dim("od::transpose.int", dim0, self.ndim), wrap_dim("od::transpose.int", dim1, self.ndim)
    if self.ndim == 0:
        return _strided(self, (), ())
    shape, strides = list(self.shape), list(self.stride())
    shape[d0], shape[d1] = shape[d1], shape[d0]
    strides[d0], strides[d1] = strides[d1], strides[d0]
    return _strided(self, shape, strides)


def _transpose_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dims = inputs[1:]


transpose: Op = defop("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", tags=PT2, backend=_transpose,
                      backward=lambda ctx, grad: (transpose(grad, *ctx.dims), None, None),
                      setup_context=_transpose_setup)


def _permutation(self: Tensor, dims: Sequence[int]) -> list[int]:
    wrapped = [wrap_dim("od::permute", d, self.ndim) for d in dims]
    if len(wrapped) != self.ndim or sorted(wrapped) != list(range(self.ndim)):
        raise RuntimeError(f"od::permute: dims {list(dims)} must be a permutation of the {self.ndim} dimensions of "
                           f"the input of shape {list(self.shape)}")
    return wrapped


def _permute(self: Tensor, dims: Sequence[int]) -> Tensor:
    order = _permutation(self, dims)
    return _strided(self, [self.shape[d] for d in order], [self.stride()[d] for d in order])


def _permute_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.inverse = [int(i) for i in np.argsort(_permutation(inputs[0], inputs[1]))]


def _t_of(name: str) -> Any:
    """The kernel of ``name`` (t or t_): a matrix transposed, a tensor of
    fewer dims viewed as it is; RuntimeError beyond 2 dims, as PyTorch's
    check_t (aten/src/ATen/native/TensorShape.cpp)."""

    def kernel(self: Tensor) -> Tensor:
        if self.ndim > 2:
            raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return _transpose(self, 0, -1) if self.ndim == 2 else _strided(self, self.shape, self.stride())

    return kernel


# PyTorch 2.13: aten::t is CompositeExplicitAutograd with its own formula (TBackward0), not a decomposition.
t: Op = defop("t(Tensor(a) self) -> Tensor(a)", tags=PT2, backend=_t_of("t"), backward=lambda ctx, grad: (t(grad),))

permute: Op = defop("permute(Tensor(a) self, int[] dims) -> Tensor(a)", tags=CORE, backend=_permute,
                    backward=lambda ctx, grad: (permute(grad, ctx.inverse), None), setup_context=_permute_setup)

# --- squeeze, unsqueeze, flatten ---------------------------------------------------------------


def _squeeze_dims(self: Tensor, dims: Sequence[int]) -> Tensor:
    keep = [i for i in range(self.ndim) if i not in dims or self.shape[i] != 1]
    return _strided(self, [self.shape[i] for i in keep], [self.stride()[i] for i in keep])


squeeze: Op = defop("squeeze(Tensor(a) self) -> Tensor(a)",
                    tags=PT2, backend=lambda self: _squeeze_dims(self, range(self.ndim)),
                    backward=lambda ctx, grad: reshape(grad, ctx.shape), setup_context=_shape_setup)
squeeze_dim: Op = defop("squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", tags=CORE,
                        backend=lambda self, dim: _squeeze_dims(self, [wrap_dim("od::squeeze.dim", dim, self.ndim)]),
                        backward=_reshape_back, setup_context=_shape_setup)


def _squeeze_listed(self: Tensor, dim: Sequence[int]) -> Tensor:
    """The dims of ``dim`` that have size 1 removed; RuntimeError for a dim listed twice (PyTorch's message)."""
    wrapped = [wrap_dim("od::squeeze.dims", d, self.ndim) for d in dim]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"od::squeeze.dims: dim {d} appears multiple times in the list of dims")
    return _squeeze_dims(self, wrapped)


squeeze_dims: Op = defop("squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)", tags=CORE, backend=_squeeze_listed,
                         backward=_reshape_back, setup_context=_shape_setup)


def _unsqueeze(self: Tensor, dim: int) -> Tensor:
    d = wrap_dim("od::unsqueeze", dim, self.ndim + 1)
    shape, strides = list(self.shape), list(self.stride())
    strides.insert(d, shape[d] * strides[d] if d < self.ndim else 1)
    shape.insert(d, 1)
    return _strided(self, shape, strides)


def _unsqueeze_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dim = wrap_dim("od::unsqueeze", inputs[1], inputs[0].ndim + 1)


unsqueeze: Op = defop("unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", tags=CORE, backend=_unsqueeze,
                      backward=lambda ctx, grad: (squeeze_dim(grad, ctx.dim), None), setup_context=_unsqueeze_setup)


def _flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """A view when possible (else a copy) merging dims start_dim..end_dim.
    PyTorch: at::native::flatten (CompositeImplicitAutograd, via reshape)."""
    if self.ndim == 0:
        return reshape(self, [1])
    start = wrap_dim("od::flatten.using_ints", start_dim, self.ndim)
    end = wrap_dim("od::flatten.using_ints", end_dim, self.ndim)
    if start > end:
        raise RuntimeError(f"od::flatten.using_ints: start_dim ({start_dim}) cannot come after end_dim ({end_dim})")
    if start == end:
        return self
    merged = math.prod(self.shape[start:end + 1])
    return reshape(self, list(self.shape[:start]) + [merged] + list(self.shape[end + 1:]))


flatten: Op = defop("flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", tags=PT2,
                    composite=_flatten)

# --- select, slice ----------------------------------------------------------------------------


def _select_index(self: Tensor, dim: int, index: int) -> tuple[int, int]:
    if self.ndim == 0:
        raise IndexError("od::select.int: select() cannot be applied to a 0-dim tensor")
    d = wrap_dim("od::select.int", dim, self.ndim)
    size = self.shape[d]
    if not -size <= index < size:
        raise IndexError(f"od::select.int: index {index} out of range for tensor of size {list(self.shape)} at "
                         f"dimension {dim}")
    return d, index % size


def _select(self: Tensor, dim: int, index: int) -> Tensor:
    d, i = _select_index(self, dim, index)
    keep = [k for k in range(self.ndim) if k != d]
    return _strided(self, [self.shape[k] for k in keep], [self.stride()[k] for k in keep], i * self.stride()[d])


def _select_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.shape = tuple(inputs[0].shape)
    ctx.dim, ctx.index = _select_index(inputs[0], inputs[1], inputs[2])


select: Op = defop("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", tags=CORE, backend=_select,
                   backward=lambda ctx, grad: (select_backward(grad, ctx.shape, ctx.dim, ctx.index), None, None),
                   setup_context=_select_setup)


def _slice_bounds(self: Tensor, dim: int, start: Optional[int], end: Optional[int], step: int
                  ) -> tuple[int, int, int, int]:
    """(dim, start, end, length) of a slice, clamped as Python clamps list slices."""
    if step <= 0:
        raise RuntimeError(f"od::slice.Tensor: slice step must be positive, got {step}")
    d = wrap_dim("od::slice.Tensor", dim, self.ndim)
    size = self.shape[d]
    lo = 0 if start is None else (start + size if start < 0 else start)
    hi = size if end is None else (end + size if end < 0 else end)
    lo, hi = min(max(lo, 0), size), min(max(hi, 0), size)
    hi = max(hi, lo)
    return d, lo, hi, (hi - lo + step - 1) // step


def _slice(self: Tensor, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
           step: int = 1) -> Tensor:
    d, lo, _, length = _slice_bounds(self, dim, start, end, step)
    shape, strides = list(self.shape), list(self.stride())
    shape[d] = length
    strides[d] *= step
    return _strided(self, shape, strides, lo * self.stride()[d])


def _slice_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.shape = tuple(inputs[0].shape)
    ctx.dim, ctx.start, ctx.end, _ = _slice_bounds(*inputs)
    ctx.step = inputs[4]


slice_: Op = defop("slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) "
                   "-> Tensor(a)", tags=CORE, backend=_slice, setup_context=_slice_setup,
                   backward=lambda ctx, grad: (slice_backward(grad, ctx.shape, ctx.dim, ctx.start, ctx.end, ctx.step),
                                           None, None, None, None))

# --- gradients of select and slice: the inverse placement ---------------------------------------


def _placed(grad: Tensor, input_sizes: Sequence[int], where: tuple[Any, ...]) -> Tensor:
    """A zero tensor of ``input_sizes`` with ``grad`` at index ``where``."""
    if grad.is_meta:
        return meta_like(input_sizes, grad.dtype)
    return call_numpy(_placed_array, grad, tuple(input_sizes), where)


def _placed_array(grad: np.ndarray, input_sizes: tuple[int, ...], where: tuple[Any, ...]) -> np.ndarray:
    out = np.zeros(input_sizes, grad.dtype)
    out[where] = grad
    return out


def _select_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, index: int) -> Tensor:
    """IndexError naming the operator for a ``dim`` or ``index`` out of range (PyTorch's select() message)."""
    dim = wrap_dim("od::select_backward", dim, len(input_sizes))
    size = input_sizes[dim]
    if not -size <= index < size:
        raise IndexError(f"od::select_backward: select(): index {index} out of range for tensor of size "
                         f"{list(input_sizes)} at dimension {dim}")
    return _placed(grad_output, input_sizes, (slice(None),) * dim + (index,))


def _slice_backward(grad_output: Tensor, input_sizes: Sequence[int], dim: int, start: int, end: int,
                    step: int) -> Tensor:
    dim = wrap_dim("od::slice_backward", dim, len(input_sizes))
    return _placed(grad_output, input_sizes, (slice(None),) * dim + (slice(start, end, step),))


def _detach(self: Tensor) -> Tensor:
    return _C._as_strided(self, self.shape, self.stride(), self.storage_offset())


def _alias(self: Tensor) -> Tensor:
    return _C._as_strided(self, self.shape, self.stride(), self.storage_offset())


# --- diagonal -------------------------------------------------------------------------------


def _diagonal_geometry(op: str, sizes: Sequence[int], strides: Sequence[int], offset: int, dim1: int,
                       dim2: int) -> tuple[list[int], list[int], int]:
    """The view diagonal(offset, dim1, dim2) takes of a tensor with ``sizes``
    and ``strides``: its shape, strides and offset (in elements) from the
    tensor's first element. RuntimeError for dim1 == dim2. PyTorch:
    at::native::diagonal."""
    d1, d2 = wrap_dim(op, dim1, len(sizes)), wrap_dim(op, dim2, len(sizes))
    if d1 == d2:
        raise RuntimeError(f"{op}: diagonal dimensions cannot be identical {dim1}, {dim2}")
    if offset >= 0:
        length, start = max(min(sizes[d1], sizes[d2] - offset), 0), offset * strides[d2]
    else:
        length, start = max(min(sizes[d1] + offset, sizes[d2]), 0), -offset * strides[d1]
    rest = [i for i in range(len(sizes)) if i not in (d1, d2)]
    return ([sizes[i] for i in rest] + [length], [strides[i] for i in rest] + [strides[d1] + strides[d2]],
            start if length else 0)


def _diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    shape, strides, start = _diagonal_geometry("od::diagonal", self.shape, self.stride(), offset, dim1, dim2)
    return _strided(self, shape, strides, start)


def _diagonal_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.shape, ctx.args = list(inputs[0].shape), [*inputs[1:], 0, 0, 1][:3]


diagonal: Op = defop("diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)", tags=CORE,
                     backend=_diagonal, setup_context=_diagonal_setup,
                     backward=lambda ctx, grad: (diagonal_backward(grad, ctx.shape, *ctx.args), None, None, None))


def _diagonal_backward(grad_output: Tensor, input_sizes: Sequence[int], offset: int, dim1: int,
                       dim2: int) -> Tensor:
    """A zero tensor of ``input_sizes`` with ``grad_output`` on its diagonal(offset, dim1, dim2)."""
    shape, strides, start = _diagonal_geometry("od::diagonal_backward", input_sizes, contiguous_strides(input_sizes),
                                               offset, dim1, dim2)
    if grad_output.is_meta:
        return meta_like(input_sizes, grad_output.dtype)
    return call_numpy(_on_diagonal, grad_output, tuple(input_sizes), shape, strides, start)


def _on_diagonal(grad: np.ndarray, input_sizes: tuple[int, ...], shape: list[int], strides: list[int],
                 start: int) -> np.ndarray:
    out = np.zeros(input_sizes, grad.dtype)
    flat = out.reshape(-1)
    if flat.size:
        step = out.itemsize
        view = np.lib.stride_tricks.as_strided(flat[start:], shape, [s * step for s in strides])
        view[...] = grad
    return out


diagonal_backward: Op = defop(
    "diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor", tags=PT2,
    backend=_diagonal_backward, setup_context=lambda ctx, inputs, output: setattr(ctx, "args", inputs[2:]),
    backward=lambda ctx, grad: (diagonal(grad, *ctx.args), None, None, None, None))


# --- select_scatter, slice_scatter ----------------------------------------------------------------
# The functional inverses of select and slice: a copy of self with src written where the view looks.


def _embedded(op: str, self: Tensor, src: Tensor, view_of: Any) -> Tensor:
    """A copy of ``self`` whose view ``view_of(copy)`` receives ``src``.
    RuntimeError (PyTorch's message) unless src has the view's shape; the
    view's own errors (an index out of range) come first."""
    part_shape = list(view_of(self).shape)
    if list(src.shape) != part_shape:
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {part_shape}")
    out = factories.empty_strided(self.shape, kept_strides(self), dtype=self.dtype, device=self.device)
    copy.copy_(out, self)
    copy.copy_(view_of(out), src)
    return out


def _select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    return _embedded("od::select_scatter", self, src, lambda t: select(t, dim, index))


def _slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: Optional[int] = None, end: Optional[int] = None,
                   step: int = 1) -> Tensor:
    return _embedded("od::slice_scatter", self, src, lambda t: slice_(t, dim, start, end, step))


def _scatter_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.args = inputs[2:]
    ctx.src_dtype = inputs[1].dtype


def _select_scatter_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """self's gradient is grad with zeros where src went; src's is grad there. PyTorch: derivatives.yaml."""
    g_src = select(grad, *ctx.args)
    return (select_scatter(grad, factories.zeros_like(g_src), *ctx.args), copy.to_copy(g_src, dtype=ctx.src_dtype),
            None, None)


def _slice_scatter_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    g_src = slice_(grad, *ctx.args)
    return (slice_scatter(grad, factories.zeros_like(g_src), *ctx.args), copy.to_copy(g_src, dtype=ctx.src_dtype),
            None, None, None, None)


select_scatter: Op = defop("select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor", tags=CORE,
                           backend=_select_scatter, backward=_select_scatter_backward, setup_context=_scatter_setup)
slice_scatter: Op = defop("slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, "
                          "SymInt step=1) -> Tensor", tags=CORE + (Tag.view_copy,), backend=_slice_scatter,
                          backward=_slice_scatter_backward, setup_context=_scatter_setup)


#: A view of the whole tensor, in the autograd graph (PyTorch: aten::alias).
alias: Op = defop("alias(Tensor(a) self) -> Tensor(a)", tags=CORE, backend=_alias,
                  backward=lambda ctx, grad: (grad,))

#: A view outside the autograd graph: an operator, so that tensor subclasses
#: and FakeTensorMode see it (PyTorch: aten::detach). Tensor.detach calls it.
detach: Op = defop("detach(Tensor(a) self) -> Tensor(a)", tags=PT2, backend=_detach, differentiable=False)

#: Marks a tensor just made from Python data (a scalar assigned by
#: Tensor.__setitem__) as an input of the program: the tensor itself, an
#: operator so that modes and make_fx see the constant. PyTorch: aten::lift_fresh.
lift_fresh: Op = defop("lift_fresh(Tensor(a) self) -> Tensor(a)", tags=PT2, backend=lambda self: self,
                       differentiable=False)

#: lift_fresh as a copy: what make_fx records for lift_fresh, so that an
#: in-place update of the lifted tensor cannot change the constant the traced
#: module keeps (Note [Lifted constants in a trace] in tracing.py). PyTorch: aten::lift_fresh_copy.
lift_fresh_copy: Op = defop("lift_fresh_copy(Tensor self) -> Tensor", tags=(Tag.pt2_compliant_tag, Tag.view_copy),
                            backend=lambda self: copy.clone(self, memory_format=CONTIGUOUS_FORMAT), differentiable=False)

select_backward: Op = defop(
    "select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt index) -> Tensor", tags=PT2,
    backend=_select_backward, setup_context=lambda ctx, inputs, output: setattr(ctx, "args", inputs[2:]),
    backward=lambda ctx, grad: (select(grad, *ctx.args), None, None, None))
slice_backward: Op = defop(
    "slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) "
    "-> Tensor", tags=PT2,
    backend=_slice_backward, setup_context=lambda ctx, inputs, output: setattr(ctx, "args", inputs[2:]),
    backward=lambda ctx, grad: (slice_(grad, *ctx.args), None, None, None, None, None))


# --- split_with_sizes -------------------------------------------------------------------------


def _split_dim(self: Tensor, split_sizes: Sequence[int], dim: int) -> int:
    """``dim`` wrapped, after PyTorch's checks: at least 1-D, sizes non-negative and summing to the size along it."""
    op = "od::split_with_sizes"
    if self.ndim == 0:
        raise RuntimeError(f"{op}: split expects at least a 1-dimensional tensor")
    d = wrap_dim(op, dim, self.ndim)
    sizes = list(split_sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"{op}: split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={sizes}")
    if sum(sizes) != self.shape[d]:
        raise RuntimeError(f"{op}: split_with_sizes expects split_sizes to sum exactly to {self.shape[d]} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return d


def _split_with_sizes(self: Tensor, split_sizes: Sequence[int], dim: int = 0) -> list[Tensor]:
    d = _split_dim(self, split_sizes, dim)
    pieces, start = [], 0
    for size in split_sizes:
        pieces.append(_slice(self, d, start, start + size))
        start += size
    return pieces


def _split_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, ctx.sizes = inputs[0], list(inputs[1])
    ctx.shape, ctx.dtype, ctx.device = tuple(self.shape), self.dtype, self.device
    ctx.dim = wrap_dim("od::split_with_sizes", inputs[2] if len(inputs) > 2 else 0, self.ndim)


def _split_backward(ctx: Any, grads: Sequence[Optional[Tensor]]) -> tuple[Any, None, None]:
    """The pieces' gradients side by side along dim, zeros for pieces that got
    none. PyTorch: split_with_sizes_backward (FunctionsManual.cpp)."""
    filled = []
    for g, size in zip(grads, ctx.sizes):
        if g is None:
            shape = [size if i == ctx.dim else n for i, n in enumerate(ctx.shape)]
            g = factories.zeros(shape, dtype=ctx.dtype, device=ctx.device)
        filled.append(g)
    return shape_ops.cat(filled, ctx.dim), None, None


split_with_sizes: Op = defop("split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]",
                             tags=CORE, backend=_split_with_sizes, backward=_split_backward,
                             setup_context=_split_setup)


# --- split, chunk, narrow: pieces of one dimension -------------------------------------------------------------


def _split_sizes(self: Tensor, split_size: int, dim: int) -> list[int]:
    """The sizes of split.Tensor's pieces: ``split_size`` each, the last one
    smaller, after PyTorch's checks (RuntimeError; IndexError for ``dim``).
    PyTorch: at::native::split (TensorShape.cpp)."""
    op = "od::split.Tensor"
    if self.ndim == 0:
        raise RuntimeError(f"{op}: split expects at least a 1-dimensional tensor")
    n = self.shape[wrap_dim(op, dim, self.ndim)]
    if split_size < 0:
        raise RuntimeError(f"{op}: split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and n:
        raise RuntimeError(f"{op}: split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = max(-(-n // split_size), 1) if split_size else 1
    return [split_size] * (count - 1) + [n - split_size * (count - 1)]


def _split(self: Tensor, split_size: int, dim: int = 0) -> list[Tensor]:
    return _split_with_sizes(self, _split_sizes(self, split_size, dim), dim)


def _split_tensor_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    self, split_size = inputs[0], inputs[1]
    dim = inputs[2] if len(inputs) > 2 else 0
    _split_setup(ctx, (self, _split_sizes(self, split_size, dim), dim), output)


split: Op = defop("split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]", tags=PT2,
                  backend=_split, backward=_split_backward, setup_context=_split_tensor_setup)


def _chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    """``chunks`` pieces (fewer when the dimension is too short) of equal size
    but the last, as split.Tensor of the size rounded up; an empty dimension
    gives ``chunks`` empty pieces (split_with_sizes). PyTorch: at::native::chunk
    (CompositeImplicitAutograd), with its checks (RuntimeError)."""
    if self.ndim == 0:
        raise RuntimeError("od::chunk: chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"od::chunk: chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = self.shape[wrap_dim("od::chunk", dim, self.ndim)]
    size = -(-n // chunks)
    if size == 0:
        return list(split_with_sizes(self, [0] * chunks, dim))
    return list(split(self, size, dim))


chunk: Op = defop("chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", tags=PT2, composite=_chunk)


def _narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """``length`` elements of ``dim`` from ``start`` (negative counts from the
    end): slice.Tensor. RuntimeError for a 0-d tensor, a negative length or
    one past the end; IndexError for ``dim`` or ``start`` out of range.
    PyTorch: at::native::narrow_symint (CompositeImplicitAutograd)."""
    op = "od::narrow"
    if self.ndim == 0:
        raise RuntimeError(f"{op}: narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError(f"{op}: narrow(): length must be non-negative.")
    n = self.shape[wrap_dim(op, dim, self.ndim)]
    if not -n <= start <= n:
        raise IndexError(f"{op}: start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    start = start + n if start < 0 else start
    if start + length > n:
        raise RuntimeError(f"{op}: start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return slice_(self, dim, start, start + length)


narrow: Op = defop("narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)", tags=PT2,
                   composite=_narrow)
# --- as_strided ---------------------------------------------------------------------------


def _as_strided_offset(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int]) -> int:
    """The storage offset of ``as_strided(self, size, stride, storage_offset)`` after PyTorch's checks, in
    its order and words (RuntimeError): equal lengths, no negative stride, no negative size, within the
    storage (when self has one: meta tensors and wrapper subclasses have none), offset >= 0.
    PyTorch: setStrided and checkInBoundsForStorage (aten/src/ATen/native/Resize.h)."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    offset = self.storage_offset() if storage_offset is None else storage_offset
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    itemsize = self.dtype.itemsize
    needed = 0 if 0 in size else itemsize * (1 + sum((n - 1) * s for n, s in zip(size, stride)))
    available = self._storage_nbytes()
    if needed and available is not None and needed + offset * itemsize > available:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed + offset * itemsize} are out of "
                           f"bounds for storage of size {available}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return offset


def _as_strided(self: Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int] = None
                ) -> Tensor:
    return _C._as_strided(self, list(size), list(stride), _as_strided_offset(self, size, stride, storage_offset))


def _geometry(t: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], int]:
    return tuple(t.shape), tuple(t.stride()), t.storage_offset()


def _as_strided_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.input, ctx.output = _geometry(inputs[0]), _geometry(output)


def _positions(geometry: tuple[tuple[int, ...], tuple[int, ...], int], base: int) -> np.ndarray:
    """The storage positions (less ``base``) of a geometry's elements, in index order, flat."""
    size, stride, offset = geometry
    pos = np.full(size, offset - base, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        pos += (np.arange(n, dtype=np.int64) * s).reshape([n if k == d else 1 for k in range(len(size))])
    return pos.reshape(-1)


def _as_strided_backward(ctx: Any, grad: Tensor) -> tuple[Any, None, None, None]:
    """The input's gradient over the storage both geometries touch: the output
    gradient summed into the storage positions it came from (overlapping
    outputs accumulate), read back at the input's positions, divided by how
    many input elements share each position. PyTorch: as_strided_backward
    (FunctionsManual.cpp)."""
    base = min(ctx.input[2], ctx.output[2])
    into, out_of = _positions(ctx.input, base), _positions(ctx.output, base)
    extent = 1 + max(int(into.max(initial=-1)), int(out_of.max(initial=-1)))
    storage = factories.zeros([extent], dtype=grad.dtype, device=grad.device)
    storage = indexing.scatter_add(storage, 0, tensor(out_of), reshape(grad, [-1]))
    shared = np.bincount(into, minlength=extent)
    if shared.max(initial=0) > 1:
        storage = elementwise.div(storage, tensor(np.maximum(shared, 1).astype(grad.dtype.to_numpy())))
    return view(indexing.gather(storage, 0, tensor(into)), list(ctx.input[0])), None, None, None


as_strided: Op = defop(
    "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)",
    tags=CORE, backend=_as_strided, backward=_as_strided_backward, setup_context=_as_strided_setup)
# --- resize_ ------------------------------------------------------------------------------


def _resize_strides(size: Sequence[int], memory_format: Optional[int]) -> list[int]:
    """The strides resize_ gives ``size``: C order for no format or contiguous_format (0), the
    channels-last order for channels_last (2, rank 4) and channels_last_3d (3, rank 5); RuntimeError
    for preserve_format (1) and a rank the format does not fit, in PyTorch's words.
    PyTorch: resize_impl_cpu_ and get_channels_last_strides_2d/3d (c10/core/MemoryFormat.h)."""
    if memory_format in (None, 0):
        return contiguous_strides(size)
    if memory_format == 1:
        raise RuntimeError("Unsupported memory formatPreserve")
    rank = {2: 4, 3: 5}.get(memory_format)
    if rank is None:
        raise RuntimeError(f"od::resize_: unknown memory_format {memory_format}; expected 0 (contiguous_format), "
                           f"2 (channels_last) or 3 (channels_last_3d)")
    if len(size) != rank:
        name = "channels_last" if rank == 4 else "channels_last_3d"
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")
    strides = [0] * rank
    step = 1
    for d in [1, *range(rank - 1, 1, -1), 0]:  # channels innermost, then the spatial dims, then the batch
        strides[d] = step
        step *= max(size[d], 1)
    return strides


def _resize_(self: Tensor, size: Sequence[int], *, memory_format: Optional[int] = None) -> Tensor:
    """Gives ``self`` the sizes ``size`` with fresh contiguous (or channels-last) strides, keeping its
    storage offset; the storage grows in place (the old values stay at the start of the new memory,
    every tensor sharing the storage sees it) when the new elements reach past it, and is kept as it is
    otherwise. The same sizes and no memory_format keep the strides. RuntimeError for a negative size
    (PyTorch: "Trying to create tensor with negative dimension") and for a storage that is not resizable
    (from_numpy, from_dlpack). See Note [Growing a storage and the arrays that view it] (core/Storage.h).
    PyTorch: resize_ (aten/src/ATen/native/Resize.cpp)."""
    size = [int(n) for n in size]
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {size}")
    if memory_format is None and size == list(self.shape):
        return self
    _C._resize_(self, size, _resize_strides(size, memory_format))
    return self


def _resize_autograd(op: _C._DispatchOperator) -> Any:
    """resize_ refuses a tensor that requires grad, in grad mode or not. PyTorch: resize_ in
    VariableTypeManual.cpp."""
    below = op._redispatch_below_autograd

    def kernel(keyset: _C.DispatchKeySet, self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if self.requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        return below(keyset, self, *args, **kwargs)

    return kernel


resize_: Op = defop(
    "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    tags=(Tag.core, Tag.inplace, Tag.inplace_view, Tag.pt2_compliant_tag), backend=_resize_,
    autograd=_resize_autograd)


# --- in-place views ------------------------------------------------------------------------
# Note [In-place view operators]
# transpose_, t_, unsqueeze_, squeeze_ and as_strided_ give self the geometry
# of the out-of-place view (its kernel computes it, with its checks), keeping
# self's memory, dtype and version counter (TensorImpl::set_sizes_and_strides);
# the dispatcher bumps the version, as PyTorch's ADInplaceOrView does. One
# kernel serves every backend and wrapper subclasses alike (it reads no data),
# which return_and_correct_aliasing relies on to update a wrapper's metadata.
# Their autograd kernel records one node whose gradient maps the new geometry
# back onto the old one over the shared storage: as_strided's formula, which
# covers every view (PyTorch records each operator's own formula, e.g.
# TransposeBackward1; the gradients are equal).

INPLACE_VIEW = (Tag.inplace, Tag.inplace_view, Tag.pt2_compliant_tag)


def _in_place(view_of: Any) -> Any:
    """The kernel of an in-place view operator whose out-of-place view is
    ``view_of(self, *args)`` (Note [In-place view operators])."""

    def kernel(self: Tensor, *args: Any) -> Tensor:
        result = view_of(self, *args)
        _C._set_sizes_and_strides(self, list(result.shape), list(result.stride()), result.storage_offset())
        return self

    return kernel


def _in_place_view_autograd(op: Any) -> Any:
    """The Autograd kernel of an in-place view operator ``op`` (Note
    [In-place view operators]): below autograd when self needs no gradient;
    RuntimeError for a leaf that requires grad or a recorded view (graph.check_inplace)."""
    from ..autograd import graph
    from ..autograd.grad_mode import is_grad_enabled

    schema = op._schema
    name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
    formula = graph.Formula(name, lambda ctx, grad: (_as_strided_backward(ctx, grad)[0],) + (None,) * (ctx.num_passed - 1),
                            [a.name for a in schema.arguments], None)

    def kernel(keyset: _C.DispatchKeySet, self: Tensor, *args: Any) -> Tensor:
        edge = graph.gradient_edge(self)
        if edge[0] is None or not is_grad_enabled():
            below: Tensor = op._redispatch_below_autograd(keyset, self, *args)
            return below
        graph.check_inplace(name, self)
        before = _geometry(self)
        op._redispatch_below_autograd(keyset, self, *args)
        node: Any = graph.OpNode(formula, (True,) + (False,) * len(args), (edge,),
                                 (graph.TENSOR,) + (None,) * len(args), 1 + len(args))
        node.input, node.output = before, _geometry(self)
        node.outputs_meta = ((self.shape, self.dtype, self.device),)
        graph.set_history(self, node, 0)
        return self

    return kernel


def _define_in_place_view(schema: str, view_of: Any) -> Op:
    return defop(schema, tags=INPLACE_VIEW, backend=_in_place(view_of), autograd=_in_place_view_autograd)


transpose_: Op = _define_in_place_view("transpose_(Tensor(a!) self, int dim0, int dim1) -> Tensor(a!)", _transpose)
t_: Op = _define_in_place_view("t_(Tensor(a!) self) -> Tensor(a!)", _t_of("t_"))
unsqueeze_: Op = _define_in_place_view("unsqueeze_(Tensor(a!) self, int dim) -> Tensor(a!)", _unsqueeze)
squeeze_: Op = _define_in_place_view("squeeze_(Tensor(a!) self) -> Tensor(a!)",
                                     lambda self: _squeeze_dims(self, range(self.ndim)))
squeeze_dim_: Op = _define_in_place_view(
    "squeeze_.dim(Tensor(a!) self, int dim) -> Tensor(a!)",
    lambda self, dim: _squeeze_dims(self, [wrap_dim("od::squeeze_.dim", dim, self.ndim)]))
squeeze_dims_: Op = _define_in_place_view("squeeze_.dims(Tensor(a!) self, int[] dim) -> Tensor(a!)", _squeeze_listed)
as_strided_: Op = _define_in_place_view(
    "as_strided_(Tensor(a!) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a!)",
    _as_strided)
