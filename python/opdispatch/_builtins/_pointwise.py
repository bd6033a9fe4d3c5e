"""Kernel builders for elementwise operators, with PyTorch's broadcasting and
type promotion: one NumPy function gives both the CPU kernel and the Meta
kernel, and both compute the dtype the same way, so the two always agree.

Note [Elementwise type promotion]
An elementwise operator computes in the *compute dtype* of its operands:
their result type by PyTorch's rule (_C._result_type, Note [Result type] in
csrc/opdispatch/core/TypePromotion.h), or the default float dtype where that
is an integer or bool type and the operator computes in floating point
(``int_to_float``: true division, sin, exp; PyTorch's
promote_integer_inputs_to_float). The CPU kernel casts every operand to the
compute dtype and calls its NumPy function on them; the result's dtype is
what that function gives for operands of one dtype (the compute dtype, bool
for comparisons, the real dtype for abs of a complex). The Meta kernel calls
the same function on 0-d operands of the compute dtype. The common call,
whose operands need no promotion, skips the casts in C (Note [Promotion on
the fast path] in csrc/python/PythonTypePromotion.cpp)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import _C
from ._numpy import broadcast_shape, call_numpy, check_device, check_inplace, meta_like, numpy_kernel, opmath
from ._output_strides import Strides, call_numpy_strided, elementwise_strides
from ._registry import Kernels
from .._tensor_type import Tensor

#: The dtype conditions of the fast path (_C._NumpyKernel's ``dtypes``): any
#: dtypes; the operands need no promotion; and their dtype is floating or complex.
ANY_DTYPES, SAME_DTYPE, SAME_FLOATING_DTYPE = 0, 1, 2
#: The dtype Python floats and integer inputs of floating operators compute in (torch.get_default_dtype()).
DEFAULT_FLOAT = _C.float32
#: Python's number types: the Scalar arguments that take part in promotion.
NUMBERS = (bool, int, float, complex)
_ALL = slice(None)


def operands(args: Sequence[Any]) -> list[Tensor]:
    """The tensors among ``args``."""
    return [a for a in args if isinstance(a, Tensor)]


def compute_dtype(args: Sequence[Any], int_to_float: bool = False) -> _C.dtype:
    """The dtype an elementwise operation on the tensors and Python numbers
    among ``args`` computes in (see Note [Elementwise type promotion]).
    PyTorch: TensorIteratorBase::compute_types."""
    dtype = _C._result_type(*[a for a in args if isinstance(a, (Tensor, *NUMBERS))])
    if int_to_float and not (dtype.is_floating_point or dtype.is_complex):
        return DEFAULT_FLOAT
    return dtype


def as_dtype(value: Any, dtype: np.dtype) -> Any:
    """An operand (array or Python number, as NumPy receives it) as an array of
    ``dtype``: arrays cast without a copy when they already are; numbers cast
    as C casts them (an int out of an integer dtype's range wraps around, as
    in PyTorch). Anything else is returned as it is."""
    if isinstance(value, np.ndarray):
        return value.astype(dtype, copy=False)
    if isinstance(value, NUMBERS):
        return np.asarray(value).astype(dtype)
    return value


def _in_dtype(fn: Callable[..., Any], dtype: np.dtype, which: slice, *args: Any, **kwargs: Any) -> Any:
    """``fn`` on ``args`` with the operands ``args[which]`` cast to ``dtype`` (runs inside call_numpy)."""
    cast = list(args)
    cast[which] = [as_dtype(a, dtype) for a in args[which]]
    return fn(*cast, **kwargs)


def _sample_dtype(fn: Callable[..., Any], dtype: np.dtype, which: slice, args: Sequence[Any],
                  kwargs: dict[str, Any]) -> np.dtype:
    """The dtype ``fn`` gives for 0-d operands of ``dtype`` (the Meta kernels' dtype rule)."""
    sample = [np.ones((), a.dtype.to_numpy()) if isinstance(a, Tensor) else a for a in args]
    with np.errstate(all="ignore"):
        return np.asarray(_in_dtype(fn, dtype, which, *sample, **kwargs)).dtype


def _names(name: str, cpu: Callable[..., Any], meta: Callable[..., Any]) -> Kernels:
    short = name.replace("od::", "").replace(".", "_")
    cpu.__name__, meta.__name__ = f"{short}_cpu", f"{short}_meta"
    return {"cpu": cpu, "meta": meta}


def fast_path(kernels: Kernels, fn: Callable[..., Any], nargs: int = -1, ndim: int = -1,
              dtypes: int = ANY_DTYPES, contiguous: bool = False) -> Kernels:
    """``kernels`` with the CPU kernel's calls of ``nargs`` positional
    arguments (-1: every call) on tensors of ``ndim`` dims (-1: any), all
    C-contiguous if ``contiguous``, whose operands fit ``dtypes``
    (ANY_DTYPES, SAME_DTYPE, SAME_FLOATING_DTYPE) running ``fn`` in C
    (numpy_kernel; the CPU kernel must compute ``call_numpy(fn, *args)``
    for them and have no side effects): the Python kernel still takes every
    other call and names the operator in errors."""
    cpu = numpy_kernel(fn, kernels["cpu"], nargs, ndim, dtypes, contiguous)
    cpu.__name__ = kernels["cpu"].__name__
    return {"cpu": cpu, "meta": kernels["meta"]}


def output_strides(name: str, tensors: Sequence[Tensor]) -> tuple[tuple[int, ...], Strides]:
    """The broadcast shape of ``tensors`` (RuntimeError naming ``name`` and
    the shapes if they do not broadcast) and the strides of an elementwise
    operator's output of that shape (Note [Output strides])."""
    shapes = [t.shape for t in tensors]
    shape = shapes[0] if shapes and shapes.count(shapes[0]) == len(shapes) else broadcast_shape(name, *shapes)
    return shape, elementwise_strides(shape, tensors)


def call_contiguous(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Tensor:
    """``call_numpy(fn, *args, **kwargs)`` for the NumPy function ``fn`` of
    the elementwise operator ``name``, its output C-contiguous. RuntimeError
    naming ``name`` and the shapes if the tensors do not broadcast."""
    try:
        return call_numpy(fn, *args, **kwargs)
    except ValueError:
        broadcast_shape(name, *(t.shape for t in operands(args)))  # names the shapes
        raise


def call_elementwise(name: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Tensor:
    """As :func:`call_contiguous`, the output laid out as PyTorch's
    TensorIterator lays it out (Note [Output strides]; C-contiguous when
    every tensor argument is)."""
    tensors = operands(args)
    if all(t.is_contiguous() for t in tensors):
        return call_contiguous(name, fn, *args, **kwargs)
    shape, strides = output_strides(name, tensors)
    return call_numpy_strided(shape, strides, fn, *args, **kwargs)


def pointwise(name: str, fn: Callable[..., Any], *, int_to_float: bool = False, promoted: slice = _ALL,
              nargs: int = -1, follows_inputs: bool = True) -> Kernels:
    """``{"cpu": ..., "meta": ...}`` kernels of the elementwise operator
    ``name`` computed by the NumPy function ``fn`` over tensor and
    Python-number arguments, of which ``args[promoted]`` take part in type
    promotion (see Note [Elementwise type promotion]; ``int_to_float``:
    integer operands compute in the default float dtype). ``nargs``: the
    positional arguments of the calls the fast path takes (-1: all).
    ``follows_inputs``: the output's strides follow the tensors' layout as
    TensorIterator's do (Note [Output strides]); else it is C-contiguous
    (PyTorch's pow.Scalar allocates its output so). Both
    kernels raise RuntimeError naming ``name`` and the shapes if the tensors
    do not broadcast, or the devices if they differ."""
    if not isinstance(fn, np.ufunc):
        fn = opmath(fn)

    def cpu(*args: Any, **kwargs: Any) -> Tensor:
        # Every tensor reaching a CPU kernel is on cpu (a higher backend key would have won).
        dtype = compute_dtype(args[promoted], int_to_float).to_numpy()
        return call(name, _in_dtype, fn, dtype, promoted, *args, **kwargs)

    def meta(*args: Any, **kwargs: Any) -> Tensor:
        tensors = operands(args)
        check_device(name, *tensors)
        shape, strides = output_strides(name, tensors)
        dtype = compute_dtype(args[promoted], int_to_float).to_numpy()
        return meta_like(shape, _sample_dtype(fn, dtype, promoted, args, kwargs), strides if follows_inputs else None)

    call = call_elementwise if follows_inputs else call_contiguous
    dtypes = SAME_FLOATING_DTYPE if int_to_float else SAME_DTYPE
    return fast_path(_names(name, cpu, meta), fn, nargs, dtypes=dtypes, contiguous=follows_inputs)


def unary(name: str, fn: Callable[[Any], Any], *, int_to_float: bool = False) -> Kernels:
    """Kernels of an operator of one tensor, ``fn(self)`` elementwise (``int_to_float``: as pointwise's)."""
    return pointwise(name, fn, int_to_float=int_to_float, nargs=1)


def check_alpha(name: str, dtype: _C.dtype, alpha: Any) -> None:
    """PyTorch's rules for the ``alpha`` of add and sub: no floating alpha
    for integer results, no bool alpha but for bool results (RuntimeError
    naming the operator). PyTorch: alpha_check in BinaryOps.h."""
    if isinstance(alpha, bool) and dtype != _C.bool:
        raise RuntimeError(f"{name}: Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, (float, complex)) and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name}: For integral input tensors, argument alpha must not be a floating point number.")


def with_alpha(name: str, ufunc: np.ufunc) -> Kernels:
    """Kernels of ``ufunc(self, alpha * other)`` (add, sub; Tensor and Scalar
    overloads): self and other are promoted, alpha is cast to their dtype."""

    def cpu(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        dtype = compute_dtype((self, other))
        check_alpha(name, dtype, alpha)
        return call_elementwise(name, _in_dtype, _scaled, dtype.to_numpy(), slice(1, 3), ufunc, self, other, alpha)

    def meta(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        check_device(name, *operands((self, other)))
        shape, strides = output_strides(name, operands((self, other)))
        dtype = compute_dtype((self, other))
        check_alpha(name, dtype, alpha)
        return meta_like(shape, dtype, strides)

    # alpha == 1 is not passed (Note [Calling operators from methods]): the fast path takes (self, other).
    return fast_path(_names(name, cpu, meta), ufunc, 2, dtypes=SAME_DTYPE, contiguous=True)


def _scaled(ufunc: np.ufunc, a: Any, b: Any, alpha: Any, out: Any = None, **kwargs: Any) -> Any:
    # b is an array of the compute dtype; alpha, a Python number, is weak in NumPy's promotion and keeps it.
    scaled = b if alpha == 1 else np.multiply(b, alpha, dtype=b.dtype, casting="unsafe")
    return ufunc(a, scaled, out=out, **kwargs)


def _store(fn: Callable[..., Any], dtype: np.dtype, out: np.ndarray, *args: Any, **kwargs: Any) -> np.ndarray:
    """``out`` receives ``fn(out, *args)`` computed on operands cast to ``dtype`` (runs inside call_numpy)."""
    np.copyto(out, _in_dtype(fn, dtype, _ALL, out, *args, **kwargs), casting="unsafe")
    return out


def inplace_of(name: str, fn: Callable[..., Any], *, int_to_float: bool = False) -> Kernels:
    """Kernels of the in-place form of the elementwise operator computed by
    ``fn``: ``self`` receives ``fn(self, *args)``, computed in the compute
    dtype of every operand and cast to ``self``'s. RuntimeError naming
    ``name`` if the result would not fit ``self``'s shape, its dtype cannot
    be cast to ``self``'s, or the devices differ; nothing is written then."""
    if not isinstance(fn, np.ufunc):
        fn = opmath(fn)

    def check(self: Tensor, args: tuple[Any, ...]) -> np.dtype:
        tensors = operands(args)
        check_device(name, self, *tensors)
        dtype = compute_dtype((self, *args), int_to_float)
        check_inplace(name, self, broadcast_shape(name, self.shape, *(t.shape for t in tensors)), dtype)
        return dtype.to_numpy()

    def cpu(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return call_numpy(_store, fn, check(self, args), self, *args, **kwargs)

    def meta(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        check(self, args)
        return self

    return _names(name, cpu, meta)


def _needs_no_promotion(self: Tensor, other: Any, alpha: Any) -> bool:
    """Whether ``self op= alpha * other`` computes in ``self``'s dtype with
    every check passing but the shape's: a real floating ``self``, ``other`` a
    tensor of its dtype or a Python int or float (weak in promotion, as in
    PyTorch), an int or float ``alpha``. The common update of an optimiser
    (SGD's ``p.sub_(g, alpha=lr)``) takes this path."""
    if not self.dtype.is_floating_point or type(alpha) not in (int, float):
        return False
    return type(other) in (int, float) or (isinstance(other, Tensor) and other.dtype == self.dtype)


def inplace(name: str, ufunc: np.ufunc, *, int_to_float: bool = False) -> Kernels:
    """Kernels of an in-place operator: ``self`` receives ``ufunc(self,
    alpha * other)`` (alpha only where the schema has it), computed in the
    operands' compute dtype and cast to ``self``'s. RuntimeError if the result
    would not fit ``self``'s shape or its dtype cannot be cast to ``self``'s
    (PyTorch: "result type Float can't be cast to the desired output type
    Long")."""

    def check(self: Tensor, other: Any, alpha: Any) -> np.dtype:
        dtype = compute_dtype((self, other), int_to_float)
        check_alpha(name, dtype, alpha)
        check_inplace(name, self, self.shape, dtype)
        return dtype.to_numpy()

    def cpu(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        # (A zero stride takes the checked path: check_inplace refuses a self with internal overlap.)
        if _needs_no_promotion(self, other, alpha) and 0 not in self.stride():
            try:  # a shape NumPy refuses raises before anything is written; the checked path names it
                if alpha == 1:
                    return call_numpy(ufunc, self, other, out=self)
                if isinstance(other, Tensor):
                    return call_numpy(_scaled, ufunc, self, other, alpha, self)
            except ValueError:
                pass
        dtype = check(self, other, alpha)
        try:
            return call_numpy(_in_dtype, _scaled, dtype, slice(1, 3), ufunc, self, other, alpha, self,
                              casting="unsafe")
        except ValueError:
            check_inplace(name, self, broadcast_shape(name, self.shape, *(t.shape for t in operands((other,)))))
            raise

    def meta(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
        check_device(name, self, *operands((other,)))
        check_inplace(name, self, broadcast_shape(name, self.shape, *(t.shape for t in operands((other,)))))
        check(self, other, alpha)
        return self

    return _names(name, cpu, meta)
