"""Kernel builders for elementwise operators: one NumPy function gives both
the CPU kernel and the Meta kernel (the broadcast shape, and the dtype NumPy
gives for 0-d operands of the same dtypes, so the two always agree).

CPU kernels are one ``call_numpy`` each; the checks that name the operator
and the shapes run only when NumPy has refused the operands, and raise what
the Meta kernel raises for the same operands."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ._numpy import broadcast_shape, call_numpy, check_device, check_inplace, meta_like, numpy_kernel
from ._registry import Kernels
from .._tensor_type import Tensor



def operands(args: tuple[Any, ...]) -> list[Tensor]:
    """The tensors among ``args``."""
    return [a for a in args if isinstance(a, Tensor)]


def _sample_dtype(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> np.dtype:
    with np.errstate(all="ignore"):
        out = fn(*[np.ones((), a.dtype.to_numpy()) if isinstance(a, Tensor) else a for a in args], **kwargs)
    return np.asarray(out).dtype


def _names(name: str, cpu: Callable[..., Any], meta: Callable[..., Any]) -> Kernels:
    short = name.replace("od::", "").replace(".", "_")
    cpu.__name__, meta.__name__ = f"{short}_cpu", f"{short}_meta"
    return {"cpu": cpu, "meta": meta}


def fast_path(kernels: Kernels, fn: Callable[..., Any], nargs: int = -1, ndim: int = -1) -> Kernels:
    """``kernels`` with the CPU kernel's calls of ``nargs`` positional
    arguments (-1: every call) on tensors of ``ndim`` dims (-1: any) running
    ``fn`` in C (numpy_kernel; the CPU kernel must compute ``call_numpy(fn,
    *args)`` for them and have no side effects): the Python kernel still
    takes every other call and names the operator in errors."""
    cpu = numpy_kernel(fn, kernels["cpu"], nargs, ndim)
    cpu.__name__ = kernels["cpu"].__name__
    return {"cpu": cpu, "meta": kernels["meta"]}


def _meta_kernel(name: str, fn: Callable[..., Any]) -> Callable[..., Tensor]:
    def meta(*args: Any, **kwargs: Any) -> Tensor:
        tensors = operands(args)
        check_device(name, *tensors)
        return meta_like(broadcast_shape(name, *(t.shape for t in tensors)), _sample_dtype(fn, args, kwargs))

    return meta


def pointwise(name: str, fn: Callable[..., Any]) -> Kernels:
    """``{"cpu": ..., "meta": ...}`` kernels of the elementwise operator
    ``name`` computed by the NumPy function ``fn`` over tensor and
    Python-scalar arguments. Both raise RuntimeError naming ``name`` and the
    shapes if the tensors do not broadcast, or the devices if they differ."""

    def cpu(*args: Any, **kwargs: Any) -> Tensor:
        # Every tensor reaching a CPU kernel is on cpu (a higher backend key would have won).
        try:
            return call_numpy(fn, *args, **kwargs)
        except ValueError:
            broadcast_shape(name, *(t.shape for t in operands(args)))  # names the shapes
            raise

    return fast_path(_names(name, cpu, _meta_kernel(name, fn)), fn)


def unary(name: str, fn: Callable[[Any], Any]) -> Kernels:
    """Kernels of an operator of one tensor, ``fn(self)`` elementwise."""

    def cpu(self: Tensor) -> Tensor:
        return call_numpy(fn, self)

    return fast_path(_names(name, cpu, _meta_kernel(name, fn)), fn, 1)


def with_alpha(name: str, ufunc: np.ufunc) -> Kernels:
    """Kernels of ``ufunc(self, alpha * other)`` (add, sub; Tensor and Scalar overloads)."""

    def cpu(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        try:
            if alpha == 1:
                return call_numpy(ufunc, self, other)
            return call_numpy(_scaled, ufunc, self, other, alpha)
        except ValueError:
            broadcast_shape(name, *(t.shape for t in operands((self, other))))
            raise

    kernels = _names(name, cpu, _meta_kernel(name, lambda a, b, alpha=1: _scaled(ufunc, a, b, alpha)))
    return fast_path(kernels, ufunc, 2)  # alpha == 1 is not passed (Note [Calling operators from methods])


def _scaled(ufunc: np.ufunc, a: Any, b: Any, alpha: Any, out: Any = None) -> Any:
    # A Python scalar times alpha stays a Python scalar (weak in NumPy's promotion); np.multiply would
    # make it a NumPy scalar, which promotes float32 to float64.
    scaled = b if alpha == 1 else np.multiply(b, alpha) if isinstance(b, np.ndarray) else b * alpha
    return ufunc(a, scaled, out=out)


def inplace(name: str, ufunc: np.ufunc) -> Kernels:
    """Kernels of an in-place operator: ``self`` receives ``ufunc(self,
    alpha * other)`` (alpha only where the schema has it) in its own memory. RuntimeError if the result would
    not fit ``self``'s shape or cast to its dtype (see _numpy.check_inplace)."""

    def check(self: Tensor, other: Any, scale: Any = 1) -> None:
        check_device(name, self, *operands((other,)))
        shape = broadcast_shape(name, self.shape, *(t.shape for t in operands((other,))))
        result = _sample_dtype(lambda a, b: _scaled(ufunc, a, b, scale), (self, other), {})
        check_inplace(name, self, shape, result)

    def cpu(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        try:
            if alpha == 1:
                return call_numpy(ufunc, self, other, out=self)
            return call_numpy(_scaled, ufunc, self, other, alpha, self)
        except (ValueError, TypeError):
            check(self, other, alpha)  # raises what the Meta kernel raises
            raise

    def meta(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        check(self, other, alpha)
        return self

    return _names(name, cpu, meta)
