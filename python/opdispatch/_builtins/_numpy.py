"""The bridge from kernels to NumPy (the kernel library): call_numpy (NumPy
on tensors, in one C call), arrays of tensors, tensors of arrays, dtypes,
broadcasting, and metadata-only outputs."""
from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import numpy as np

from .. import _C

if TYPE_CHECKING:
    from .._tensor import Tensor

#: ``call_numpy(fn, *args, **kwargs)``: fn on ndarray views of the tensor
#: arguments, NumPy's floating-point errors ignored, the result as tensors
#: (see opdispatch._C._call_numpy). How CPU kernels run NumPy; typed for an
#: fn that returns one array (or NumPy scalar, or None).
call_numpy: Callable[..., Tensor] = _C._call_numpy
#: call_numpy for an fn that returns two arrays: the two tensors (the same C
#: function; the names say what the caller's fn returns).
call_numpy_pair: Callable[..., tuple[Tensor, Tensor]] = _C._call_numpy
#: call_numpy for an fn that returns three arrays (the normalisations and the gradient operators with output_mask).
call_numpy_triple: Callable[..., tuple[Tensor, Tensor, Tensor]] = _C._call_numpy
#: ``numpy_kernel(fn, fallback, nargs=-1, ndim=-1, dtypes=0, contiguous=False)``: the CPU kernel ``fallback``
#: (a Python function around ``call_numpy(fn, ...)``) with its common calls
#: made in C (see opdispatch._C._NumpyKernel, Note [NumPy kernels] in csrc/python/NumpyBridge.cpp).
numpy_kernel = _C._NumpyKernel


def _install_errstate() -> None:
    """Tells _call_numpy where NumPy keeps its floating-point error state (a
    NumPy 2 internal: np.errstate sets this context variable) and the value
    that ignores every error. Should a NumPy release move it, a context
    variable of our own stands in: kernels then warn as NumPy does, and stay correct."""
    try:
        from numpy._core._multiarray_umath import (  # type: ignore[import-not-found]  # internal, untyped
            _extobj_contextvar,
            _make_extobj,
        )

        _C._set_numpy_errstate(_extobj_contextvar, _make_extobj(all="ignore"))
    except (ImportError, TypeError):
        _C._set_numpy_errstate(contextvars.ContextVar("opdispatch_unused_numpy_errstate"), None)


_install_errstate()


# Note [float16 computes in float32]
# PyTorch's CPU kernels compute a float16 operation in float32 (at::opmath_type<at::Half>) and round the
# result to float16 once: a pointwise kernel's several steps (gelu, hardswish), and every kernel that
# accumulates (convolution, matrix products, pooling, upsampling, softmax, normalisation). NumPy rounds
# float16 after each ufunc, so a NumPy function of several steps given float16 arrays rounds in between and
# misses PyTorch's result in the last digits. ``opmath`` is the one rule for all of them: a kernel's NumPy
# function wrapped in it sees float32 arrays and its float32 results come back as float16. A Python float
# argument is rounded to float16 first, as PyTorch casts a Scalar operand to the tensor's dtype. Kernels that keep
# some results in float32 (normalisation's statistics) or accumulate through a NumPy dtype= argument (cumsum,
# prod) take the compute dtype from ``opmath_dtype`` instead.


def opmath_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a kernel computes ``dtype`` in: float32 for float16, ``dtype`` itself otherwise (Note
    [float16 computes in float32]). PyTorch: at::opmath_type."""
    return np.dtype(np.float32) if dtype == np.float16 else np.dtype(dtype)


def _widened(value: Any) -> Any:
    """A float16 operand of ``opmath`` in float32: arrays cast, Python floats rounded to float16 first."""
    if isinstance(value, np.ndarray) and value.dtype == np.float16:
        return value.astype(np.float32)
    if isinstance(value, float):
        return np.float32(np.float16(value))
    return value


def _narrowed(result: Any) -> Any:
    """A float32 result (array, NumPy scalar, or a tuple of them) of ``opmath`` rounded to float16."""
    if isinstance(result, tuple):
        return tuple(_narrowed(r) for r in result)
    return result.astype(np.float16) if getattr(result, "dtype", None) == np.float32 else result


def opmath(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` (a NumPy function of several steps, run by call_numpy) computing
    float16 array arguments in float32, each float32 result (one, or a tuple)
    rounded to float16 once (Note [float16 computes in float32]); a Python
    float among the arguments is first rounded to float16; other arguments
    pass through unchanged, and calls without a float16 array run ``fn`` as
    it is. PyTorch: at::opmath_type<at::Half>."""

    def run(*args: Any, **kwargs: Any) -> Any:
        if not any(isinstance(a, np.ndarray) and a.dtype == np.float16 for a in args):
            return fn(*args, **kwargs)
        return _narrowed(fn(*[_widened(a) for a in args], **kwargs))

    run.__name__ = getattr(fn, "__name__", "opmath")
    return run


