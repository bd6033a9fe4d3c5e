"""View operators: outputs share the input's storage and version counter
(made with _C._as_strided), on every backend alike."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from .. import _C
from ._registry import defop


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
        return _contiguous(new_shape)
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


def _contiguous(shape: Sequence[int]) -> list[int]:
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return strides


def _view(self: _C.TensorBase, size: Sequence[int]) -> _C.TensorBase:
    shape = _infer_size("od::view", size, self.numel())
    strides = _view_strides(self.shape, self.stride(), shape)
    if strides is None:
        raise RuntimeError(
            f"od::view: view size {list(size)} is not compatible with input tensor's size {list(self.shape)} and "
            f"stride {list(self.stride())} (at least one dimension spans across two contiguous subspaces). "
            f"Use .reshape(...) instead."
        )
    return _C._as_strided(self, shape, strides, self.storage_offset())


def _shape_setup(ctx: Any, inputs: tuple, output: Any) -> None:
    ctx.shape = tuple(inputs[0].shape)


def _reshape_back(ctx: Any, grad: _C.TensorBase) -> tuple[Any, None]:
    return reshape(grad, ctx.shape), None


view = defop("view(Tensor(a) self, SymInt[] size) -> Tensor(a)", backend=_view,
             backward=_reshape_back, setup_context=_shape_setup)


def _reshape(self: _C.TensorBase, shape: Sequence[int]) -> _C.TensorBase:
    size = _infer_size("od::reshape", shape, self.numel())
    if _view_strides(self.shape, self.stride(), size) is not None:
        return _view(self, size)
    from .copy import clone

    return _view(clone(self), size)


reshape = defop("reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", backend=_reshape,
                backward=_reshape_back, setup_context=_shape_setup)


def _expand(self: _C.TensorBase, size: Sequence[int], *, implicit: bool = False) -> _C.TensorBase:
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


def _expand_back(ctx: Any, grad: _C.TensorBase) -> tuple[Any, None]:
    from .reduction import sum_to

    return sum_to(grad, ctx.shape), None


expand = defop("expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", backend=_expand,
               backward=_expand_back, setup_context=_shape_setup)
