"""Copies and conversions: clone, copy_ and its functional form copy,
contiguous, to (dtype / device) via _to_copy, the in-place fills zero_ and
fill_, and the functional fill."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import _C
from . import factories, reduction
from ._numpy import (CONTIGUOUS_FORMAT, broadcast_shape, call_numpy, check_fits, check_memory_format,
                     check_no_internal_overlap, meta_like)
from ._output_strides import call_numpy_strided, kept_strides, like_strides, preserved_strides
from ._registry import CORE, INPLACE, POINTWISE, PT2, Op, defop, no_derivative
from .._tensor_type import Tensor


def _clone_cpu(self: Tensor, *, memory_format: Any = None) -> Tensor:
    check_memory_format("od::clone", memory_format)
    return call_numpy_strided(self.shape, like_strides(self, memory_format), _copy_of, self)


def _copy_of(a: np.ndarray, dtype: Any = None) -> np.ndarray:
    # order="K": a copy of a dense array keeps its layout, which call_numpy_strided then need not change.
    return np.array(a, dtype=dtype, order="K", copy=True)


def _clone_meta(self: Tensor, *, memory_format: Any = None) -> Tensor:
    check_memory_format("od::clone", memory_format)
    return meta_like(self.shape, self.dtype, like_strides(self, memory_format))


clone: Op = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", tags=POINTWISE, cpu=_clone_cpu, meta=_clone_meta,
                  backward=lambda ctx, grad: grad)


def _contiguous(self: Tensor, *, memory_format: int = CONTIGUOUS_FORMAT) -> Tensor:
    check_memory_format("od::contiguous", memory_format)
    return self if self.is_contiguous() else clone(self, memory_format=memory_format)


contiguous: Op = defop("contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)", tags=PT2,
                       composite=_contiguous)

# --- copy_ -------------------------------------------------------------------------


def _check_copy(self: Tensor, src: Tensor) -> None:
    if 0 in self.stride():  # (only a zero stride can make elements share memory)
        check_no_internal_overlap("od::copy_", self)
    try:
        fits = np.broadcast_shapes(tuple(self.shape), tuple(src.shape)) == tuple(self.shape)
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(f"od::copy_: the source of shape {list(src.shape)} does not broadcast to the destination "
                           f"shape {list(self.shape)}")


def _copy_cpu(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    _check_copy(self, src)
    return call_numpy(_copy_into, self, src)


def _copy_into(dst: np.ndarray, src: np.ndarray) -> np.ndarray:
    np.copyto(dst, src, casting="unsafe")
    return dst


def _copy_meta(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    _check_copy(self, src)
    if not self.is_meta:
        raise RuntimeError(f"od::copy_: cannot copy out of a meta tensor (it has no data) into a {self.device} tensor")
    return self


def _copy_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.src_shape = tuple(inputs[1].shape)


def _copy_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any, None]:
    # self's old values are overwritten: they get a zero gradient. PyTorch: derivatives.yaml copy_.
    return factories.zeros_like(grad), reduction.sum_to(grad, ctx.src_shape), None


copy_: Op = defop("copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)", tags=INPLACE,
                  cpu=_copy_cpu, meta=_copy_meta, backward=_copy_backward, setup_context=_copy_setup)

# --- to ---------------------------------------------------------------------------------


# Note [Copies to and from a device plugin]
# opdispatch holds memory for cpu (and shapes for meta); another device's
# tensors are a plugin's (PrivateUse1, named with
# opdispatch.utils.rename_privateuse1_backend). As PyTorch's
# _to_copy (CompositeExplicitAutograd) does, a conversion to or from such a
# device makes the result with empty.memory_format on the target device and
# fills it with copy_(result, self): the factory reaches the plugin's kernel
# through BackendSelect, and copy_ dispatches on the key set of both
# tensors, so the plugin's copy_ kernel moves the data either way.

#: The devices whose tensors opdispatch's own kernels hold.
_HOST_DEVICES = ("cpu", "meta")


def _to_copy_kernel(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
                    pin_memory: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
    check_memory_format("od::_to_copy", memory_format)
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else _C.device(str(device))
    if self.is_meta and device.type != "meta":
        raise NotImplementedError(f"od::_to_copy: cannot copy out of a meta tensor (it has no data) to {device}")
    if device.type not in _HOST_DEVICES or self.device.type not in _HOST_DEVICES:
        # A device plugin's tensor on either side (Note [Copies to and from a device plugin]).
        out = factories.empty(self.shape, dtype=dtype, device=device)
        return copy_(out, self, non_blocking)
    strides = like_strides(self, memory_format)
    if device.type == "cpu" and not self.is_meta:
        return call_numpy_strided(self.shape, strides, _copy_of, self, dtype.to_numpy())
    return factories.make("od::_to_copy", self.shape, dtype, device,
                          lambda shape, dt: _copy_of(self.numpy(force=True), dt), strides)


def _to_copy_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.dtype, ctx.device = inputs[0].dtype, inputs[0].device


to_copy: Op = defop("_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
                    "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
                    tags=CORE, backend=_to_copy_kernel, setup_context=_to_copy_setup,
                    backward=lambda ctx, grad: to_copy(grad, dtype=ctx.dtype, device=ctx.device))


def _to(self: Tensor, dtype: Optional[Any], device: Optional[Any], copy: bool, memory_format: Any) -> Tensor:
    """``self`` when it already has ``dtype`` and ``device`` and no copy is
    asked for, else a converted copy. PyTorch: at::native::to (TensorConversions.cpp)."""
    same_dtype = dtype is None or dtype == self.dtype
    same_device = device is None or _C.device(str(device)) == self.device
    if same_dtype and same_device and not copy:
        return self
    return to_copy(self, dtype=dtype, device=device, memory_format=memory_format)


def _to_dtype(self: Tensor, dtype: Any, non_blocking: bool = False, copy: bool = False,
              memory_format: Any = None) -> Tensor:
    return _to(self, dtype, None, copy, memory_format)


def _to_device(self: Tensor, device: Any, dtype: Any, non_blocking: bool = False, copy: bool = False,
               memory_format: Any = None) -> Tensor:
    return _to(self, dtype, device, copy, memory_format)


def _to_dtype_layout(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
                     pin_memory: Any = None, non_blocking: bool = False, copy: bool = False,
                     memory_format: Any = None) -> Tensor:
    return _to(self, dtype, device, copy, memory_format)


to_dtype: Op = defop("to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
                     "MemoryFormat? memory_format=None) -> Tensor(a)", tags=PT2, composite=_to_dtype)
to_device: Op = defop("to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, "
                      "bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)", tags=PT2,
                      composite=_to_device)
to_dtype_layout: Op = defop("to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, "
                            "Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, "
                            "MemoryFormat? memory_format=None) -> Tensor(a)", tags=PT2,
                            composite=_to_dtype_layout)

# --- fills ----------------------------------------------------------------------------------


def _fill_cpu(self: Tensor, value: Any) -> Tensor:
    return call_numpy(_fill, self, value)


def _fill(a: np.ndarray, value: Any) -> np.ndarray:
    a[...] = value
    return a


zero_: Op = defop("zero_(Tensor(a!) self) -> Tensor(a!)", tags=INPLACE, cpu=lambda self: _fill_cpu(self, 0), meta=lambda self: self,
                  backward=lambda ctx, grad: factories.zeros_like(grad))
fill_: Op = defop("fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)", tags=INPLACE, cpu=_fill_cpu,
                  meta=lambda self, value: self, backward=lambda ctx, grad: (factories.zeros_like(grad), None))



def _check_fill_value(value: Tensor) -> None:
    if value.ndim != 0:
        raise RuntimeError(f"od::fill_.Tensor: fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")


def _fill_tensor_cpu(self: Tensor, value: Tensor) -> Tensor:
    _check_fill_value(value)
    return call_numpy(_fill, self, value)


def _fill_tensor_meta(self: Tensor, value: Tensor) -> Tensor:
    _check_fill_value(value)
    return self


def _fill_tensor_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    ctx.value_dtype = inputs[1].dtype


def _fill_tensor_backward(ctx: Any, grad: Tensor) -> tuple[Any, Any]:
    """self's old values are overwritten (zeros); value fills every element:
    the sum of the gradient, in value's dtype. PyTorch: derivatives.yaml (fill_.Tensor)."""
    value_grad = reduction.sum_to(grad, ()) if ctx.needs_input_grad[1] else None
    if value_grad is not None and value_grad.dtype != ctx.value_dtype:
        value_grad = to_copy(value_grad, dtype=ctx.value_dtype)
    return factories.zeros_like(grad), value_grad