def arr(t: _C.TensorBase) -> np.ndarray:
    """The NumPy view of a cpu tensor's memory (kernels run below autograd)."""
    return t.numpy(force=True)


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    """C-contiguous strides in elements, as PyTorch computes them (a size-0 or
    size-1 dimension counts as 1). PyTorch: c10::contiguous_strides."""
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * max(shape[i + 1], 1)
    return strides


def tensor(a: Any) -> Tensor:
    """A tensor owning the result array ``a``, C-contiguous with the strides
    Meta kernels give (0-d stays 0-d; from_numpy normalises the strides of
    size-0/1 dimensions)."""
    return call_numpy(np.asarray, a)


def result_dtype(*operands: Any) -> np.dtype:
    """PyTorch's result type of tensors and Python numbers (see
    Note [Result type] in csrc/opdispatch/core/TypePromotion.h), as a NumPy dtype."""
    return _C._result_type(*operands).to_numpy()


def broadcast_shape(op: str, *shapes: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of ``shapes``; RuntimeError naming the op and the shapes if they do not broadcast."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        listed = " and ".join(str(tuple(s)) for s in shapes)
        raise RuntimeError(f"{op}: the shapes {listed} are not broadcastable") from None


def meta_like(shape: Sequence[int], dtype: Any, strides: Optional[Sequence[int]] = None) -> Tensor:
    """A meta tensor, the output of a Meta kernel: C-contiguous, or of ``strides`` (in elements) when given."""
    if strides is None:
        return _C.empty(tuple(shape), dtype=dtype, device="meta")
    return _C.empty_strided(tuple(shape), tuple(strides), dtype=dtype, device="meta")


def check_device(op: str, *tensors: _C.TensorBase) -> None:
    """RuntimeError naming ``op`` unless all tensors are on one device (PyTorch:
    "Expected all tensors to be on the same device")."""
    devices = {str(t.device) for t in tensors}
    if len(devices) > 1:
        raise RuntimeError(f"{op}: expected all tensors to be on the same device, but found at least two devices, "
                           f"{' and '.join(sorted(devices))}")


def check_no_internal_overlap(op: str, t: _C.TensorBase) -> None:
    """RuntimeError naming ``op`` if ``t``, about to be written, has elements
    sharing memory: a dimension of stride 0 and size > 1, as an expanded
    tensor has (the write would land once per location). O(ndim): the case
    where PyTorch's has_internal_overlap answers YES (it leaves the harder
    cases alone too). PyTorch: assert_no_internal_overlap, and its message."""
    strides = t.stride()
    if 0 in strides and any(n > 1 for n, s in zip(t.shape, strides) if s == 0):
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the written-to tensor refers "
                           f"to a single memory location. Please clone() the tensor before performing the "
                           f"operation.")


def check_fits(op: str, self: _C.TensorBase, result_shape: Sequence[int], result: Any = None) -> None:
    """A result of ``result_shape`` and dtype ``result`` (an opdispatch
    dtype; None: not checked) can be written to ``self``: the shape must not
    grow and the dtype must be castable (_C._can_cast). RuntimeError naming
    ``op`` otherwise. PyTorch: TensorIterator's "output with shape ...
    doesn't match the broadcast shape" and "result type Float can't be cast
    to the desired output type Long"."""
    if tuple(result_shape) != tuple(self.shape):
        raise RuntimeError(f"{op}: output with shape {list(self.shape)} doesn't match the broadcast shape "
                           f"{list(result_shape)}")
    if result is not None:
        _C._check_can_cast(op, result, self.dtype)


def check_inplace(op: str, self: _C.TensorBase, result_shape: Sequence[int], result: Any = None) -> None:
    """The rules of an in-place or out= write into ``self`` of a result of
    ``result_shape`` and dtype ``result``: :func:`check_no_internal_overlap`
    and :func:`check_fits`."""
    check_no_internal_overlap(op, self)
    check_fits(op, self, result_shape, result)


#: MemoryFormat enum values (PyTorch's c10::MemoryFormat): contiguous_format, preserve_format.
CONTIGUOUS_FORMAT, PRESERVE_FORMAT = 0, 1
_DENSE_FORMATS = (None, CONTIGUOUS_FORMAT, PRESERVE_FORMAT)


def check_memory_format(op: str, memory_format: Any) -> None:
    """NotImplementedError for channels_last formats: outputs here are always C-contiguous."""
    if memory_format not in _DENSE_FORMATS:
        raise NotImplementedError(f"{op}: memory_format {memory_format} (channels_last) is not supported; "
                                  f"outputs are C-contiguous")


def wrap_dim(op: str, dim: int, ndim: int) -> int:
    """``dim`` in [0, ndim) (negative counts from the end); IndexError naming the op otherwise."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"{op}: dimension {dim} out of range for a tensor with {ndim} dimensions "
                         f"(expected a value in [{-bound}, {bound - 1}])")
    return dim % bound
