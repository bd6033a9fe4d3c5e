"""Operators that answer with a Python scalar rather than a tensor: a tensor's
first element (_local_scalar_dense, what ``item()``, ``bool()``, ``float()``
and ``int()`` of a subclass or under a dispatch mode call) and its metadata
(sym_size, sym_stride, sym_numel, sym_storage_offset, sym_is_contiguous;
opdispatch has no symbolic sizes, so these return Python ints and bools)."""
from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, Union, cast

from .._ops import Tag
from .._tensor_type import Tensor
from ._registry import CORE, defop

if TYPE_CHECKING:
    from .. import _C

Scalar: TypeAlias = Union[bool, int, float, complex]
#: An operator returning a Python number (``-> Scalar``, ``-> SymInt``, ``-> SymBool``).
ScalarOp: TypeAlias = "_C._DispatchOperator[Scalar]"


def local_scalar_dense_cpu(self: Tensor) -> Scalar:
    """The first element of ``self`` (in index order) as a Python bool, int,
    float or complex (by its dtype); RuntimeError for an empty tensor.
    ``item()`` checks for one element first. PyTorch: _local_scalar_dense_cpu
    (aten/src/ATen/native/Scalar.cpp)."""
    if self.numel() == 0:
        raise RuntimeError("_local_scalar_dense: Empty tensor not supported")
    value: Scalar = self.numpy(force=True).item(0)
    return value


def _local_scalar_dense_meta(self: Tensor) -> Scalar:
    raise RuntimeError("Tensor.item() cannot be called on meta tensors")


local_scalar_dense = cast(ScalarOp, defop("_local_scalar_dense(Tensor self) -> Scalar",
                                          tags=(Tag.core, Tag.data_dependent_output, Tag.pt2_compliant_tag),
                                          cpu=local_scalar_dense_cpu, meta=_local_scalar_dense_meta,
                                          differentiable=False))


# --- metadata ------------------------------------------------------------------------
# PyTorch defines these as CompositeImplicitAutograd reads of the tensor's
# metadata: a dispatch mode or subclass does not see them.

#: PyTorch's c10::MemoryFormat values sym_is_contiguous takes.
_CHANNELS_LAST, _CHANNELS_LAST_3D = 2, 3
#: The dimensions from innermost to outermost in the channels-last layouts
#: (PyTorch: compute_channels_last_contiguous_2d / _3d in c10/core/Contiguity.h).
_CHANNELS_LAST_ORDER = {_CHANNELS_LAST: (4, (1, 3, 2, 0)), _CHANNELS_LAST_3D: (5, (1, 4, 3, 2, 0))}


def _sym_size(self: Tensor, dim: int) -> int:
    return self.size(dim)


def _sym_stride(self: Tensor, dim: int) -> int:
    return self.stride(dim)


def _sym_numel(self: Tensor) -> int:
    return self.numel()


def _sym_storage_offset(self: Tensor) -> int:
    return self.storage_offset()


def _sym_is_contiguous(self: Tensor, memory_format: int = 0) -> bool:
    """Whether ``self`` is laid out densely in ``memory_format`` (0
    contiguous_format and 1 preserve_format: row-major; 2 channels_last of a
    4-d tensor, 3 channels_last_3d of a 5-d one: channels innermost, size-1
    dimensions' strides ignored). PyTorch: TensorImpl::is_contiguous_default."""
    if memory_format not in _CHANNELS_LAST_ORDER:
        return self.is_contiguous()
    ndim, order = _CHANNELS_LAST_ORDER[memory_format]
    if self.ndim != ndim:
        return False
    sizes, strides, expected = self.shape, self.stride(), 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


sym_size_int = cast(ScalarOp, defop("sym_size.int(Tensor self, int dim) -> SymInt", tags=CORE, composite=_sym_size))
sym_stride_int = cast(ScalarOp, defop("sym_stride.int(Tensor self, int dim) -> SymInt", tags=CORE,
                                      composite=_sym_stride))
sym_numel = cast(ScalarOp, defop("sym_numel(Tensor self) -> SymInt", tags=CORE, composite=_sym_numel))
sym_storage_offset = cast(ScalarOp, defop("sym_storage_offset(Tensor self) -> SymInt", tags=CORE,
                                          composite=_sym_storage_offset))
sym_is_contiguous = cast(ScalarOp, defop("sym_is_contiguous(Tensor self, MemoryFormat memory_format=0) -> SymBool",
                                         tags=CORE, composite=_sym_is_contiguous))
