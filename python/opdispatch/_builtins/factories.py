"""Tensor factories: new tensors from a size or from another tensor's metadata.
One kernel serves every backend (CompositeExplicitAutograd); the device
argument picks NumPy memory (cpu) or none (meta)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import _C
from ._numpy import meta_like, tensor
from ._registry import defop

_FACTORY_KW = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_KW = _FACTORY_KW + ", MemoryFormat? memory_format=None"


def _make(op: str, size: Sequence[int], dtype: Any, device: Any, fill: Any) -> _C.TensorBase:
    dtype = _C.float32 if dtype is None else dtype
    device = _C.device("cpu") if device is None else _C.device(str(device))
    if device.type == "meta":
        return meta_like(size, dtype)
    if device.type != "cpu":
        raise NotImplementedError(f"{op}: device {device} has no memory in opdispatch; use cpu or meta")
    return tensor(fill(tuple(size), dtype.to_numpy()))


def _full_like(name: str, fill: Any) -> Any:
    def kernel(self: _C.TensorBase, *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None, memory_format: Any = None) -> _C.TensorBase:
        return _make(name, self.shape, self.dtype if dtype is None else dtype,
                     self.device if device is None else device, fill)

    kernel.__name__ = name.replace("od::", "")
    return kernel


def _sized(name: str, fill: Any) -> Any:
    def kernel(size: Sequence[int], *, dtype: Any = None, layout: Any = None, device: Any = None,
               pin_memory: Any = None) -> _C.TensorBase:
        return _make(name, size, dtype, device, fill)

    kernel.__name__ = name.replace("od::", "")
    return kernel


zeros = defop(f"zeros(SymInt[] size, {_FACTORY_KW}) -> Tensor", backend=_sized("od::zeros", np.zeros))
ones = defop(f"ones(SymInt[] size, {_FACTORY_KW}) -> Tensor", backend=_sized("od::ones", np.ones))
zeros_like = defop(f"zeros_like(Tensor self, {_LIKE_KW}) -> Tensor", backend=_full_like("od::zeros_like", np.zeros))
ones_like = defop(f"ones_like(Tensor self, {_LIKE_KW}) -> Tensor", backend=_full_like("od::ones_like", np.ones))


def _full(size: Sequence[int], fill_value: Any, *, dtype: Optional[Any] = None, layout: Any = None,
          device: Any = None, pin_memory: Any = None) -> _C.TensorBase:
    if dtype is None:
        dtype = _C.int64 if isinstance(fill_value, int) and not isinstance(fill_value, bool) else \
            _C.bool if isinstance(fill_value, bool) else _C.float32
    return _make("od::full", size, dtype, device, lambda shape, dt: np.full(shape, fill_value, dtype=dt))


full = defop(f"full(SymInt[] size, Scalar fill_value, {_FACTORY_KW}) -> Tensor", backend=_full)
