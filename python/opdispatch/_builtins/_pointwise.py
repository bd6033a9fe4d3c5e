"""Kernel builders for elementwise operators: one NumPy function gives both
the CPU kernel and the Meta kernel (the broadcast shape, and the dtype NumPy
gives for 0-d operands of the same dtypes, so the two always agree)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _C
from ._numpy import arr, broadcast_shape, check_device, check_inplace, meta_like, tensor

Tensor = _C.TensorBase
Kernels = dict[str, Callable[..., Tensor]]


def operands(args: tuple) -> list[Tensor]:
    """The tensors among ``args``."""
    return [a for a in args if isinstance(a, Tensor)]


def _arrays(args: tuple) -> list[Any]:
    return [arr(a) if isinstance(a, Tensor) else a for a in args]


def _sample_dtype(fn: Callable[..., Any], args: tuple, kwargs: dict) -> np.dtype:
    with np.errstate(all="ignore"):
        out = fn(*[np.ones((), a.dtype.to_numpy()) if isinstance(a, Tensor) else a for a in args], **kwargs)
    return np.asarray(out).dtype


def _names(name: str, cpu: Callable[..., Any], meta: Callable[..., Any]) -> Kernels:
    short = name.replace("od::", "").replace(".", "_")
    cpu.__name__, meta.__name__ = f"{short}_cpu", f"{short}_meta"
    return {"cpu": cpu, "meta": meta}


def pointwise(name: str, fn: Callable[..., Any]) -> Kernels:
    """``{"cpu": ..., "meta": ...}`` kernels of the elementwise operator
    ``name`` computed by the NumPy function ``fn`` over tensor and
    Python-scalar arguments. Both raise RuntimeError naming ``name`` and the
    shapes if the tensors do not broadcast, or the devices if they differ."""

    def cpu(*args: Any, **kwargs: Any) -> Tensor:
        # Every tensor reaching a CPU kernel is on cpu (a higher backend key would have won).
        try:
            with np.errstate(all="ignore"):
                return tensor(fn(*_arrays(args), **kwargs))
        except ValueError:
            broadcast_shape(name, *(t.shape for t in operands(args)))  # names the shapes
            raise

    def meta(*args: Any, **kwargs: Any) -> Tensor:
        tensors = operands(args)
        check_device(name, *tensors)
        return meta_like(broadcast_shape(name, *(t.shape for t in tensors)), _sample_dtype(fn, args, kwargs))

    return _names(name, cpu, meta)


def inplace(name: str, fn: Callable[..., Any]) -> Kernels:
    """Kernels of an in-place operator: ``self`` receives ``fn(self, *args)``
    in its own memory. RuntimeError if the result would not fit ``self``'s
    shape or cast to its dtype (see _numpy.check_inplace)."""

    def cpu(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check_device(name, self, *operands(args))
        shape = broadcast_shape(name, self.shape, *(t.shape for t in operands(args)))
        with np.errstate(all="ignore"):
            result = np.asarray(fn(arr(self), *_arrays(args), **kwargs))
        check_inplace(name, self, shape, result.dtype)
        np.copyto(arr(self), result, casting="same_kind")
        return self

    def meta(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check_device(name, self, *operands(args))
        shape = broadcast_shape(name, self.shape, *(t.shape for t in operands(args)))
        check_inplace(name, self, shape, _sample_dtype(fn, (self,) + args, kwargs))
        return self

    return _names(name, cpu, meta)