#: The fill with a 0-d tensor that Tensor.__setitem__ uses for a scalar (PyTorch: aten::fill_.Tensor).
fill_tensor_: Op = defop("fill_.Tensor(Tensor(a!) self, Tensor value) -> Tensor(a!)", tags=INPLACE,
                         cpu=_fill_tensor_cpu, meta=_fill_tensor_meta, backward=_fill_tensor_backward,
                         setup_context=_fill_tensor_setup)


def _fill_functional(a: np.ndarray, value: Any) -> np.ndarray:
    return np.full(a.shape, value, dtype=a.dtype)


fill: Op = defop("fill.Scalar(Tensor self, Scalar value) -> Tensor", tags=CORE,
                 cpu=lambda self, value: call_numpy_strided(self.shape, preserved_strides(self), _fill_functional,
                                                            self, value),
                 meta=lambda self, value: meta_like(self.shape, self.dtype, preserved_strides(self)),
                 backward=lambda ctx, grad: (factories.zeros_like(grad), None))

# --- copy, the functional copy_ --------------------------------------------------------------


def _functional_copy_check(self: Tensor, src: Tensor) -> None:
    """RuntimeError unless ``src`` broadcasts to ``self``'s shape (PyTorch's message)."""
    check_fits("od::copy", self, broadcast_shape("od::copy", self.shape, src.shape))


def _functional_copy_cpu(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    """src broadcast to a new tensor with self's strides (Note [Output strides]). PyTorch: at::native::copy."""
    _functional_copy_check(self, src)
    return call_numpy(_copy_into, _C.empty_strided(self.shape, kept_strides(self), self.dtype), src)


def _functional_copy_meta(self: Tensor, src: Tensor, non_blocking: bool = False) -> Tensor:
    _functional_copy_check(self, src)
    return meta_like(self.shape, self.dtype, kept_strides(self))


# PyTorch 2.13 has no derivative for aten::copy (copy_ has one).
copy: Op = defop("copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor", tags=CORE,
                 cpu=_functional_copy_cpu, meta=_functional_copy_meta, backward=no_derivative("od::copy"))
