"""opdispatch.Tensor: the Python class of every tensor (its C++ part is
opdispatch._C.TensorBase): autograd attributes, Python operators, indexing,
and methods. Every operator and method calls an ``od`` operator through the
dispatcher, so the Autograd and Meta keys apply."""
from __future__ import annotations

import builtins
import collections
import copy
import copyreg
import types
import numbers
import warnings
from typing import Any, Callable, ClassVar, Iterator, Optional, Protocol, Sequence, TypeAlias, TypeVar, Union

import numpy as np

from . import _C, _layout, overrides
from ._builtins import binary_math as _bm
from ._builtins import comparison as _cmp
from ._builtins import copy as _copy
from ._builtins import elementwise as _ew
from ._builtins import factories as _fac
from ._builtins import indexing as _indexing
from ._builtins import linalg as _linalg
from ._builtins import pointwise_decompositions as _pd
from ._builtins import softmax as _softmax
from ._builtins import sorting as _sorting
from ._builtins import reduction as _red
from ._builtins import scalar_queries as _scalar_queries
from ._builtins import shape as _shape
from ._builtins import views as _views
from ._builtins import _numpy
from ._tensor_pointwise import PointwiseMethods
from ._tensor_pointwise import binary as _binary
from ._tensor_pointwise import is_scalar as _is_scalar
from ._tensor_pointwise import scalar_tensor
from .autograd import engine, graph
from .autograd.grad_mode import no_grad as _no_grad
from .types import Number

# Note [Calling operators from methods]
# Methods pass an operator only the arguments that differ from their
# defaults: an argument passed equal to its default is converted to be
# compared with it (a Python kernel does not receive it), and keywords cost a
# second argument buffer (Note [Python call arguments] in
# csrc/python/PythonCall.h).



class _BoolSlot(Protocol):
    """A data descriptor holding a bool (TensorBase's requires_grad getset)."""

    def __get__(self, obj: _C.TensorBase, owner: Optional[type] = None, /) -> bool: ...

    def __set__(self, obj: _C.TensorBase, value: bool, /) -> None: ...


# The descriptor itself (the class attribute is a property to type checkers).
_requires_grad_slot: _BoolSlot = _C.TensorBase.__dict__["requires_grad"]
_TensorBase = _C.TensorBase
_T = TypeVar("_T")
_len_torch_dispatch_stack = _C._len_torch_dispatch_stack
# The operators of the hottest methods, bound once.
_TensorOp: TypeAlias = "_C._DispatchOperator[Tensor]"
_add: _TensorOp = _ew.add
_sub: _TensorOp = _ew.sub
_mul: _TensorOp = _ew.mul
_mm: _TensorOp = _linalg.mm
_relu: _TensorOp = _ew.relu
_sin: _TensorOp = _ew.sin


