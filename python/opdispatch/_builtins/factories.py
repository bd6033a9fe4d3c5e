"""Tensor factories: new tensors from a size, a range, or another tensor's
metadata. One kernel serves every backend (CompositeExplicitAutograd); the
device argument picks NumPy memory (cpu) or none (meta). Outputs are
C-contiguous and never require grad."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .. import _C
from ._numpy import check_memory_format, meta_like, tensor
from ._output_strides import Strides, call_numpy_strided, like_strides
from ._registry import CORE, PT2, Op, defop
from .._tensor_type import Tensor

FACTORY_KW = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_KW = FACTORY_KW + ", MemoryFormat? memory_format=None"

Fill = Callable[[tuple[int, ...], np.dtype], np.ndarray]


def make(op: str, size: Sequence[int], dtype: Any, device: Any, fill: Fill, strides: Strides = None) -> Tensor:
    """A new tensor of ``size`` on ``device`` (default cpu) with dtype (default
    float32), its values ``fill(shape, numpy_dtype)``, laid out in ``strides``
    (dense, in elements; None: C-contiguous) on cpu and meta. On a device plugin's
    device (one opdispatch holds no memory for) the values are made on cpu
    and copied with od::_to_copy, which makes the result with the plugin's
    empty.memory_format and copy_ kernels (Note [Copies to and from a device
    plugin]). Raises RuntimeError for a negative size and NotImplementedError
    for od::empty.memory_format on a device no plugin serves (cuda)."""
    size = tuple(size)
    if size and min(size) < 0:
        raise RuntimeError(f"{op}: trying to create tensor with negative dimension in size {list(size)}")
    dtype = _C.float32 if dtype is None else dtype
    if device is not None and device != _CPU:
        device = _C.device(str(device))
        if device.type == "meta":
            return meta_like(size, dtype, strides)
        if device.type != "cpu" and op == "od::empty.memory_format":
            raise NotImplementedError(f"{op}: device {device} has no memory in opdispatch and no device plugin "
                                      f"registered a kernel making its tensors; use cpu or meta")
        if device.type != "cpu":
            from .copy import to_copy  # copy imports this module

            try:
                return to_copy(tensor(fill(size, dtype.to_numpy())), device=device)
            except NotImplementedError as e:
                raise NotImplementedError(f"{op}: {e}") from e
    return call_numpy_strided(size, strides, fill, size, dtype.to_numpy())


_CPU = _C.device("cpu")


def _sized(name: str, fill: Fill) -> Any:
    def kernel(size: Sequence[int], *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Tensor:
        check_memory_format(name, memory_format)
        return make(name, size, dtype, device, fill)

    kernel.__name__ = name.replace("od::", "").replace(".", "_")
    return kernel


def _like(name: str, fill: Fill) -> Any:
    def kernel(self: Tensor, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Tensor:
        check_memory_format(name, memory_format)
        return make(name, self.shape, self.dtype if dtype is None else dtype,
                    self.device if device is None else device, fill, like_strides(self, memory_format))

    kernel.__name__ = name.replace("od::", "")
    return kernel


empty: Op = defop(f"empty.memory_format(SymInt[] size, {_LIKE_KW}) -> Tensor", tags=CORE,
                  backend=_sized("od::empty.memory_format", np.empty))
zeros: Op = defop(f"zeros(SymInt[] size, {FACTORY_KW}) -> Tensor", tags=PT2, backend=_sized("od::zeros", np.zeros))
ones: Op = defop(f"ones(SymInt[] size, {FACTORY_KW}) -> Tensor", tags=PT2, backend=_sized("od::ones", np.ones))
empty_like: Op = defop(f"empty_like(Tensor self, {_LIKE_KW}) -> Tensor",
                       tags=PT2, backend=_like("od::empty_like", np.empty),
                       differentiable=False)
zeros_like: Op = defop(f"zeros_like(Tensor self, {_LIKE_KW}) -> Tensor",
                       tags=PT2, backend=_like("od::zeros_like", np.zeros),
                       differentiable=False)
ones_like: Op = defop(f"ones_like(Tensor self, {_LIKE_KW}) -> Tensor",
                      tags=PT2, backend=_like("od::ones_like", np.ones),
                      differentiable=False)


def scalar_dtype(*values: Any) -> _C.dtype:
    """The dtype PyTorch infers from Python scalars: bool, int64, or the
    default float32 when any is a float. PyTorch: c10::Scalar's type and
    torch.get_default_dtype()."""
    if all(isinstance(v, bool) for v in values):
        return _C.bool
    if all(isinstance(v, (bool, int)) for v in values):
        return _C.int64
    return _C.float32


def _full(size: Sequence[int], fill_value: Any, *, dtype: Optional[Any] = None, layout: Any = None,
          device: Any = None, pin_memory: Any = None) -> Tensor:
    dtype = scalar_dtype(fill_value) if dtype is None else dtype
    return make("od::full", size, dtype, device, lambda shape, dt: np.full(shape, fill_value, dtype=dt))


full: Op = defop(f"full(SymInt[] size, Scalar fill_value, {FACTORY_KW}) -> Tensor", tags=CORE, backend=_full)


def _full_like(self: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> Tensor:
    check_memory_format("od::full_like", memory_format)
    return make("od::full_like", self.shape, self.dtype if dtype is None else dtype,
                self.device if device is None else device,
                lambda shape, dt: np.full(shape, fill_value, dtype=dt), like_strides(self, memory_format))


full_like: Op = defop(f"full_like(Tensor self, Scalar fill_value, {_LIKE_KW}) -> Tensor", tags=CORE,
                      backend=_full_like, differentiable=False)


def _scalar_tensor(s: Any, *, dtype: Optional[Any] = None, layout: Any = None, device: Any = None,
                   pin_memory: Any = None) -> Tensor:
    """A 0-d tensor of ``s``, in the default float dtype unless ``dtype`` is given (as in PyTorch)."""
    return make("od::scalar_tensor", (), _C.float32 if dtype is None else dtype, device,
                lambda shape, dt: np.full(shape, s, dtype=dt))


scalar_tensor: Op = defop(f"scalar_tensor(Scalar s, {FACTORY_KW}) -> Tensor", tags=CORE, backend=_scalar_tensor,
                          differentiable=False)


def _arange(start: Any, end: Any, step: Any = 1, *, dtype: Optional[Any] = None, layout: Any = None,
            device: Any = None, pin_memory: Any = None) -> Tensor:
    op = "od::arange"
    if step == 0:
        raise RuntimeError(f"{op}: step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError(f"{op}: upper bound ({end}) and lower bound ({start}) inconsistent with step sign ({step})")
    n = math.ceil((end - start) / step)
    dtype = scalar_dtype(start, end, step) if dtype is None else dtype
    exact = np.int64 if isinstance(start, int) and isinstance(step, int) else np.float64
    return make(op, (n,), dtype, device, lambda shape, dt: (start + np.arange(n, dtype=exact) * step).astype(dt))


def _arange_end(end: Any, **kw: Any) -> Tensor:
    return _arange(0, end, 1, **kw)


def _arange_start(start: Any, end: Any, **kw: Any) -> Tensor:
    return _arange(start, end, 1, **kw)


arange: Op = defop(f"arange(Scalar end, {FACTORY_KW}) -> Tensor", tags=PT2, backend=_arange_end)
arange_start: Op = defop(f"arange.start(Scalar start, Scalar end, {FACTORY_KW}) -> Tensor", tags=PT2,
                         backend=_arange_start)
arange_start_step: Op = defop(f"arange.start_step(Scalar start, Scalar end, Scalar step=1, {FACTORY_KW}) -> Tensor",
                              tags=CORE, backend=_arange)


def _empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                   device: Any = None, pin_memory: Any = None) -> Tensor:
    """An uninitialised tensor of ``size`` and ``stride`` (in elements) on cpu
    (memory for exactly the elements the geometry reaches) or meta, dtype
    default float32. RuntimeError as PyTorch's, in its order, for a negative
    size, sizes and strides of different lengths, and a negative stride of a
    dimension longer than 1; NotImplementedError for a device opdispatch
    holds no memory for. PyTorch: empty_strided_generic, computeStorageNbytes
    (aten/src/ATen/EmptyTensor.cpp)."""
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of strides ({len(stride)})")
    if any(s < 0 and n > 1 for n, s in zip(size, stride)):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    place = _CPU if device is None else _C.device(str(device))
    if place.type not in ("cpu", "meta"):
        raise NotImplementedError(f"od::empty_strided: device {place} has no memory in opdispatch; use cpu or meta")
    return _C.empty_strided(list(size), list(stride), _C.float32 if dtype is None else dtype, place)


empty_strided: Op = defop(f"empty_strided(SymInt[] size, SymInt[] stride, {FACTORY_KW}) -> Tensor", tags=CORE,
                          backend=_empty_strided)
