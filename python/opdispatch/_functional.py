"""Top-level functions of opdispatch (``opdispatch.zeros``, ``opdispatch.matmul``,
...): factories taking sizes as varargs or a sequence, and functional forms
of the Tensor methods. All call ``od`` operators through the dispatcher.
A factory's ``dtype`` is None or an opdispatch.dtype: anything else is a
TypeError naming the factory, as in PyTorch (``_dtype_arg``)."""
from __future__ import annotations

import ctypes
import warnings
from typing import Any, Callable, Concatenate, Optional, ParamSpec, Sequence, TypeVar

import numpy as np

from . import _C, overrides
from ._builtins import _numpy, elementwise, factories, loss, random, shape, views
from ._tensor import Tensor, _dtype_arg, _shape_args

manual_seed = random.manual_seed


def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is an opdispatch.Tensor (a subclass's instance included). PyTorch: torch.is_tensor."""
    return isinstance(obj, Tensor)


def _finish(t: Tensor, requires_grad: bool) -> Tensor:
    return t.requires_grad_() if requires_grad else t


def empty(*size: Any, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` (varargs or a sequence); dtype default float32, device default cpu."""
    dtype = _dtype_arg("empty", dtype)
    return _finish(factories.empty(_shape_args(size), dtype=dtype, layout=layout, device=device), requires_grad)


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype: Any = None, layout: Any = None,
                  device: Any = None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` with ``stride`` (sequences of ints, strides in elements) on cpu
    or meta (od::empty_strided; its errors). PyTorch: torch.empty_strided."""
    dtype = _dtype_arg("empty_strided", dtype)
    return _finish(factories.empty_strided(list(size), list(stride), dtype=dtype, layout=layout, device=device),
                   requires_grad)


def zeros(*size: Any, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of ``size`` (varargs or a sequence)."""
    dtype = _dtype_arg("zeros", dtype)
    return _finish(factories.zeros(_shape_args(size), dtype=dtype, layout=layout, device=device), requires_grad)


def ones(*size: Any, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones of ``size`` (varargs or a sequence)."""
    dtype = _dtype_arg("ones", dtype)
    return _finish(factories.ones(_shape_args(size), dtype=dtype, layout=layout, device=device), requires_grad)


def full(size: Sequence[int], fill_value: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``; dtype inferred from it
    (bool, int64, or float32) unless given."""
    dtype = _dtype_arg("full", dtype)
    return _finish(factories.full(list(size), fill_value, dtype=dtype, layout=layout, device=device), requires_grad)


def arange(start: Any = None, end: Any = None, step: Any = None, *, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """``[start, end)`` in steps of ``step`` (``arange(end)`` starts at 0); int64
    for integer arguments, else float32. The overload called is the one the
    arguments name, as PyTorch's argument parser picks it: od::arange for
    ``end`` alone, od::arange.start for ``start, end``, od::arange.start_step
    once ``step`` is given. TypeError for ``step`` without ``end`` or no
    ``end`` at all; RuntimeError for step 0 or a step of the wrong sign.
    PyTorch: torch.arange."""
    dtype = _dtype_arg("arange", dtype)
    kwargs = {"dtype": dtype, "layout": layout, "device": device}
    if step is not None:
        if start is None or end is None:
            raise TypeError("arange() received an invalid combination of arguments: step is given without both "
                            "start and end; call arange(start, end, step)")
        made = factories.arange_start_step(start, end, step, **kwargs)
    elif start is not None and end is not None:
        made = factories.arange_start(start, end, **kwargs)
    elif start is not None or end is not None:
        made = factories.arange(end if start is None else start, **kwargs)
    else:
        raise TypeError("arange() missing its end: call arange(end), arange(start, end) or arange(start, end, step)")
    return _finish(made, requires_grad)


def rand(*size: Any, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Uniform samples in [0, 1) (see manual_seed)."""
    dtype = _dtype_arg("rand", dtype)
    return _finish(random.rand(_shape_args(size), dtype=dtype, layout=layout, device=device), requires_grad)


def randperm(n: int, *, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False,
             pin_memory: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64 unless ``dtype``; see manual_seed), od::randperm; its errors.
    PyTorch: torch.randperm."""
    dtype = _dtype_arg("randperm", dtype)
    kwargs = {} if dtype is None else {"dtype": dtype}
    return _finish(random.randperm(n, layout=layout, device=device, **kwargs), requires_grad)


def randn(*size: Any, dtype: Any = None, layout: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples (see manual_seed)."""
    dtype = _dtype_arg("randn", dtype)
    return _finish(random.randn(_shape_args(size), dtype=dtype, layout=layout, device=device), requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``input``'s size, with its dtype and device unless given."""
    dtype = _dtype_arg("empty_like", dtype)
    return _finish(factories.empty_like(input, dtype=dtype, layout=layout, device=device), requires_grad)


def zeros_like(input: Tensor, *, dtype: Any = None, layout: Any = None,
               device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros of ``input``'s size, with its dtype and device unless given."""
    dtype = _dtype_arg("zeros_like", dtype)
    return _finish(factories.zeros_like(input, dtype=dtype, layout=layout, device=device), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones of ``input``'s size, with its dtype and device unless given."""
    dtype = _dtype_arg("ones_like", dtype)
    return _finish(factories.ones_like(input, dtype=dtype, layout=layout, device=device), requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, layout: Any = None,
              device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``input``'s size filled with ``fill_value`` (a number,
    cast to the dtype: 2.7 in an int32 tensor is 2), with input's dtype and
    device unless given (od::full_like). PyTorch: torch.full_like."""
    dtype = _dtype_arg("full_like", dtype)
    return _finish(factories.full_like(input, fill_value, dtype=dtype, layout=layout, device=device), requires_grad)


def tensor(data: Any, *, dtype: Any = None, layout: Any = None,
           device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (nested sequences of numbers, a
    NumPy array, or a tensor). Without ``dtype``: Python floats give float32,
    ints int64, bools bool (PyTorch's defaults); arrays and tensors keep theirs.
    On ``device`` (cpu or meta). The new tensor passes through od::lift_fresh,
    so that a mode sees the constant (make_fx records it as
    od::lift_fresh_copy, FakeTensorMode makes it fake). TypeError for data
    that is not numeric or a ``dtype`` that is not an opdispatch.dtype.
    PyTorch: torch.tensor (internal_new_from_data's at::lift_fresh)."""
    dtype = _dtype_arg("tensor", dtype)
    if isinstance(data, _C.TensorBase):
        data = data.numpy(force=True)
    np_dtype = None if dtype is None else dtype.to_numpy()
    a = np.array(data, dtype=np_dtype, copy=True)
    if dtype is None and not isinstance(data, (np.ndarray, np.generic)):
        a = a.astype({"f": np.float32, "c": np.complex64}.get(a.dtype.kind, a.dtype), copy=False)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"tensor(): could not infer a numeric dtype from data of type {type(data).__name__}")
    t = _numpy.tensor(a)
    if device is not None:
        with _C._DisableTorchDispatch():  # modes see the new tensor once, at lift_fresh, as in PyTorch
            t = t.to(device)
    return _finish(views.lift_fresh(t), requires_grad)


class _DLPackCapsule:
    """A DLPack capsule (the legacy protocol: what ``to_dlpack`` functions
    return) as the object with ``__dlpack__`` that NumPy's importer takes; its
    device is read from the capsule by the importer, which refuses any but cpu."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor sharing memory with an object that implements ``__dlpack__``
    (a NumPy array, an opdispatch tensor, ...) or with a DLPack capsule (the
    legacy protocol; a capsule can be consumed once), on cpu: zero-copy,
    through NumPy's importer. TypeError for anything else; what NumPy raises
    for a device other than cpu or a consumed capsule. PyTorch:
    torch.from_dlpack (and torch.utils.dlpack.from_dlpack for capsules)."""
    if type(ext_tensor).__name__ == "PyCapsule":
        if not _capsule_is_valid(ext_tensor, b"dltensor"):
            raise RuntimeError("from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed "
                               "only once, so you might have already constructed a tensor from it once.")
        array = np.from_dlpack(_DLPackCapsule(ext_tensor))
        # NumPy marks what a legacy capsule gives read-only (the protocol has no flag for it); its
        # memory is the producer's to share, writable, as PyTorch takes it: no read-only warning.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return _C.from_numpy(array)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ (a tensor or array of another library) "
                        f"or a DLPack capsule, not {type(ext_tensor).__name__}")
    return _C.from_numpy(np.from_dlpack(ext_tensor))


def _capsule_is_valid(capsule: Any, name: bytes) -> bool:
    """Whether ``capsule`` is a PyCapsule named ``name`` (a consumed DLPack capsule is renamed "used_dltensor")."""
    is_valid = ctypes.pythonapi.PyCapsule_IsValid
    is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
    return bool(is_valid(capsule, name))


def where(condition: Tensor, input: Tensor, other: Tensor) -> Tensor:
    """``input`` where the bool ``condition`` holds, else ``other`` (broadcast; od::where.self)."""
    return elementwise.where(condition, input, other)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Concatenation along the existing dimension ``dim`` (od::cat).
    ValueError for no tensors, with PyTorch 2.13's message (torch.cat's
    TORCH_CHECK_VALUE), where od::cat itself finds no tensor to dispatch on."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("opdispatch.cat(): expected a non-empty list of Tensors")
    return shape.cat(tensors, dim)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Stacking along a new dimension ``dim`` (od::stack)."""
    return shape.stack(list(tensors), dim)


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, *, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """The negative log-likelihood loss of log-probabilities ``input`` (N, C)
    or (C,) for class indices ``target`` (N,) or (); ``reduction`` is "none",
    "mean" (weighted mean) or "sum". PyTorch: torch.nn.functional.nll_loss."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"nll_loss: reduction must be 'none', 'mean' or 'sum', not {reduction!r}")
    # Only the arguments up to the last that differs from its default (Note [Calling operators from methods]
    # in _tensor.py): weight=None, reduction=mean, ignore_index=-100.
    code = _REDUCTIONS[reduction]
    if ignore_index != -100:
        return loss.nll_loss(input, target, weight, code, ignore_index)
    if code != loss.MEAN:
        return loss.nll_loss(input, target, weight, code)
    return loss.nll_loss(input, target) if weight is None else loss.nll_loss(input, target, weight)


_REDUCTIONS = {"none": loss.NONE, "mean": loss.MEAN, "sum": loss.SUM}


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _method(method: Callable[Concatenate[Tensor, _P], _R]) -> Callable[Concatenate[Tensor, _P], _R]:
    """The functional form of the Tensor method ``method``: ``f(input, *args,
    **kwargs)`` is ``Tensor.<name>(input, *args, **kwargs)``, with the method's
    signature for type checkers."""

    def function(input: Tensor, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return method(input, *args, **kwargs)

    name = method.__name__
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``input.{name}(*args, **kwargs)``: see opdispatch.Tensor.{name}."
    # Typed with input positional-only (all Concatenate can say); it may be passed as input=, as in PyTorch.
    return function  # type: ignore[return-value]


# Functional forms of Tensor methods (``opdispatch.exp(t)`` is ``t.exp()``).
add = _method(Tensor.add)
sub = _method(Tensor.sub)
mul = _method(Tensor.mul)
div = _method(Tensor.div)
pow = _method(Tensor.pow)
neg = _method(Tensor.neg)
conj_physical = _method(Tensor.conj_physical)
exp = _method(Tensor.exp)
log = _method(Tensor.log)
sin = _method(Tensor.sin)
cos = _method(Tensor.cos)
tanh = _method(Tensor.tanh)
sigmoid = _method(Tensor.sigmoid)
relu = _method(Tensor.relu)
abs = _method(Tensor.abs)
sqrt = _method(Tensor.sqrt)
maximum = _method(Tensor.maximum)
minimum = _method(Tensor.minimum)
eq = _method(Tensor.eq)
ne = _method(Tensor.ne)
lt = _method(Tensor.lt)
le = _method(Tensor.le)
gt = _method(Tensor.gt)
ge = _method(Tensor.ge)
sum = _method(Tensor.sum)
mean = _method(Tensor.mean)
amax = _method(Tensor.amax)
max = _method(Tensor.max)
argmax = _method(Tensor.argmax)
amin = _method(Tensor.amin)
min = _method(Tensor.min)
argmin = _method(Tensor.argmin)
any = _method(Tensor.any)
cumsum = _method(Tensor.cumsum)
cumprod = _method(Tensor.cumprod)
prod = _method(Tensor.prod)
sort = _method(Tensor.sort)
topk = _method(Tensor.topk)
nonzero = _method(Tensor.nonzero)
split = _method(Tensor.split)
chunk = _method(Tensor.chunk)
narrow = _method(Tensor.narrow)
scatter = _method(Tensor.scatter)
scatter_reduce = _method(Tensor.scatter_reduce)
masked_scatter = _method(Tensor.masked_scatter)
var = _method(Tensor.var)
flip = _method(Tensor.flip)
diagonal = _method(Tensor.diagonal)
as_strided = _method(Tensor.as_strided)
index_select = _method(Tensor.index_select)
gather = _method(Tensor.gather)
scatter_add = _method(Tensor.scatter_add)
index_put = _method(Tensor.index_put)
matmul = _method(Tensor.matmul)
mm = _method(Tensor.mm)
bmm = _method(Tensor.bmm)
softmax = _method(Tensor.softmax)
log_softmax = _method(Tensor.log_softmax)
reshape = _method(Tensor.reshape)
transpose = _method(Tensor.transpose)
t = _method(Tensor.t)
permute = _method(Tensor.permute)
squeeze = _method(Tensor.squeeze)
unsqueeze = _method(Tensor.unsqueeze)
select = _method(Tensor.select)
flatten = _method(Tensor.flatten)
clone = _method(Tensor.clone)
acos = _method(Tensor.acos)
asin = _method(Tensor.asin)
atan = _method(Tensor.atan)
acosh = _method(Tensor.acosh)
asinh = _method(Tensor.asinh)
atanh = _method(Tensor.atanh)
cosh = _method(Tensor.cosh)
sinh = _method(Tensor.sinh)
tan = _method(Tensor.tan)
expm1 = _method(Tensor.expm1)
log1p = _method(Tensor.log1p)
log2 = _method(Tensor.log2)
log10 = _method(Tensor.log10)
reciprocal = _method(Tensor.reciprocal)
rsqrt = _method(Tensor.rsqrt)
sign = _method(Tensor.sign)
ceil = _method(Tensor.ceil)
floor = _method(Tensor.floor)
round = _method(Tensor.round)
trunc = _method(Tensor.trunc)
isnan = _method(Tensor.isnan)
isinf = _method(Tensor.isinf)
logical_not = _method(Tensor.logical_not)
bitwise_not = _method(Tensor.bitwise_not)
erf = _method(Tensor.erf)
exp2 = _method(Tensor.exp2)
square = _method(Tensor.square)
fix = _method(Tensor.fix)
negative = _method(Tensor.negative)
absolute = _method(Tensor.absolute)
positive = _method(Tensor.positive)
arccos = _method(Tensor.arccos)
arcsin = _method(Tensor.arcsin)
arctan = _method(Tensor.arctan)
atan2 = _method(Tensor.atan2)
arctan2 = _method(Tensor.arctan2)
fmod = _method(Tensor.fmod)
remainder = _method(Tensor.remainder)
floor_divide = _method(Tensor.floor_divide)
true_divide = _method(Tensor.true_divide)
divide = _method(Tensor.divide)
multiply = _method(Tensor.multiply)
subtract = _method(Tensor.subtract)
clamp = _method(Tensor.clamp)
clip = _method(Tensor.clip)
clamp_min = _method(Tensor.clamp_min)
clamp_max = _method(Tensor.clamp_max)
bitwise_and = _method(Tensor.bitwise_and)
bitwise_or = _method(Tensor.bitwise_or)
bitwise_xor = _method(Tensor.bitwise_xor)
logical_and = _method(Tensor.logical_and)
logical_or = _method(Tensor.logical_or)
logical_xor = _method(Tensor.logical_xor)

__all__ = [
    "arange", "cat", "empty", "empty_like", "empty_strided", "from_dlpack", "full", "full_like", "is_tensor", "manual_seed", "nll_loss", "ones", "ones_like",
    "rand", "randn", "randperm", "stack", "tensor", "where", "zeros", "zeros_like",
    # functional forms of Tensor methods
    "add", "sub", "mul", "div", "pow", "neg", "conj_physical", "exp", "log", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "sqrt",
    "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "sum", "mean", "amax", "max", "argmax", "amin", "min", "argmin", "any", "cumsum", "cumprod", "prod", "sort", "topk", "nonzero", "split", "chunk", "narrow", "var", "flip", "diagonal", "as_strided", "index_select", "gather", "scatter", "scatter_reduce", "masked_scatter",
    "scatter_add", "index_put",
    "matmul", "mm",
    "bmm", "softmax", "log_softmax", "reshape", "transpose", "t", "permute", "squeeze", "unsqueeze", "select", "flatten",
    "clone", "acos", "asin", "atan", "acosh", "asinh", "atanh", "cosh", "sinh",
    "tan", "expm1", "log1p", "log2", "log10", "reciprocal", "rsqrt", "sign",
    "ceil", "floor", "round", "trunc", "isnan", "isinf", "logical_not", "bitwise_not",
    "erf", "exp2", "square", "fix", "negative", "absolute", "positive", "arccos", "arcsin", "arctan", "atan2",
    "arctan2", "fmod", "remainder", "floor_divide", "true_divide", "divide", "multiply", "subtract", "clamp", "clip",
    "clamp_min", "clamp_max", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or", "logical_xor",
]

# Note [Public functions in the function layer]
# Each public function but is_tensor, manual_seed and from_dlpack (which
# PyTorch does not let __torch_function__ override) is an _C._Overridable
# (Note [The function layer] in csrc/python/TorchFunction.cpp): a mode or an
# overriding argument sees ``opdispatch.add`` itself as ``func``.
for _name in __all__:
    if _name not in ("is_tensor", "manual_seed", "from_dlpack"):
        globals()[_name] = overrides.overridable()(globals()[_name])