class Tensor(PointwiseMethods, _C.TensorBase):
    """A strided tensor whose operations go through the dispatcher."""

    # --- subclasses -------------------------------------------------------------

    #: A subclass that defines ``__torch_dispatch__`` (a classmethod) handles
    #: every operator call on its instances (Note [The Python key]); this
    #: marker means "does not". PyTorch: torch._C._disabled_torch_dispatch_impl.
    __torch_dispatch__: ClassVar[Callable[..., Any]] = _C._disabled_torch_dispatch_impl
    # Builtin functions are not descriptors, so as class attributes they act as static methods; unlike a
    # staticmethod object, CPython's specializing interpreter caches them at a call site
    # (``Tensor._make_wrapper_subclass(...)``, made per operator call by a wrapper subclass).
    _make_subclass = _C._make_subclass
    _make_wrapper_subclass = _C._make_wrapper_subclass

    def __new__(cls, *args: Any, device: Any = None) -> "Tensor":
        """``Tensor.__new__(cls, t)``, as a subclass's ``__new__`` may call it
        (and ``Tensor(t)``): an instance of ``cls`` aliasing the tensor ``t``
        as ``t.as_subclass(cls)`` does (memory, version counter, autograd
        graph). PyTorch's legacy constructor otherwise: ``Tensor(*sizes)`` an
        uninitialised float32 tensor, ``Tensor(sequence)`` a float32 tensor of
        the data, ``Tensor()`` an empty one, on ``device`` (default cpu).
        TypeError for other arguments. PyTorch: torch.Tensor.__new__
        (legacy_tensor_ctor)."""
        if len(args) == 1 and isinstance(args[0], Tensor):
            if device is not None:
                raise TypeError("Tensor.__new__(cls, tensor) takes no device: the result aliases the tensor")
            source = args[0]
            return source.as_subclass(cls) if cls is not Tensor else _views.view(source, list(source.shape))
        if all(_is_int(a) for a in args):
            out = _fac.empty(list(args) if args else [0], dtype=_C.float32, device=device)
        elif len(args) == 1 and isinstance(args[0], (list, tuple)):
            out = _numpy.tensor(np.asarray(args[0], dtype=np.float32))
            out = out if device is None else out.to(device)
        else:
            raise TypeError(f"{cls.__name__}.__new__() takes a tensor (to alias), sizes (ints) or a sequence of "
                            f"numbers, not ({', '.join(type(a).__name__ for a in args)})")
        return out.as_subclass(cls) if cls is not Tensor else out

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass that handles dispatch (its ``__torch_dispatch__`` is not
        Tensor's) and keeps Tensor's ``__torch_function__`` gets
        ``__torch_function__ = _C._disabled_torch_function_impl``: its calls
        reach the dispatcher unconverted. Its objects are preserved while C++
        holds their tensor (_C._prepare_subclass). PyTorch:
        THPVariableMetaType_init."""
        super().__init_subclass__(**kwargs)
        _C._prepare_subclass(cls)
        own_dispatch = cls.__torch_dispatch__ is not _C._disabled_torch_dispatch_impl
        if own_dispatch and getattr(cls.__torch_function__, "__func__", None) is _DEFAULT_TORCH_FUNCTION:
            cls.__torch_function__ = _C._disabled_torch_function_impl  # type: ignore[method-assign]

    @classmethod
    def __torch_function__(cls, func: Callable[..., Any], types: tuple[type, ...], args: Sequence[Any] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """The function layer's default for subclasses (see opdispatch.overrides):
        runs ``func(*args, **kwargs)`` with subclass overrides disabled and
        returns its tensors as instances of ``cls`` (``as_subclass``), except
        for the functions of ``get_default_nowrap_functions()``. NotImplemented
        if a type in ``types`` is not a base of ``cls``. A subclass opts out by
        setting ``__torch_function__ = _C._disabled_torch_function_impl``.
        PyTorch: torch.Tensor.__torch_function__."""
        if kwargs is None:
            kwargs = {}
        if not all(issubclass(cls, t) for t in types):
            return NotImplemented
        with _C.DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
            if func in overrides.get_default_nowrap_functions():
                return ret
            return _convert(ret, cls)

    def as_subclass(self, cls: type[_T]) -> _T:
        """An instance of ``cls`` (a subclass of Tensor) sharing this tensor's
        memory and version counter and attached to the autograd graph (an
        od::view of the same shape); it carries the Python keys if ``cls``
        defines ``__torch_dispatch__``. TypeError if ``cls`` is not a Tensor
        subclass or adds ``__slots__``. PyTorch: Tensor.as_subclass."""
        out = _views.view(self, list(self.shape))
        _C._set_subclass(out, cls)
        return out  # type: ignore[return-value]  # _set_subclass made it a cls

    # --- autograd -------------------------------------------------------------

    @property
    def requires_grad(self) -> bool:
        """Whether operations on this tensor are recorded for backward."""
        return _requires_grad_slot.__get__(self)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not graph.is_leaf(self):
            raise RuntimeError(
                "you can only change requires_grad flags of leaf tensors. If you want to use a computed tensor "
                "in a subgraph that doesn't require differentiation use t_no_grad = t.detach()."
            )
        _requires_grad_slot.__set__(self, value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Sets requires_grad in place and returns self."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad(self) -> Optional["Tensor"]:
        """The accumulated gradient (leaves, and tensors that retain_grad())."""
        meta = graph.get_meta(self)
        return None if meta is None else meta.grad

    @grad.setter
    def grad(self, value: Optional["Tensor"]) -> None:
        if value is not None and tuple(value.shape) != tuple(self.shape):
            raise RuntimeError(f"assigned grad has shape {tuple(value.shape)}, but the tensor has shape "
                               f"{tuple(self.shape)}")
        graph.meta_for_write(self).grad = value

    @property
    def grad_fn(self) -> Optional[graph.Node]:
        """The node that computed this tensor (None for leaves)."""
        return graph.grad_fn(self)

    @property
    def is_leaf(self) -> bool:
        """True unless the tensor was computed by a recorded operation."""
        return graph.is_leaf(self)

    @property
    def _base(self) -> Optional["Tensor"]:
        """The tensor this view views, the root of a chain of views (a view
        of a view has the first one's base); None for a tensor no view
        operator made (detach's result included). Kept alive by the view.
        PyTorch: Tensor._base (Note [Views know their base] in
        _builtins/_registry.py)."""
        meta = self._autograd_meta
        return None if meta is None else meta.view_base

    def _is_view(self) -> bool:
        """Whether a view operator made this tensor (``_base`` is not None). PyTorch: Tensor._is_view."""
        return self._base is not None

    @property
    def retains_grad(self) -> bool:
        meta = graph.get_meta(self)
        return meta is not None and meta.retains_grad

    def retain_grad(self) -> None:
        """Keeps ``.grad`` for this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that has requires_grad=False")
        meta = graph.meta_for_write(self)
        if meta.grad_fn is None or meta.retains_grad:
            return
        meta.retains_grad = True
        meta.grad_fn.retain_output(meta.output_nr, self)

    def detach(self) -> "Tensor":
        """A tensor sharing this one's memory and version counter, outside the
        graph (od::detach, so a subclass's __torch_dispatch__ and an active
        dispatch mode see it, as in PyTorch; a plain tensor outside any mode
        takes its kernel directly)."""
        if type(self) is Tensor and not _len_torch_dispatch_stack():
            return _views._detach(self)
        return _views.detach(self)

    def backward(self, gradient: Optional["Tensor"] = None, retain_graph: Optional[bool] = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulates gradients of this tensor into the leaves' ``.grad``; see
        opdispatch.autograd.backward."""
        engine.backward(self, gradient, retain_graph=retain_graph, create_graph=create_graph, inputs=inputs)

    # --- Python protocol ------------------------------------------------------------

    __hash__ = _C.TensorBase.__hash__

    def __repr__(self, *, tensor_contents: Optional[builtins.str] = None) -> builtins.str:
        """NumPy-style text with the dtype, device and autograd state:
        ``tensor([[1., 2.]], dtype=opdispatch.float32, grad_fn=<od::mul.TensorBackward>)``;
        a subclass's starts with its class name instead of ``tensor``. A
        meta tensor shows ``...`` and its size instead of values; an empty
        tensor ``[]`` and its size unless it is 1-D. ``tensor_contents`` (a
        str) replaces the values part, as a wrapper subclass's own
        ``__repr__`` passes its inner tensor's text
        (``super().__repr__(tensor_contents=f"{self.elem}")``): then the data
        is never read and no operator runs. Without it, a wrapper subclass
        (no data of its own) has its values read through its operators, as
        PyTorch 2.13's does: a 0-d one's by ``item()`` (od::_local_scalar_dense,
        which its ``__torch_dispatch__`` and a dispatch mode see), any other
        by ``tolist()``, which raises RuntimeError for a subclass with
        ``__torch_dispatch__``. Printing a tensor with data is seen by no
        dispatch mode. PyTorch: Tensor.__repr__ / _tensor_str._str."""
        cpu = str(self.device) == "cpu"
        device = [] if cpu and not self.is_meta else [f"device='{self.device}'"]
        if tensor_contents is not None:
            parts = [tensor_contents, *device] + ([f"size={tuple(self.shape)}"] if self.is_meta else [])
        elif self.is_meta:
            parts = ["...", f"device='{self.device}'", f"size={tuple(self.shape)}"]
        elif self.numel() == 0:
            parts = ["[]", *device] + ([f"size={tuple(self.shape)}"] if self.ndim != 1 else [])
        else:
            text = np.array2string(self._values_to_print(), separator=", ", prefix="tensor(", threshold=1000)
            parts = [text, *device]
        parts.append(f"dtype={self.dtype!r}")
        if self.grad_fn is not None:
            parts.append(f"grad_fn=<{self.grad_fn.name()}>")
        elif self.requires_grad:
            parts.append("requires_grad=True")
        name = "tensor" if type(self) is Tensor else type(self).__name__
        return f"{name}({', '.join(parts)})"

    def _values_to_print(self) -> np.ndarray:
        """The values __repr__ prints: the data, or for a tensor without data
        (a wrapper subclass) what its operators give (see __repr__)."""
        if self._has_storage():
            return self.numpy(force=True)
        values = self.item() if self.ndim == 0 else self.tolist()
        return np.asarray(values, dtype=self.dtype.to_numpy())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        """The sub-tensors along dimension 0 (views, via od::select.int)."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (_views.select(self, 0, i) for i in range(self.shape[0]))

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
        return bool(self.item())

    def __float__(self) -> float:
        # A complex item raises TypeError, as float(complex) does.
        return float(self.item())  # type: ignore[arg-type]

    def __int__(self) -> int:
        # A complex item raises TypeError, as int(complex) does.
        return int(self.item())  # type: ignore[arg-type]

    def __index__(self) -> int:
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())  # type: ignore[arg-type]  # not complex: the dtype is checked above

    def item(self) -> Union[bool, int, float, complex]:
        """The value of a one-element tensor as a Python number, read by
        od::_local_scalar_dense (so a subclass's __torch_dispatch__ and an
        active dispatch mode see it, as in PyTorch; a plain tensor outside any
        mode takes its CPU kernel directly). RuntimeError for any other number
        of elements and for meta tensors, which have no data. PyTorch: at::item."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        if type(self) is Tensor and not _len_torch_dispatch_stack() and not self.is_meta:
            return _scalar_queries.local_scalar_dense_cpu(self)
        return _scalar_queries.local_scalar_dense(self)

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers; a number for a 0-d
        tensor. Read from the data without dispatch, as PyTorch's; RuntimeError
        for a subclass that defines ``__torch_dispatch__`` (PyTorch:
        THPVariable_tolist)."""
        if type(self).__torch_dispatch__ is not _C._disabled_torch_dispatch_impl:
            raise RuntimeError(f".tolist() is not supported for tensor subclasses, got {type(self).__name__}")
        return self.numpy(force=True).tolist()

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
        """NumPy's view of the data (``np.asarray(t)`` shares memory); raises for a tensor that requires
        grad while grad mode is on."""
        a = self.numpy()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Optional[bool] = None) -> Any:
        """A DLPack capsule of this cpu tensor's memory (through NumPy's exporter; zero-copy)."""
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        return self.numpy().__dlpack__(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        if str(self.device) != "cpu":
            raise RuntimeError(f"__dlpack_device__: only cpu tensors can be exported, this one is on {self.device}")
        return (1, 0)  # (kDLCPU, device 0)

    # --- arithmetic operators --------------------------------------------------------

    def __add__(self, other: Any) -> "Tensor":
        if isinstance(other, _TensorBase):
            return _add(self, other)
        if not _is_scalar(other):
            return NotImplemented
        return _ew.add_scalar(self, other)

    __radd__ = __add__

    def __sub__(self, other: Any) -> "Tensor":
        if isinstance(other, _TensorBase):
            return _sub(self, other)
        if not _is_scalar(other):
            return NotImplemented
        return _ew.sub_scalar(self, other)

    def __rsub__(self, other: Any) -> "Tensor":
        if not _is_scalar(other):
            return NotImplemented
        return _ew.rsub_scalar(self, other)

    def __mul__(self, other: Any) -> "Tensor":
        if isinstance(other, _TensorBase):
            return _mul(self, other)
        if not _is_scalar(other):
            return NotImplemented
        return _ew.mul_scalar(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> "Tensor":
        return _binary(self, other, _ew.div, _ew.div_scalar)

    def __rtruediv__(self, other: Any) -> "Tensor":
        if not _is_scalar(other):
            return NotImplemented
        return _ew.div(scalar_tensor(self, other), self)

    def __pow__(self, exponent: Any) -> "Tensor":
        return _binary(self, exponent, _ew.pow_tensor_tensor, _ew.pow_tensor_scalar)

    def __rpow__(self, base: Any) -> "Tensor":
        if not _is_scalar(base):
            return NotImplemented
        return _ew.pow_scalar(base, self)

    def __matmul__(self, other: Any) -> "Tensor":
        if not isinstance(other, _C.TensorBase):
            return NotImplemented
        return _linalg.matmul(self, other)

    def __neg__(self) -> "Tensor":
        return _ew.neg(self)

    def __abs__(self) -> "Tensor":
        return _ew.abs(self)

    def __iadd__(self, other: Any) -> "Tensor":
        return _binary(self, other, _ew.add_, _ew.add_scalar_)

    def __isub__(self, other: Any) -> "Tensor":
        return _binary(self, other, _ew.sub_, _ew.sub_scalar_)

    def __imul__(self, other: Any) -> "Tensor":
        return _binary(self, other, _ew.mul_, _ew.mul_scalar_)

    def __itruediv__(self, other: Any) -> "Tensor":
        return _binary(self, other, _ew.div_, _ew.div_scalar_)

    def __ipow__(self, exponent: Any) -> "Tensor":
        return _binary(self, exponent, _ew.pow_, _ew.pow_scalar_)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _binary(self, other, _cmp.eq, _cmp.eq_scalar)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return _binary(self, other, _cmp.ne, _cmp.ne_scalar)

    def __lt__(self, other: Any) -> "Tensor":
        return _binary(self, other, _cmp.lt, _cmp.lt_scalar)

    def __le__(self, other: Any) -> "Tensor":
        return _binary(self, other, _cmp.le, _cmp.le_scalar)

    def __gt__(self, other: Any) -> "Tensor":
        return _binary(self, other, _cmp.gt, _cmp.gt_scalar)

    def __ge__(self, other: Any) -> "Tensor":
        return _binary(self, other, _cmp.ge, _cmp.ge_scalar)

    # --- indexing -----------------------------------------------------------------------

    def __getitem__(self, index: Any) -> "Tensor":
        """Basic indexing: ints (od::select.int), slices with a positive step
        (od::slice.Tensor), ``None`` (od::unsqueeze), ``...``, and tuples of
        them; the result is a view. Index tensors (int64/int32, or bool/uint8
        masks covering as many dims as they have) and lists of ints (made
        tensors) index advanced, after the basic items, through one
        od::index.Tensor call whose list holds them at the dims they index
        (None elsewhere), as PyTorch's applySlicing / dispatch_index do; the
        result is a copy. A bool adds a dim of size 1 that an index tensor
        of [0] (True) or [] (False) indexes, as PyTorch's. IndexError for an
        index out of range or too many indices; TypeError for other index
        types."""
        result, advanced = _apply_slicing(self, index, skip_full_slices=not isinstance(index, slice))
        if advanced:
            return _indexing.index(result, advanced)
        return _views.view(result, list(result.shape)) if result is self else result

    def __setitem__(self, index: Any, value: Any) -> None:
        """Writes ``value`` (a Tensor broadcasting to the indexed part, or a
        bool, int, float or complex) into the part of ``self`` that
        ``self[index]`` selects (the indices as __getitem__ takes them), in
        place, as PyTorch 2.13's THPVariable_setitem / at::indexing::set_item
        do, through the same operators: a number becomes a 0-d tensor of
        self's dtype (od::lift_fresh); the basic items make a view
        (od::select.int, od::slice.Tensor, od::unsqueeze), which receives
        the value by od::copy_ (same shape), od::fill_.Tensor (a 0-d value)
        or od::copy_ of the value without its leading 1-sized dims expanded
        (od::view, od::expand); ``self[False] = v`` writes nothing and
        ``self[True] = v`` writes to od::unsqueeze(self, 0), as PyTorch's
        setitem; advanced items write through one
        od::index_put_ call. So autograd records the update (a view's base is
        rebased: Note [In-place updates of views]) and version counters bump.

        Raises TypeError for a value of another type ("can't assign a str to
        a Float tensor"), RuntimeError for a number self's dtype cannot hold
        ("value cannot be converted to type int8_t without overflow"), a
        value that does not broadcast, or an update of a leaf that requires
        grad; ValueError for an int beyond int64; and what __getitem__
        raises for the index."""
        value = _value_to_tensor(self, value)
        if index is False:  # PyTorch's setitem writes nothing (THPVariable_setitem)
            return
        # True alone: the value goes to a new leading dim of size 1 (THPVariable_setitem, set_item).
        sliced, advanced = (_views.unsqueeze(self, 0), []) if index is True else _apply_slicing(self, index)
        if advanced:
            stripped = _strip_leading_ones(value.shape)
            _indexing.index_put_(sliced, advanced,
                                 value if stripped == list(value.shape) else _views.view(value, stripped))
        elif sliced.shape == value.shape:
            _copy.copy_(sliced, value)
        elif value.ndim == 0 and value.device.type == "cpu":
            _copy.fill_tensor_(sliced, value)
        else:
            src = _views.view(value, _strip_leading_ones(value.shape))
            if src.shape != sliced.shape:
                src = _views.expand(src, list(sliced.shape))
            _copy.copy_(sliced, src)

    # --- methods: arithmetic and elementwise ---------------------------------------------

    def add(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        """``self + alpha * other`` (od::add.Tensor / od::add.Scalar)."""
        if isinstance(other, _TensorBase):
            return _add(self, other) if alpha == 1 else _add(self, other, alpha=alpha)
        return _ew.add_scalar(self, other) if alpha == 1 else _ew.add_scalar(self, other, alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        """``self - alpha * other`` (od::sub.Tensor / od::sub.Scalar)."""
        if isinstance(other, _TensorBase):
            return _sub(self, other) if alpha == 1 else _sub(self, other, alpha=alpha)
        return _ew.sub_scalar(self, other) if alpha == 1 else _ew.sub_scalar(self, other, alpha)

    def mul(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self * other`` (od::mul.Tensor / od::mul.Scalar)."""
        return self * other

    def div(self, other: Union["Tensor", Number], *, rounding_mode: Optional[str] = None) -> "Tensor":
        """``self / other``: true division (od::div.Tensor / od::div.Scalar), or rounded toward zero
        ("trunc") or down ("floor") (od::div.Tensor_mode / od::div.Scalar_mode)."""
        if rounding_mode is None:
            return self / other
        if isinstance(other, _TensorBase):
            return _bm.div_tensor_mode(self, other, rounding_mode=rounding_mode)
        return _bm.div_scalar_mode(self, other, rounding_mode=rounding_mode)

    def pow(self, exponent: Union["Tensor", Number]) -> "Tensor":
        """``self ** exponent`` (od::pow.Tensor_Tensor / od::pow.Tensor_Scalar)."""
        return self ** exponent

    def pow_(self, exponent: Union["Tensor", Number]) -> "Tensor":
        """``self **= exponent`` in self's memory (``od::pow_.Tensor`` / ``od::pow_.Scalar``); RuntimeError when the
        result's dtype cannot be written to self's (an integer self with a float exponent), as PyTorch's ``pow_``."""
        return _binary(self, exponent, _ew.pow_, _ew.pow_scalar_)

    def neg(self) -> "Tensor":
        """``-self`` (od::neg)."""
        return _ew.neg(self)

    def conj_physical(self) -> "Tensor":
        """The complex conjugate of a complex tensor, in new memory; a real
        tensor is returned itself (od::conj_physical, as PyTorch's)."""
        return _ew.conj_physical(self)

    def exp(self) -> "Tensor":
        """e to the power of each element (od::exp)."""
        return _ew.exp(self)

    def log(self) -> "Tensor":
        """Natural logarithm of each element (od::log)."""
        return _ew.log(self)

    def sin(self) -> "Tensor":
        """Sine of each element (od::sin)."""
        return _sin(self)

    def cos(self) -> "Tensor":
        """Cosine of each element (od::cos)."""
        return _ew.cos(self)

    def tanh(self) -> "Tensor":
        """Hyperbolic tangent of each element (od::tanh)."""
        return _ew.tanh(self)

    def sigmoid(self) -> "Tensor":
        """``1 / (1 + exp(-self))`` (od::sigmoid)."""
        return _ew.sigmoid(self)

    def relu(self) -> "Tensor":
        """``max(self, 0)`` (od::relu)."""
        return _relu(self)

    def abs(self) -> "Tensor":
        """Absolute value of each element (od::abs)."""
        return _ew.abs(self)

    def sqrt(self) -> "Tensor":
        """Square root of each element (od::sqrt)."""
        return _ew.sqrt(self)

    def maximum(self, other: "Tensor") -> "Tensor":
        """Elementwise maximum, broadcast (od::maximum)."""
        return _ew.maximum(self, other)

    def minimum(self, other: "Tensor") -> "Tensor":
        """Elementwise minimum, broadcast (od::minimum)."""
        return _ew.minimum(self, other)

    def where(self, condition: "Tensor", other: "Tensor") -> "Tensor":
        """``self`` where ``condition`` (a bool tensor) holds, else ``other`` (od::where.self)."""
        return _ew.where(condition, self, other)

    def eq(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self == other`` as a bool tensor (od::eq.Tensor / od::eq.Scalar)."""
        return self == other

    def ne(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self != other`` as a bool tensor (od::ne)."""
        return self != other

    def lt(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self < other`` as a bool tensor (od::lt)."""
        return self < other

    def le(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self <= other`` as a bool tensor (od::le)."""
        return self <= other

    def gt(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self > other`` as a bool tensor (od::gt)."""
        return self > other

    def ge(self, other: Union["Tensor", Number]) -> "Tensor":
        """``self >= other`` as a bool tensor (od::ge)."""
        return self >= other

    # --- methods: in place ----------------------------------------------------------------

    def add_(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        """``self += alpha * other`` in self's memory (``od::add_.Tensor`` / ``od::add_.Scalar``)."""
        if isinstance(other, _TensorBase):
            return _ew.add_(self, other) if alpha == 1 else _ew.add_(self, other, alpha=alpha)
        return _ew.add_scalar_(self, other) if alpha == 1 else _ew.add_scalar_(self, other, alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> "Tensor":
        """``self -= alpha * other`` in self's memory (``od::sub_.Tensor`` / ``od::sub_.Scalar``)."""
        if isinstance(other, _TensorBase):
            return _ew.sub_(self, other) if alpha == 1 else _ew.sub_(self, other, alpha=alpha)
        return _ew.sub_scalar_(self, other) if alpha == 1 else _ew.sub_scalar_(self, other, alpha)

    def mul_(self, other: Any) -> "Tensor":
        """``self *= other`` in self's memory (``od::mul_.Tensor`` / ``od::mul_.Scalar``)."""
        return _ew.mul_(self, other) if isinstance(other, _TensorBase) else _ew.mul_scalar_(self, other)

    def div_(self, other: Any) -> "Tensor":
        """``self /= other`` in self's memory (``od::div_.Tensor`` / ``od::div_.Scalar``); RuntimeError for an integer
        self."""
        return _ew.div_(self, other) if isinstance(other, _TensorBase) else _ew.div_scalar_(self, other)

    def zero_(self) -> "Tensor":
        """Fills self with zeros (``od::zero_``)."""
        return _copy.zero_(self)

    def fill_(self, value: Any) -> "Tensor":
        """Fills self with ``value`` cast to self's dtype (``od::fill_.Scalar``)."""
        return _copy.fill_(self, value)

    def copy_(self, src: "Tensor", non_blocking: bool = False) -> "Tensor":
        """Writes ``src`` (broadcast, cast to self's dtype) into self's memory (``od::copy_``)."""
        return _copy.copy_(self, src, True) if non_blocking else _copy.copy_(self, src)

    # --- methods: reductions -------------------------------------------------------------------

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        """Sum over ``dim`` (an int, a sequence, or None for all); ints and bools sum to int64."""
        dtype = _dtype_arg("sum", dtype)
        if dim is None and not keepdim:
            return _red.sum_(self) if dtype is None else _red.sum_(self, dtype=dtype)
        dims = None if dim is None else _dims(dim)
        if dtype is None:
            return _red.sum_dim(self, dims, keepdim) if keepdim else _red.sum_dim(self, dims)
        return _red.sum_dim(self, dims, keepdim, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        """Mean over ``dim``; floating-point (or complex) input or ``dtype`` only."""
        if dim is None:
            return _red.mean(self, dtype=dtype) if not keepdim else _red.mean_dim(self, None, True, dtype=dtype)
        return _red.mean_dim(self, _dims(dim), keepdim, dtype=dtype)

    def amax(self, dim: Any = (), keepdim: bool = False) -> "Tensor":
        """Maximum over ``dim`` (an int, a sequence, or () for all) (od::amax)."""
        return _red.amax(self, _dims(dim), True) if keepdim else _red.amax(self, _dims(dim))

    def max(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The maximum (a 0-d tensor); with an int ``dim``, ``(values, indices)`` along it (od::max.dim); with a
        Tensor, the elementwise maximum of the two (od::max.other)."""
        if dim is None:
            return _red.amax(self)
        if isinstance(dim, _TensorBase):
            return _pd.max_other(self, dim)
        return MaxResult(*(_red.max_dim(self, dim, True) if keepdim else _red.max_dim(self, dim)))

    def argmax(self, dim: Optional[int] = None, keepdim: bool = False) -> "Tensor":
        """int64 index of the maximum, over the flattened tensor or along ``dim`` (od::argmax)."""
        if keepdim:
            return _red.argmax(self, dim, True)
        return _red.argmax(self) if dim is None else _red.argmax(self, dim)

    def var(self, dim: Any = None, unbiased: bool = True, keepdim: bool = False, *,
            correction: Optional[float] = None) -> "Tensor":
        """Variance over ``dim`` (an int, a sequence, or None for all), divided
        by N - ``correction`` (1 unless ``unbiased`` is False; ``x.var(False)``
        passes unbiased) (od::var.correction)."""
        if isinstance(dim, bool):
            unbiased, dim = dim, None
        if correction is None:
            correction = 1 if unbiased else 0
        dims = None if dim is None else _dims(dim)
        return _red.var_correction(self, dims, correction=correction, keepdim=keepdim)

    def prod(self, dim: Optional[int] = None, keepdim: bool = False, *, dtype: Any = None) -> "Tensor":
        """Product of every element, or along ``dim`` (an int); integer and bool
        inputs give int64 unless ``dtype`` is given (od::prod, od::prod.dim_int)."""
        kwargs = {} if dtype is None else {"dtype": dtype}
        if dim is None:
            return _red.prod(self, **kwargs)
        return _red.prod_dim(self, dim, True, **kwargs) if keepdim else _red.prod_dim(self, dim, **kwargs)

    def sort(self, dim: int = -1, descending: bool = False, *, stable: Optional[bool] = None) -> "SortResult":
        """The values along ``dim`` in ascending (or ``descending``) order, NaN
        the largest, and the int64 indices they came from, as a named
        ``(values, indices)`` (od::sort). Every od sort is stable (equal values
        keep their order), so ``stable`` changes nothing."""
        return SortResult(*_sorting.sort(self, dim, descending))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> "TopkResult":
        """The ``k`` largest (or smallest) values along ``dim``, NaN the
        largest, and their int64 indices, as a named ``(values, indices)``
        (od::topk). od always returns them in order; with ``sorted=False``
        PyTorch's order is unspecified. RuntimeError unless 0 <= k <= size."""
        return TopkResult(*_sorting.topk(self, k, dim, largest, sorted))

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """The int64 coordinates of the nonzero elements (NaN counts) in C
        order: an (n, ndim) tensor (od::nonzero), or with ``as_tuple`` one
        1-D tensor of n per dimension (one for a 0-d tensor), as PyTorch's
        nonzero(as_tuple=True). On meta it raises NotImplementedError: n depends on the data."""
        if not as_tuple:
            return _indexing.nonzero(self)
        flat = _views.reshape(self, [1]) if self.ndim == 0 else self
        coords = _indexing.nonzero(flat)
        return tuple(_views.select(coords, 1, i) for i in range(flat.ndim))

    def split(self, split_size: Any, dim: int = 0) -> tuple["Tensor", ...]:
        """Views of consecutive pieces along ``dim``: of the sizes in
        ``split_size`` (a sequence, od::split_with_sizes), or each of
        ``split_size`` (an int, od::split.Tensor) with a smaller last one.
        RuntimeError for a negative size, for 0 along a nonempty dimension, or
        for sizes not summing to the dimension's."""
        if not _is_int(split_size):
            return tuple(_views.split_with_sizes(self, list(split_size), dim))
        return tuple(_views.split(self, split_size, dim))

    def chunk(self, chunks: int, dim: int = 0) -> tuple["Tensor", ...]:
        """``chunks`` views of equal size along ``dim`` but the last (fewer when
        the dimension is shorter), od::chunk; RuntimeError for ``chunks`` < 1 or
        a 0-d tensor."""
        return tuple(_views.chunk(self, chunks, dim))

    def narrow(self, dim: int, start: int, length: int) -> "Tensor":
        """The view of ``length`` elements of ``dim`` from ``start`` (negative
        counts from the end), od::narrow; RuntimeError for a 0-d tensor or a
        length past the end, IndexError for ``dim`` or ``start`` out of range."""
        return _views.narrow(self, dim, start, length)

    def cumsum(self, dim: int, *, dtype: Any = None) -> "Tensor":
        """Running sums along ``dim``; integer and bool inputs give int64 unless ``dtype`` is given (od::cumsum)."""
        return _red.cumsum(self, dim) if dtype is None else _red.cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> "Tensor":
        """Running products along ``dim``; integer and bool inputs give int64 unless ``dtype`` is given (od::cumprod)."""
        return _red.cumprod(self, dim) if dtype is None else _red.cumprod(self, dim, dtype=dtype)

    def amin(self, dim: Any = (), keepdim: bool = False) -> "Tensor":
        """Minimum over ``dim`` (an int, a sequence, or () for all) (od::amin)."""
        return _red.amin(self, _dims(dim), True) if keepdim else _red.amin(self, _dims(dim))

    def min(self, dim: Any = None, keepdim: bool = False) -> Any:
        """The minimum (a 0-d tensor); with an int ``dim``, ``(values, indices)`` along it (od::min.dim); with a
        Tensor, the elementwise minimum of the two (od::min.other)."""
        if dim is None:
            return _red.amin(self)
        if isinstance(dim, _TensorBase):
            return _pd.min_other(self, dim)
        return MinResult(*(_red.min_dim(self, dim, True) if keepdim else _red.min_dim(self, dim)))

    def any(self, dim: Any = None, keepdim: bool = False) -> "Tensor":
        """Whether some element is nonzero: over every dimension, along ``dim``
        (an int), or over ``dim`` (a sequence); bool (uint8 for uint8)
        (od::any, od::any.dim, od::any.dims)."""
        if isinstance(dim, int):
            return _red.any_dim(self, dim, True) if keepdim else _red.any_dim(self, dim)
        if dim is None and not keepdim:
            return _red.any_(self)
        return _red.any_dims(self, None if dim is None else list(dim), keepdim)

    def argmin(self, dim: Optional[int] = None, keepdim: bool = False) -> "Tensor":
        """int64 index of the minimum, over the flattened tensor or along ``dim`` (od::argmin)."""
        if keepdim:
            return _red.argmin(self, dim, True)
        return _red.argmin(self) if dim is None else _red.argmin(self, dim)

    # --- methods: linear algebra and nn ---------------------------------------------------------

    def matmul(self, other: "Tensor") -> "Tensor":
        """Matrix product with NumPy's matmul rules (od::matmul)."""
        return _linalg.matmul(self, other)

    def mm(self, mat2: "Tensor") -> "Tensor":
        """Product of two matrices (od::mm)."""
        return _mm(self, mat2)

    def bmm(self, mat2: "Tensor") -> "Tensor":
        """Batched product of (b, n, m) and (b, m, p) tensors (od::bmm)."""
        return _linalg.bmm(self, mat2)

    def softmax(self, dim: int, dtype: Any = None) -> "Tensor":
        """Softmax along ``dim``, computed in ``dtype`` if given (od::softmax.int)."""
        return _softmax.softmax(self, dim) if dtype is None else _softmax.softmax(self, dim, dtype)

    def log_softmax(self, dim: int, dtype: Any = None) -> "Tensor":
        """Log of softmax along ``dim``, computed in ``dtype`` if given (od::log_softmax.int)."""
        return _softmax.log_softmax(self, dim) if dtype is None else _softmax.log_softmax(self, dim, dtype)

    # --- methods: views and copies ---------------------------------------------------------------

    def view(self, *shape: Any) -> "Tensor":
        """A view with ``shape`` (varargs or one sequence; one -1 is inferred). RuntimeError
        if the strides do not allow a view: use reshape."""
        return _views.view(self, _shape_args(shape))

    def reshape(self, *shape: Any) -> "Tensor":
        """A view with ``shape`` when the strides allow it, else a copy."""
        return _views.reshape(self, _shape_args(shape))

    def expand(self, *sizes: Any) -> "Tensor":
        """A view with size-1 dims stretched to ``sizes`` (-1 keeps a size) (od::expand)."""
        return _views.expand(self, _shape_args(sizes))

    def repeat(self, *repeats: Any) -> "Tensor":
        """A new tensor of ``self`` tiled ``repeats`` times per dim (more
        repeats than dims add leading dims) (od::repeat)."""
        return _shape.repeat(self, _shape_args(repeats))

    def flip(self, *dims: Any) -> "Tensor":
        """A copy with the order of ``dims`` (ints, or one sequence) reversed (od::flip)."""
        return _shape.flip(self, _shape_args(dims))

    def index_select(self, dim: int, index: "Tensor") -> "Tensor":
        """The entries at ``index`` (a 0-d or 1-D int32/int64 tensor) along ``dim`` (od::index_select)."""
        return _indexing.index_select(self, dim, index)

    def gather(self, dim: int, index: "Tensor") -> "Tensor":
        """``self``'s entries at ``index`` along ``dim`` (an int tensor shaped like the result) (od::gather)."""
        return _indexing.gather(self, dim, index)

    def index_put(self, indices: Sequence[Optional["Tensor"]], values: "Tensor", accumulate: bool = False
                  ) -> "Tensor":
        """A copy of ``self`` with ``values`` (broadcast to the indexed shape)
        written, or added when ``accumulate`` (repeats add up), at the
        positions ``self[indices]`` reads: ``indices`` a list of int64/int32
        index tensors, bool/uint8 masks or None (a whole dim) (od::index_put)."""
        if accumulate:
            return _indexing.index_put(self, list(indices), values, True)
        return _indexing.index_put(self, list(indices), values)

    def scatter_add(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        """A copy of ``self`` with ``src``'s entries added at ``index`` along ``dim`` (od::scatter_add)."""
        return _indexing.scatter_add(self, dim, index, src)

    def scatter(self, dim: int, index: "Tensor", src: Any = None, *, value: Any = None) -> "Tensor":
        """A copy of ``self`` with ``src``'s entries (a tensor of self's dtype,
        od::scatter.src) or ``src`` / ``value`` (a number, od::scatter.value)
        written at ``index`` along ``dim``; which of repeated indices wins is
        unspecified, as in PyTorch."""
        if src is None:
            src = value
        if isinstance(src, _C.TensorBase):
            return _indexing.scatter_src(self, dim, index, src)
        return _indexing.scatter_value(self, dim, index, src)

    def scatter_reduce(self, dim: int, index: "Tensor", src: "Tensor", reduce: str, *,
                       include_self: bool = True) -> "Tensor":
        """A copy of ``self`` with ``src``'s entries reduced ("sum", "prod",
        "mean", "amax" or "amin") into the positions ``index`` names along
        ``dim``, self's own value taking part unless ``include_self`` is False
        (od::scatter_reduce.two)."""
        return _indexing.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    def masked_scatter(self, mask: "Tensor", source: "Tensor") -> "Tensor":
        """A copy of ``self`` (broadcast with the bool ``mask``) with
        ``source``'s first elements, in C order, where ``mask`` is True
        (od::masked_scatter). RuntimeError for a non-bool mask, a source of
        another dtype, or fewer source elements than set mask entries."""
        return _indexing.masked_scatter(self, mask, source)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> "Tensor":
        """A view of the diagonal ``offset`` above the main one of dims ``dim1``
        and ``dim2``, as the last dim (od::diagonal)."""
        return _views.diagonal(self, offset, dim1, dim2)

    def as_strided(self, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int] = None
                   ) -> "Tensor":
        """A view of this tensor's storage with ``size``, ``stride`` (in
        elements) and ``storage_offset`` (in elements from the storage's
        start; default this tensor's), od::as_strided. RuntimeError as
        PyTorch's for mismatched lengths, negative sizes or strides, a
        negative offset, or a geometry past the end of the storage."""
        if storage_offset is None:
            return _views.as_strided(self, size, stride)
        return _views.as_strided(self, size, stride, storage_offset)

    def resize_(self, *size: Any, memory_format: Any = None) -> "Tensor":
        """Gives this tensor the sizes ``size`` (ints, or one sequence of
        them) with contiguous strides, in place, keeping its storage offset;
        its storage grows (values kept) when the new elements reach past it
        and stays as it is otherwise (``od::resize_``). Returns self.
        RuntimeError for a negative size, a tensor that requires grad, or a
        storage a NumPy array owns (from_numpy, from_dlpack), as PyTorch.
        Arrays numpy() gave before keep the old values when the storage
        grows (PyTorch refuses that resize instead)."""
        if memory_format is None:
            return _views.resize_(self, _shape_args(size))
        return _views.resize_(self, _shape_args(size), memory_format=memory_format)

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        """A view with ``dim0`` and ``dim1`` swapped (od::transpose.int)."""
        return _views.transpose(self, dim0, dim1)

    def t(self) -> "Tensor":
        """The transpose of a matrix (tensors of fewer than 2 dims are
        returned as views of themselves; od::t). RuntimeError beyond 2 dims."""
        return _views.t(self)

    def permute(self, *dims: Any) -> "Tensor":
        """A view with the dims reordered (od::permute)."""
        return _views.permute(self, _shape_args(dims))

    def squeeze(self, dim: Optional[int] = None) -> "Tensor":
        """A view without size-1 dims (all, or just ``dim``) (od::squeeze / od::squeeze.dim)."""
        return _views.squeeze(self) if dim is None else _views.squeeze_dim(self, dim)

    def unsqueeze(self, dim: int) -> "Tensor":
        """A view with a size-1 dim inserted at ``dim`` (od::unsqueeze)."""
        return _views.unsqueeze(self, dim)

    def transpose_(self, dim0: int, dim1: int) -> "Tensor":
        """Swaps ``dim0`` and ``dim1`` of self in place: self's sizes and strides
        change, its memory does not (``od::transpose_``; IndexError for a dim out of range)."""
        return _views.transpose_(self, dim0, dim1)

    def t_(self) -> "Tensor":
        """Transposes a tensor of at most 2 dims in place (``od::t_``; RuntimeError for more dims)."""
        return _views.t_(self)

    def unsqueeze_(self, dim: int) -> "Tensor":
        """Inserts a size-1 dim at ``dim`` in place (``od::unsqueeze_``)."""
        return _views.unsqueeze_(self, dim)

    def squeeze_(self, dim: Any = None) -> "Tensor":
        """Removes size-1 dims in place: all (``dim`` None, ``od::squeeze_``), one
        (an int, ``od::squeeze_.dim``) or those listed (a tuple or list, ``od::squeeze_.dims``)."""
        if dim is None:
            return _views.squeeze_(self)
        if isinstance(dim, (tuple, list)):
            return _views.squeeze_dims_(self, list(dim))
        return _views.squeeze_dim_(self, dim)

    def as_strided_(self, size: Sequence[int], stride: Sequence[int], storage_offset: Optional[int] = None
                    ) -> "Tensor":
        """Gives self the sizes ``size``, strides ``stride`` (in elements) and
        ``storage_offset`` (default self's) in place over its storage
        (``od::as_strided_``); RuntimeError as as_strided for a geometry it refuses."""
        if storage_offset is None:
            return _views.as_strided_(self, size, stride)
        return _views.as_strided_(self, size, stride, storage_offset)

    def select(self, dim: int, index: int) -> "Tensor":
        """The view at ``index`` along ``dim``, which is removed (od::select.int)."""
        return _views.select(self, dim, index)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        """Dims ``start_dim`` to ``end_dim`` (inclusive) merged into one, a view when possible (od::flatten.using_ints)."""
        return _views.flatten(self, start_dim, end_dim)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> "Tensor":
        """An uninitialised tensor of ``size`` (varargs or a sequence) with
        self's dtype and device unless given (od::empty.memory_format): how
        fake impls make outputs on the inputs' device."""
        dtype = _dtype_arg("new_empty", dtype)
        out = _fac.empty(_shape_args(size), dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device)
        return out.requires_grad_() if requires_grad else out

    def clone(self) -> "Tensor":
        """A copy laid out as ``self`` is (od::clone with memory_format=preserve_format)."""
        return _copy.clone(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> "Tensor":
        """``copy.deepcopy(t)``: a leaf with its own memory (``clone()``, made
        without recording), the same class, ``requires_grad``, a deep copy of
        ``grad``, and deep copies of the object's ``__slots__`` and
        attributes, once per object in ``memo``. A subclass with data of its
        own is made by its ``new_empty([])`` and given a copy of the data, as
        PyTorch's (which must give the same class); a wrapper subclass's copy
        goes through its ``__torch_function__`` / ``__torch_dispatch__``
        (clone), which must give the same class. Raises RuntimeError for a tensor that
        is not a graph leaf, or if the copy is of another class. Unlike
        PyTorch, which copies storages (so that views copied together stay
        views of one copy), each tensor is copied on its own, C-contiguous.
        PyTorch: Tensor.__deepcopy__."""
        if not graph.is_leaf(self):
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.")
        if id(self) in memo:
            result: Tensor = memo[id(self)]
            return result
        with _no_grad():
            if type(self) is not Tensor and self._has_storage():
                # PyTorch makes the copy with new_empty([]) and gives it a copy of the data (set_).
                new = self.new_empty([])
                if type(new) is not type(self):
                    raise RuntimeError(
                        "The default implementation of __deepcopy__() for non-wrapper subclasses only works for "
                        "subclass types that implement new_empty() and for which that function returns another "
                        f"instance of the same subclass (new_empty gave {type(new).__name__} for "
                        f"{type(self).__name__}). Implement new_empty() for your subclass or override __deepcopy__().")
                data = _copy.clone(self.as_subclass(Tensor))
                _C._functionalize_unsafe_set(new, data)
                _C._set_sizes_and_strides(new, data.shape, data.stride(), data.storage_offset())
            else:
                new = self.clone()
            if type(new) is not type(self):
                raise RuntimeError(f"The default implementation of __deepcopy__() copies with clone(), which gave "
                                   f"{type(new).__name__} for {type(self).__name__}: make clone() return the same "
                                   f"class, or override __deepcopy__()")
            if self.requires_grad:
                new.requires_grad_()
            if self.grad is not None:
                new.grad = copy.deepcopy(self.grad, memo)
            for slot in copyreg._slotnames(type(self)):  # type: ignore[attr-defined]
                if hasattr(self, slot):
                    setattr(new, slot, copy.deepcopy(getattr(self, slot), memo))
            new.__dict__ = copy.deepcopy(self.__dict__, memo)
        memo[id(self)] = new
        return new

    def contiguous(self) -> "Tensor":
        """Self if C-contiguous, else a contiguous copy (od::contiguous)."""
        return _copy.contiguous(self)

    def to(self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False,
           non_blocking: bool = False) -> "Tensor":
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``
        or keywords: self when nothing changes (and copy is False), else a
        converted copy (od::to.dtype_layout, which calls od::_to_copy)."""
        dtype = _dtype_arg("to", dtype)
        for position, arg in enumerate(args):
            if arg is None and position < 2:  # to(None), to(device, None): PyTorch's device and dtype default None
                continue
            if isinstance(arg, _C.TensorBase):
                dtype, device = arg.dtype, arg.device
            elif isinstance(arg, _C.dtype):
                dtype = arg
            elif isinstance(arg, (str, _C.device)):
                device = arg
            else:
                raise TypeError(f"to() received an invalid argument {arg!r}: expected a dtype, a device or a tensor")
        return _copy.to_dtype_layout(self, dtype=dtype, device=device, non_blocking=non_blocking, copy=copy)


    # --- PyTorch's everyday conveniences (issue 13 item 10; each a thin form of an operator above) ---

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> "Tensor":
        """Zeros of ``size`` (varargs or a sequence), with self's dtype and device unless given (od::zeros)."""
        dtype = _dtype_arg("new_zeros", dtype)
        out = _fac.zeros(_shape_args(size), dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device)
        return out.requires_grad_() if requires_grad else out

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> "Tensor":
        """Ones of ``size`` (varargs or a sequence), with self's dtype and device unless given (od::ones)."""
        dtype = _dtype_arg("new_ones", dtype)
        out = _fac.ones(_shape_args(size), dtype=self.dtype if dtype is None else dtype,
                        device=self.device if device is None else device)
        return out.requires_grad_() if requires_grad else out

    def new_full(self, size: Sequence[int], fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> "Tensor":
        """``fill_value`` in a tensor of ``size`` (a sequence), with self's dtype
        and device unless given (od::full). TypeError if ``size`` is not a sequence."""
        dtype = _dtype_arg("new_full", dtype)
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
        out = _fac.full(list(size), fill_value, dtype=self.dtype if dtype is None else dtype,
                        device=self.device if device is None else device)
        return out.requires_grad_() if requires_grad else out

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False
                   ) -> "Tensor":
        """A copy of ``data`` (as for opdispatch.tensor) with self's dtype and
        device unless given (integer data in a float tensor's new_tensor is
        float, as in PyTorch). Copying a tensor warns UserWarning, as PyTorch:
        use ``src.detach().clone()``."""
        dtype = _dtype_arg("new_tensor", dtype)
        from ._functional import tensor

        if isinstance(data, Tensor):
            warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() "
                          "or sourceTensor.detach().clone().requires_grad_(True), rather than "
                          "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
            data = data.detach()
        return tensor(data, dtype=self.dtype if dtype is None else dtype,
                      device=self.device if device is None else device, requires_grad=requires_grad)

    def float(self) -> "Tensor":
        """``self.to(float32)``: self when it already is."""
        return self.to(_C.float32)

    def double(self) -> "Tensor":
        """``self.to(float64)``."""
        return self.to(_C.float64)

    def half(self) -> "Tensor":
        """``self.to(float16)``."""
        return self.to(_C.float16)

    def long(self) -> "Tensor":
        """``self.to(int64)`` (floats truncate toward zero)."""
        return self.to(_C.int64)

    def int(self) -> "Tensor":
        """``self.to(int32)``."""
        return self.to(_C.int32)

    def short(self) -> "Tensor":
        """``self.to(int16)``."""
        return self.to(_C.int16)

    def char(self) -> "Tensor":
        """``self.to(int8)``."""
        return self.to(_C.int8)

    def byte(self) -> "Tensor":
        """``self.to(uint8)``."""
        return self.to(_C.uint8)

    def bool(self) -> "Tensor":
        """``self.to(bool)`` (nonzero is True)."""
        return self.to(_C.bool)

    def cfloat(self) -> "Tensor":
        """``self.to(complex64)``."""
        return self.to(_C.complex64)

    def cdouble(self) -> "Tensor":
        """``self.to(complex128)``."""
        return self.to(_C.complex128)

    def cpu(self) -> "Tensor":
        """``self.to("cpu")``: self when already on cpu."""
        return self.to("cpu")

    def type_as(self, other: "Tensor") -> "Tensor":
        """``self.to(other.dtype)``."""
        return self.to(other.dtype)

    def view_as(self, other: "Tensor") -> "Tensor":
        """``self.view(other.shape)``."""
        return _views.view(self, list(other.shape))

    def reshape_as(self, other: "Tensor") -> "Tensor":
        """``self.reshape(other.shape)``."""
        return _views.reshape(self, list(other.shape))

    def expand_as(self, other: "Tensor") -> "Tensor":
        """``self.expand(other.shape)``."""
        return _views.expand(self, list(other.shape))

    @property
    def T(self) -> "Tensor":
        """The view with the dims reversed (od::permute). Warns UserWarning
        unless self is 2-D, as PyTorch (which deprecates other ranks)."""
        if self.ndim != 2:
            warnings.warn("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is "
                          "deprecated; use `x.mT` to transpose batches of matrices or x.permute(...) to reverse "
                          "the dimensions.", UserWarning, stacklevel=2)
        return _views.permute(self, list(range(self.ndim - 1, -1, -1)))

    @property
    def mT(self) -> "Tensor":
        """The view with the last two dims swapped (od::transpose.int).
        RuntimeError for fewer than 2 dims."""
        if self.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. Got "
                               f"{self.ndim}-D tensor.")
        return _views.transpose(self, -2, -1)

    @property
    def layout(self) -> _layout.layout:
        """Always :data:`opdispatch.strided`."""
        return _layout.strided

    def element_size(self) -> builtins.int:
        """Bytes per element (``dtype.itemsize``)."""
        return self.dtype.itemsize

    @property
    def itemsize(self) -> builtins.int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> builtins.int:
        """Bytes the elements take (``numel() * itemsize``; a meta tensor's too)."""
        return self.numel() * self.dtype.itemsize

    def is_floating_point(self) -> builtins.bool:
        """Whether the dtype is a floating-point one."""
        return self.dtype.is_floating_point

    def is_complex(self) -> builtins.bool:
        """Whether the dtype is a complex one."""
        return self.dtype.is_complex


_DEFAULT_TORCH_FUNCTION = Tensor.__torch_function__.__func__  # type: ignore[attr-defined]


def _convert(ret: Any, cls: type) -> Any:
    """``ret`` with its tensors (also in tuples and lists) as instances of
    ``cls``. PyTorch: torch._tensor._convert."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        return type(ret)(*items) if hasattr(type(ret), "_fields") else type(ret)(items)
    return ret


class MaxResult(collections.namedtuple("MaxResult", ["values", "indices"])):
    """The (values, indices) result of ``Tensor.max(dim)``."""


class MinResult(collections.namedtuple("MinResult", ["values", "indices"])):
    """The (values, indices) result of ``Tensor.min(dim)``."""


class SortResult(collections.namedtuple("SortResult", ["values", "indices"])):
    """The (values, indices) result of ``Tensor.sort``."""


class TopkResult(collections.namedtuple("TopkResult", ["values", "indices"])):
    """The (values, indices) result of ``Tensor.topk``."""
def _apply_slicing(self: Tensor, index: Any, skip_full_slices: bool = True) -> tuple[Tensor, list[Optional[Tensor]]]:
    """The view of ``self`` that the basic items of ``index`` (ints, slices,
    None, ...) select, and the advanced items (index tensors, masks, lists)
    as the index list of od::index / od::index_put_ over that view (None at
    dims they do not index; empty if there are none). The one index parser of
    __getitem__ and __setitem__. A slice's missing start is 0 and missing
    stop int64's maximum; a slice of a whole dim (start 0, step 1, stop at
    or past its size) makes no od::slice.Tensor call unless
    ``skip_full_slices`` is false (PyTorch's getitem of one slice).
    PyTorch: applySlicing and applySlice (TensorIndexing.h)."""
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(_list_index(item) for item in items)
    for item in items:
        if not (item is None or item is Ellipsis or isinstance(item, (slice, _TensorBase, np.ndarray, bool, np.bool_))
                or _is_int(item)):
            raise TypeError(f"only integers, slices (`:`), ellipsis (`...`), None, lists of integers and "
                            f"integer or boolean tensors are valid indices, got {type(item).__name__}")
    used = sum(_dims_indexed(item) for item in items if item is not None and item is not Ellipsis)
    if used > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim}")
    if sum(1 for item in items if item is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    result, dim = self, 0
    advanced: list[Optional[Tensor]] = []
    for item in items:
        if item is Ellipsis:
            dim += self.ndim - used
        elif item is None:
            result = _views.unsqueeze(result, dim)
            dim += 1
        elif isinstance(item, slice):
            step = 1 if item.step is None else item.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            start = 0 if item.start is None else item.start
            stop = _INT64_MAX if item.stop is None else item.stop
            if not (skip_full_slices and step == 1 and start == 0 and stop >= result.shape[dim]):
                result = _views.slice_(result, dim, start, stop, step)
            dim += 1
        elif isinstance(item, (bool, np.bool_)):
            # A new dim of size 1 that an index tensor of one 0 (True) or of none (False) indexes.
            # PyTorch: applySlicing and boolToIndexingTensor (TensorIndexing.h).
            result = _views.unsqueeze(result, dim)
            advanced.extend([None] * (dim - len(advanced)))
            chosen = _fac.empty([1 if item else 0], dtype=_C.int64)
            advanced.append(_copy.fill_(chosen, 0) if item else chosen)
            dim += 1
        elif isinstance(item, (_TensorBase, np.ndarray)):
            advanced.extend([None] * (dim - len(advanced)))
            # A list's tensor is made here, in index order, and lifted as PyTorch's (an operator modes see).
            advanced.append(_views.lift_fresh(_numpy.tensor(item)) if isinstance(item, np.ndarray) else item)  # type: ignore[arg-type]  # a TensorBase is a Tensor
            dim += _dims_indexed(item)
        else:
            result = _views.select(result, dim, int(item))
    return result, advanced


def _strip_leading_ones(shape: Sequence[int]) -> list[int]:
    """``shape`` without its leading 1-sized dims (how __setitem__ fits a
    value of shape [1, 1, n] to a part of shape [n]). PyTorch: slicePrefix1sDims."""
    first = next((i for i, size in enumerate(shape) if size != 1), len(shape))
    return list(shape[first:])


def _value_to_tensor(self: Tensor, value: Any) -> Tensor:
    """The value of ``self[index] = value`` as a tensor: a tensor as it is; a
    bool, int, float or complex (Python's or NumPy's) as a 0-d tensor of
    self's dtype, passed through od::lift_fresh. TypeError for anything else,
    RuntimeError for a number self's dtype cannot hold, ValueError for an int
    beyond int64. PyTorch: valueToTensor (python_variable_indexing.cpp) and
    c10::checked_convert."""
    if isinstance(value, _TensorBase):
        return value  # type: ignore[return-value]  # a TensorBase is a Tensor
    if not isinstance(value, numbers.Number) or isinstance(value, np.ndarray):
        kind = type(value)
        name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        raise TypeError(f"can't assign a {name} to a tensor of dtype {self.dtype} (Tensor.__setitem__ takes a "
                        f"Tensor, a bool, an int, a float or a complex)")
    if isinstance(value, numbers.Integral) and not -(2**63) <= int(value) < 2**63:
        raise ValueError("Overflow when unpacking long long")
    np_dtype = self.dtype.to_numpy()
    if _overflows(value, np_dtype):
        cpp = f"{np_dtype.name}_t" if np_dtype.kind in "iu" else {"float32": "float"}.get(np_dtype.name, np_dtype.name)
        raise RuntimeError(f"value cannot be converted to type {cpp} without overflow")
    if np_dtype.kind not in "cb" and isinstance(value, numbers.Complex):
        value = value.real
    if np_dtype.kind == "u" and value < 0:
        value += np.iinfo(np_dtype).max + 1  # a negative int wraps, as C++'s conversion
    with np.errstate(over="ignore"):
        scalar = np.asarray(value).astype(np_dtype)
    return _views.lift_fresh(_numpy.tensor(scalar))


def _overflows(value: Any, np_dtype: np.dtype) -> bool:
    """Whether ``value`` (a number) overflows ``np_dtype``: a complex with an
    imaginary part for a real dtype, a NaN or out-of-range number for an
    integer dtype (an unsigned one takes negative values down to -max), an
    out-of-range finite number for float32. PyTorch: c10::overflows."""
    if np_dtype.kind in "cb":
        return False
    if isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real):
        if value.imag != 0:
            return True
        value = value.real
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        low = -int(info.max) if np_dtype.kind == "u" else int(info.min)
        return bool(np.isnan(value)) or not low <= value <= int(info.max)
    return np_dtype == np.float32 and bool(np.isfinite(value)) and abs(value) > float(np.finfo(np.float32).max)


def _list_index(item: Any) -> Any:
    """A list index as the array of the tensor PyTorch makes of it (int64;
    bool for bools), anything else as it is."""
    if isinstance(item, list):
        values = np.asarray(item)
        return values if values.dtype.kind in "bi" else values.astype(np.int64)
    return item


def _dims_indexed(item: Any) -> int:
    """How many dims an index item consumes: a mask as many as it has, a bool none (it adds the dim it
    indexes), anything else one."""
    if isinstance(item, (bool, np.bool_)):
        return 0
    if isinstance(item, _TensorBase) and item.dtype in (_C.bool, _C.uint8):
        return item.ndim
    if isinstance(item, np.ndarray) and item.dtype.kind == "b":
        return item.ndim
    return 1


def _is_int(x: Any) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, _C.TensorBase))


_ALL = slice(None)
_INT64_MAX = 2**63 - 1


def _shape_args(args: Sequence[Any]) -> list[int]:
    """Sizes given as varargs (``view(2, 3)``) or as one sequence (``view((2, 3))``)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        seq = args[0]
        if type(seq) is tuple or type(seq) is list:
            return list(seq)
        # (A subclass: copied by list.copy / tuple slicing, which read the items held, so its __len__ sizes nothing.)
        return list.copy(seq) if isinstance(seq, list) else list(tuple.__getitem__(seq, _ALL))
    return list(args)


def _dtype_arg(function: str, dtype: Any) -> Any:
    """``dtype`` as a public function or method ``function`` takes it: None or
    an opdispatch.dtype, else _C.ArgumentTypeError (a TypeError) naming
    ``function``: an int or a str is refused although the od operators take
    a ScalarType's int, as PyTorch's Python argument parser refuses them
    above torch.ops (PyTorch: "argument 'dtype' must be torch.dtype")."""
    if dtype is not None and not isinstance(dtype, _C.dtype):
        raise _C.ArgumentTypeError(f"{function}(): argument 'dtype' must be opdispatch.dtype, not {type(dtype).__name__}")
    return dtype


def _dims(dim: Any) -> list[int]:
    return [dim] if isinstance(dim, int) else list(dim)


# Note [Tensor methods in the function layer]
# Every public method, operator method (``__add__``) and property getter of
# Tensor is an _C._Overridable (Note [The function layer] in
# csrc/python/TorchFunction.cpp), made here from the function the class body
# states. _FAST_PATHS names what the hottest of them amount to on plain
# tensors passed positionally (the operator their body calls), which the
# _Overridable calls directly. Not wrapped: the subclass protocol
# (__torch_function__, __torch_dispatch__, as_subclass, _make_*), and the
# metadata read in C by TensorBase (shape, dtype, device, size(), ...), which
# kernels read (README: where opdispatch differs).
_FAST_PATHS: dict[str, tuple[Callable[..., Any], int]] = {
    "__add__": (_add, 2), "__sub__": (_sub, 2), "__mul__": (_mul, 2), "add": (_add, 2), "sub": (_sub, 2),
    "mm": (_mm, 2), "relu": (_relu, 1), "sin": (_sin, 1), "sum": (_red.sum_, 1), "neg": (_ew.neg, 1),
    "__neg__": (_ew.neg, 1), "exp": (_ew.exp, 1), "cos": (_ew.cos, 1), "tanh": (_ew.tanh, 1),
    "sigmoid": (_ew.sigmoid, 1), "clone": (_copy.clone, 1), "matmul": (_linalg.matmul, 2),
    "__matmul__": (_linalg.matmul, 2), "bmm": (_linalg.bmm, 2),
}
# The public function PyTorch's operator methods hand to handlers (``x + y`` is Tensor.add).
_PUBLIC_NAMES = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div", "__pow__": "pow",
    "__matmul__": "matmul", "__neg__": "neg", "__abs__": "abs", "__ne__": "ne", "__lt__": "lt", "__le__": "le",
    "__gt__": "gt", "__ge__": "ge", "__iadd__": "add_", "__isub__": "sub_", "__imul__": "mul_",
    "__itruediv__": "div_", "__pos__": "positive", "__mod__": "remainder", "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
}
_NOT_OVERRIDABLE = frozenset({"__init_subclass__", "__torch_function__", "__torch_dispatch__", "as_subclass"})


def _install_function_layer(cls: type) -> None:
    """Makes the public methods of ``cls`` and of the method mixins it inherits (PointwiseMethods)
    _Overridables (Note [Tensor methods in the function layer])."""
    made: dict[int, Any] = {}  # one _Overridable per function (``__radd__ = __add__``)
    for owner in (PointwiseMethods, cls):
        for name, value in list(vars(owner).items()):
            is_public = not name.startswith("_") or (name.startswith("__") and name.endswith("__"))
            if not is_public or name in _NOT_OVERRIDABLE:
                continue
            if isinstance(value, property):
                setattr(owner, name, overrides.overridable_property(value))
            elif isinstance(value, types.FunctionType):
                if id(value) not in made:
                    fast, nargs = _FAST_PATHS.get(name, (None, -1))
                    made[id(value)] = overrides.overridable(fast, nargs)(value)
                setattr(owner, name, made[id(value)])
    for name, public in _PUBLIC_NAMES.items():
        getattr(cls, name)._public = getattr(cls, public)


_install_function_layer(Tensor)
_C._set_tensor_class(Tensor)
