# Hand-corrected from pybind11-stubgen's output; `python -m mypy.stubtest opdispatch._C
# --allowlist tests/typing/stubtest_allowlist.txt` (.ci/lint.sh) keeps it true:
# a binding added or changed in csrc/python needs its line here.
"""
opdispatch's C++ core: dispatcher, tensors, schemas.
"""
from __future__ import annotations

import builtins
import collections.abc
import contextvars
import numpy
import numpy.typing
import types
import typing

import numpy

import opdispatch
from numpy.typing import NDArray
from typing_extensions import Self, TypeVar, disjoint_base

from opdispatch._ops import Tag as Tag
from opdispatch.utils._python_dispatch import TorchDispatchMode

# What the factories accept (sizes as an int or a sequence of ints; a device
# object or its name).
_ShapeLike: typing.TypeAlias = typing.SupportsIndex | collections.abc.Sequence[typing.SupportsIndex]
_DeviceLike: typing.TypeAlias = device | str
_TensorT = typing.TypeVar("_TensorT", bound=opdispatch.Tensor)
# What calling an operator object returns: Any unless the holder of the object
# knows its schema's returns (the built-in `od` operators give Tensor).
_ReturnT_co = TypeVar("_ReturnT_co", covariant=True, default=typing.Any)
@typing.type_check_only
class _pybind11_type(type):
    """The metaclass of pybind11's classes (pybind11_builtins.pybind11_type)."""

class dtype(metaclass=_pybind11_type):
    """
    The element type of a tensor (opdispatch.float32, ...).
    """
    def __reduce__(self) -> str:
        ...
    def __repr__(self) -> str:
        ...
    def to_numpy(self) -> numpy.dtype[typing.Any]:
        """
        The equivalent numpy.dtype.
        """
    @property
    def is_complex(self) -> builtins.bool:
        ...
    @property
    def is_floating_point(self) -> builtins.bool:
        ...
    @property
    def itemsize(self) -> int:
        ...
    @property
    def name(self) -> str:
        ...
class device(metaclass=_pybind11_type):
    """
    A device: 'cpu', 'meta', 'cuda[:i]', 'xpu', 'privateuseone', ... (see Device.h).
    """
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __hash__(self) -> int:
        ...
    @typing.overload
    def __init__(self, type: str) -> None:
        ...
    @typing.overload
    def __init__(self, type: device) -> None:
        ...
    @typing.overload
    def __init__(self, type: str, index: typing.SupportsIndex) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def __str__(self) -> str:
        ...
    @property
    def index(self) -> int | None:
        ...
    @property
    def type(self) -> str:
        ...
@disjoint_base
class TensorBase:
    """
    The C++ tensor (a TensorImpl); opdispatch.Tensor adds the Python methods.
    """
    def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> Self:
        """
        Create and return a new object.  See help(type) for accurate signature.
        """
    def _bump_version(self) -> None:
        """
        Records an in-place modification.
        """
    def _storage_nbytes(self) -> int | None:
        """
        The size in bytes of the tensor's storage; None if it has none (meta tensors, wrapper subclasses, fake tensors). PyTorch: Tensor.untyped_storage().nbytes().
        """
    def _has_storage(self) -> builtins.bool:
        """
        Whether the tensor has data (meta tensors, wrapper subclasses and fake tensors have none).
        """
    def _is_same(self, other: object, /) -> builtins.bool:
        """
        Whether both objects wrap the same TensorImpl.
        """
    def _shares_memory(self, other: TensorBase, /) -> builtins.bool:
        """
        Whether writing through one tensor may change the other: the same tensor, a view of it (also on meta), or overlapping memory (TensorImpl::sharesMemoryWith).
        """
    def _shares_storage(self, other: TensorBase, /) -> builtins.bool:
        """
        Whether both tensors use the same storage.
        """
    def data_ptr(self) -> int:
        """
        Address of element 0 (raises for meta tensors).
        """
    def dim(self) -> int:
        """
        Number of dimensions.
        """
    def is_contiguous(self) -> builtins.bool:
        """
        Whether the layout is C-contiguous.
        """
    def numel(self) -> int:
        """
        Number of elements.
        """
    def numpy(self, *, force: builtins.bool = False) -> NDArray[typing.Any]:
        """
        numpy(*, force=False): a NumPy array sharing this tensor's memory (cpu only). Raises for a tensor that requires grad while grad mode is enabled, unless force=True (as PyTorch).
        """
    @typing.overload
    def size(self, dim: None = None, /) -> tuple[int, ...]: ...
    @typing.overload
    def size(self, dim: typing.SupportsIndex, /) -> int:
        """
        size(dim=None): the sizes, or one of them.
        """
    def storage_offset(self) -> int:
        """
        Offset of element 0 in the storage, in elements.
        """
    @typing.overload
    def stride(self, dim: None = None, /) -> tuple[int, ...]: ...
    @typing.overload
    def stride(self, dim: typing.SupportsIndex, /) -> int:
        """
        stride(dim=None): the strides in elements, or one of them.
        """
    @property
    def shape(self) -> tuple[int, ...]:
        """The sizes, a tuple of ints."""
    @property
    def dtype(self) -> dtype:
        """The element type (opdispatch.float32, ...)."""
    @property
    def device(self) -> device:
        """The device (opdispatch.device)."""
    @property
    def ndim(self) -> int:
        """Number of dimensions."""
    @property
    def requires_grad(self) -> builtins.bool: ...
    @requires_grad.setter
    def requires_grad(self, value: builtins.bool) -> None: ...
    @property
    def _version(self) -> int:
        """The in-place modification counter (shared with views)."""
    @property
    def is_meta(self) -> builtins.bool:
        """Whether the tensor is on the meta device (no data)."""
    @property
    def _autograd_meta(self) -> _AutogradMeta | None:
        """Autograd state owned by the Python layer."""
    @_autograd_meta.setter
    def _autograd_meta(self, value: _AutogradMeta | None) -> None: ...
@typing.final
class _AutogradMeta:
    """
    _AutogradMeta(grad_fn=None, output_nr=0): the autograd state of one tensor (its TensorBase._autograd_meta). PyTorch: torch::autograd::AutogradMeta.
    """
    def __new__(cls, grad_fn: object = None, output_nr: typing.SupportsIndex = 0) -> Self: ...
    grad: typing.Any
    """The accumulated gradient, or None."""
    grad_fn: typing.Any
    """The node that computed the tensor (None: a leaf)."""
    grad_accumulator: typing.Any
    view_of: typing.Any
    view_base: typing.Any
    output_nr: int
    """Which output of grad_fn the tensor is."""
    retains_grad: builtins.bool
    """Whether a non-leaf keeps .grad."""
@typing.final
class _RegistrationMethod:
    """
    _RegistrationMethod(func, kind, site): Library.define (kind 'define') or Library.impl ('impl') as a method descriptor running the Python function `func` except for plain calls, which it makes from C; `site` is the ContextVar of _registration_site() blocks (Note [Registration methods]).
    """
    def __new__(cls, func: collections.abc.Callable[..., typing.Any], kind: str, site: contextvars.ContextVar[typing.Any]) -> Self:
        """
        Create and return a new object.  See help(type) for accurate signature.
        """
    def __call__(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Call self as a function.
        """
    def __get__(self, instance: typing.Any, owner: type | None = None, /) -> typing.Any:
        """
        Return an attribute of instance, which is of type owner.
        """
@typing.final
class _PlainAutogradKernel:
    """
    _PlainAutogradKernel(run_below, formula, node_class, positions, layout, needs_table, setup, keyword_only, kwarg_defaults, full_inputs, view_name): the Autograd kernel (keyset, *args, **kwargs) of an operator with a plain schema and a formula; see opdispatch._library.autograd._plain_kernel for the arguments.
    """
    def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> Self:
        """
        Create and return a new object.  See help(type) for accurate signature.
        """
    def __call__(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Call self as a function.
        """
@typing.final
class _NumpyKernel:
    """
    _NumpyKernel(fn, fallback, nargs=-1, ndim=-1, dtypes=0, contiguous=False): a CPU kernel that runs fn through _call_numpy when called with exactly nargs positional arguments and no keywords (-1: any call) whose tensors all have ndim dimensions (-1: any), are all C-contiguous if contiguous is true (an elementwise operator's output follows a non-contiguous input's layout, which the fallback lays out: Note [Output strides] in _builtins/_output_strides.py), and whose operands' dtypes fit dtypes (0: any; 1: one dtype for every tensor and no Python number of a higher category; 2: as 1, and that dtype floating or complex: Note [Promotion on the fast path]), and calls fallback, the same kernel written in Python, for every other call and when fn raises ValueError or OverflowError (Note [NumPy kernels]). TypeError if fn or fallback is not callable; ValueError if nargs or ndim is below -1 or dtypes is not 0, 1 or 2.
    """
    __name__: str
    @property
    def fn(self) -> collections.abc.Callable[..., typing.Any]:
        """
        The NumPy function of the fast path.
        """
    @property
    def __wrapped__(self) -> collections.abc.Callable[..., typing.Any]:
        """
        The kernel written in Python, which takes every other call.
        """
    def __new__(cls, fn: collections.abc.Callable[..., typing.Any], fallback: collections.abc.Callable[..., typing.Any], nargs: int = -1, ndim: int = -1, dtypes: int = 0, contiguous: builtins.bool = False) -> Self:
        """
        Create and return a new object.  See help(type) for accurate signature.
        """
    def __call__(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Call self as a function.
        """
class Type(metaclass=_pybind11_type):
    """
    A schema type (PyTorch: torch._C.Type).
    """
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __hash__(self) -> int:
        ...
    def __repr__(self) -> builtins.str:
        ...
    def __str__(self) -> builtins.str:
        ...
    def containedTypes(self) -> list[Type]:
        """
        The types this one is built from (element, members, key and value).
        """
    def isSubtypeOf(self, other: Type) -> builtins.bool:
        """
        Whether every value of this type is a value of `other`.
        """
    def kind(self) -> builtins.str:
        """
        PyTorch's kind name: 'TensorType', 'IntType', 'OptionalType', ...
        """
    def str(self) -> builtins.str:
        """
        The type as written in a schema: 'Tensor?', 'int[]', 'SymInt'.
        """
    @property
    def annotation_str(self) -> builtins.str:
        """
        The type as a Python annotation: 'Optional[Tensor]', 'List[int]'.
        """
class TensorType(Type):
    @staticmethod
    def get() -> TensorType:
        """
        The (only) type of this kind.
        """
class IntType(Type):
    @staticmethod
    def get() -> IntType:
        """
        The (only) type of this kind.
        """
class SymIntType(Type):
    @staticmethod
    def get() -> SymIntType:
        """
        The (only) type of this kind.
        """
class FloatType(Type):
    @staticmethod
    def get() -> FloatType:
        """
        The (only) type of this kind.
        """
class ComplexType(Type):
    @staticmethod
    def get() -> ComplexType:
        """
        The (only) type of this kind.
        """
class BoolType(Type):
    @staticmethod
    def get() -> BoolType:
        """
        The (only) type of this kind.
        """
class SymBoolType(Type):
    @staticmethod
    def get() -> SymBoolType:
        """
        The (only) type of this kind.
        """
class StringType(Type):
    @staticmethod
    def get() -> StringType:
        """
        The (only) type of this kind.
        """
class NumberType(Type):
    @staticmethod
    def get() -> NumberType:
        """
        The (only) type of this kind.
        """
class DeviceObjType(Type):
    @staticmethod
    def get() -> DeviceObjType:
        """
        The (only) type of this kind.
        """
class StreamObjType(Type):
    @staticmethod
    def get() -> StreamObjType:
        """
        The (only) type of this kind.
        """
class NoneType(Type):
    @staticmethod
    def get() -> NoneType:
        """
        The (only) type of this kind.
        """
class AnyType(Type):
    @staticmethod
    def get() -> AnyType:
        """
        The (only) type of this kind.
        """
class OptionalType(Type):
    @staticmethod
    def ofTensor() -> OptionalType:
        ...
    def __init__(self, element: Type) -> None:
        """
        `element?`. Raises ValueError for NoneType.
        """
    def getElementType(self) -> Type:
        """
        The element type.
        """
class ListType(Type):
    @staticmethod
    def ofBools() -> ListType:
        ...
    @staticmethod
    def ofComplexDoubles() -> ListType:
        ...
    @staticmethod
    def ofFloats() -> ListType:
        ...
    @staticmethod
    def ofInts() -> ListType:
        ...
    @staticmethod
    def ofStrings() -> ListType:
        ...
    @staticmethod
    def ofTensors() -> ListType:
        ...
    def __init__(self, element: Type) -> None:
        ...
    def getElementType(self) -> Type:
        """
        The element type.
        """
class TupleType(Type):
    def __init__(self, elements: collections.abc.Sequence[Type]) -> None:
        ...
    def elements(self) -> list[Type]:
        ...
class DictType(Type):
    def __init__(self, key: Type, value: Type) -> None:
        """
        Raises ValueError for a key type PyTorch does not allow.
        """
    def getKeyType(self) -> Type:
        ...
    def getValueType(self) -> Type:
        ...
class FutureType(Type):
    def __init__(self, arg0: Type) -> None:
        ...
    def getElementType(self) -> Type:
        """
        The element type.
        """
class AwaitType(Type):
    def __init__(self, arg0: Type) -> None:
        ...
    def getElementType(self) -> Type:
        """
        The element type.
        """
class RRefType(Type):
    def getElementType(self) -> Type:
        """
        The element type.
        """
class UnionType(Type):
    def __init__(self, types: collections.abc.Sequence[Type]) -> None:
        """
        The normalised union (see Type::unionOf); raises ValueError for fewer than two distinct types.
        """
class _AliasInfo(metaclass=_pybind11_type):
    """
    An alias annotation such as (a!) or (a -> *).
    """
    def __repr__(self) -> str:
        ...
    @property
    def after_set(self) -> set[str]:
        ...
    @property
    def before_set(self) -> set[str]:
        """
        Alias sets before the call: a set of names ('a', '*', '$0' for `Tensor!`).
        """
    @property
    def contained_types(self) -> list[_AliasInfo]:
        ...
    @property
    def is_write(self) -> builtins.bool:
        ...
class Argument(metaclass=_pybind11_type):
    """
    One argument or return of a FunctionSchema.
    """
    def __repr__(self) -> str:
        ...
    def __str__(self) -> str:
        ...
    def has_default_value(self) -> builtins.bool:
        ...
    @property
    def N(self) -> int | None:
        ...
    @property
    def alias_info(self) -> _AliasInfo | None:
        ...
    @property
    def default_value(self) -> typing.Any:
        """The default (an int, float, bool, str, list, None, ...: any schema value); see has_default_value()."""
        ...
    @property
    def is_out(self) -> builtins.bool:
        ...
    @property
    def is_write(self) -> builtins.bool:
        ...
    @property
    def kwarg_only(self) -> builtins.bool:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def real_type(self) -> Type:
        """
        The type as written: SymInt, ScalarType, ... kept.
        """
    @property
    def type(self) -> Type:
        """
        The type as PyTorch's Argument.type: SymInt, ScalarType, Layout and MemoryFormat read as int (see real_type). str(t) is its annotation ('Optional[Tensor]'), t.str() its schema spelling.
        """
class FunctionSchema(metaclass=_pybind11_type):
    """
    A parsed operator schema.
    """
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __hash__(self) -> int:
        ...
    def __repr__(self) -> str:
        ...
    def __str__(self) -> str:
        ...
    @property
    def arguments(self) -> list[Argument]:
        ...
    @property
    def is_mutable(self) -> builtins.bool:
        ...
    @property
    def is_vararg(self) -> builtins.bool:
        """
        The arguments end with `...`.
        """
    @property
    def is_varret(self) -> builtins.bool:
        """
        The returns end with `...`.
        """
    @property
    def name(self) -> str:
        ...
    @property
    def overload_name(self) -> str:
        ...
    @property
    def returns(self) -> list[Argument]:
        ...
class DispatchKey(metaclass=_pybind11_type):
    """
    Dispatch keys: runtime keys by priority, then alias keys.
    
    Members:
    
      Undefined
    
      CPU
    
      CUDA
    
      HIP
    
      XLA
    
      MPS
    
      IPU
    
      XPU
    
      HPU
    
      VE
    
      Lazy
    
      MTIA
    
      MAIA
    
      PrivateUse1
    
      Meta
    
      QuantizedCPU
    
      SparseCPU
    
      BackendSelect
    
      Python
    
      Functionalize
    
      ADInplaceOrView
    
      AutogradOther
    
      AutogradCPU
    
      AutogradCUDA
    
      AutogradHIP
    
      AutogradXLA
    
      AutogradMPS
    
      AutogradIPU
    
      AutogradXPU
    
      AutogradHPU
    
      AutogradVE
    
      AutogradLazy
    
      AutogradMTIA
    
      AutogradMAIA
    
      AutogradPrivateUse1
    
      AutogradMeta
    
      AutocastCPU
    
      AutocastXPU
    
      AutocastHPU
    
      AutocastXLA
    
      AutocastMPS
    
      AutocastCUDA
    
      AutocastPrivateUse1
    
      FuncTorchBatched
    
      FuncTorchVmapMode
    
      PythonTLSSnapshot
    
      PreDispatch
    
      PythonDispatcher
    
      Autograd
    
      CompositeImplicitAutograd
    
      FuncTorchBatchedDecomposition
    
      CompositeExplicitAutograd
    
      CompositeExplicitAutogradNonFunctional
    """
    ADInplaceOrView: typing.ClassVar[DispatchKey]
    AutocastCPU: typing.ClassVar[DispatchKey]
    AutocastCUDA: typing.ClassVar[DispatchKey]
    AutocastHPU: typing.ClassVar[DispatchKey]
    AutocastMPS: typing.ClassVar[DispatchKey]
    AutocastPrivateUse1: typing.ClassVar[DispatchKey]
    AutocastXLA: typing.ClassVar[DispatchKey]
    AutocastXPU: typing.ClassVar[DispatchKey]
    Autograd: typing.ClassVar[DispatchKey]
    AutogradCPU: typing.ClassVar[DispatchKey]
    AutogradCUDA: typing.ClassVar[DispatchKey]
    AutogradHIP: typing.ClassVar[DispatchKey]
    AutogradHPU: typing.ClassVar[DispatchKey]
    AutogradIPU: typing.ClassVar[DispatchKey]
    AutogradLazy: typing.ClassVar[DispatchKey]
    AutogradMAIA: typing.ClassVar[DispatchKey]
    AutogradMPS: typing.ClassVar[DispatchKey]
    AutogradMTIA: typing.ClassVar[DispatchKey]
    AutogradMeta: typing.ClassVar[DispatchKey]
    AutogradOther: typing.ClassVar[DispatchKey]
    AutogradPrivateUse1: typing.ClassVar[DispatchKey]
    AutogradVE: typing.ClassVar[DispatchKey]
    AutogradXLA: typing.ClassVar[DispatchKey]
    AutogradXPU: typing.ClassVar[DispatchKey]
    BackendSelect: typing.ClassVar[DispatchKey]
    CPU: typing.ClassVar[DispatchKey]
    CUDA: typing.ClassVar[DispatchKey]
    CompositeExplicitAutograd: typing.ClassVar[DispatchKey]
    CompositeExplicitAutogradNonFunctional: typing.ClassVar[DispatchKey]
    CompositeImplicitAutograd: typing.ClassVar[DispatchKey]
    FuncTorchBatched: typing.ClassVar[DispatchKey]
    FuncTorchBatchedDecomposition: typing.ClassVar[DispatchKey]
    FuncTorchVmapMode: typing.ClassVar[DispatchKey]
    Functionalize: typing.ClassVar[DispatchKey]
    HIP: typing.ClassVar[DispatchKey]
    HPU: typing.ClassVar[DispatchKey]
    IPU: typing.ClassVar[DispatchKey]
    Lazy: typing.ClassVar[DispatchKey]
    MAIA: typing.ClassVar[DispatchKey]
    MPS: typing.ClassVar[DispatchKey]
    MTIA: typing.ClassVar[DispatchKey]
    Meta: typing.ClassVar[DispatchKey]
    PreDispatch: typing.ClassVar[DispatchKey]
    PrivateUse1: typing.ClassVar[DispatchKey]
    Python: typing.ClassVar[DispatchKey]
    PythonDispatcher: typing.ClassVar[DispatchKey]
    PythonTLSSnapshot: typing.ClassVar[DispatchKey]
    QuantizedCPU: typing.ClassVar[DispatchKey]
    SparseCPU: typing.ClassVar[DispatchKey]
    Undefined: typing.ClassVar[DispatchKey]
    VE: typing.ClassVar[DispatchKey]
    XLA: typing.ClassVar[DispatchKey]
    XPU: typing.ClassVar[DispatchKey]
    __members__: typing.ClassVar[dict[str, DispatchKey]]
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    def __ne__(self, other: object) -> builtins.bool:
        ...
    def __reduce__(self) -> builtins.str:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class DispatchKeySet(metaclass=_pybind11_type):
    """
    A set of runtime dispatch keys (one bit each).
    """
    def __and__(self, arg0: DispatchKeySet) -> DispatchKeySet:
        ...
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __getstate__(self) -> tuple[tuple[builtins.str, ...]]:
        ...
    def __hash__(self) -> int:
        ...
    def __init__(self, key: DispatchKey | str) -> None:
        ...
    def __iter__(self) -> collections.abc.Iterator[DispatchKey]:
        ...
    def __or__(self, arg0: DispatchKeySet) -> DispatchKeySet:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, arg0: tuple[tuple[builtins.str, ...]]) -> None:
        ...
    def __sub__(self, arg0: DispatchKeySet) -> DispatchKeySet:
        ...
    def add(self, arg0: DispatchKey | str) -> DispatchKeySet:
        ...
    def empty(self) -> builtins.bool:
        ...
    def has(self, arg0: DispatchKey | str) -> builtins.bool:
        ...
    def highestPriorityTypeId(self) -> DispatchKey:
        ...
    def raw_repr(self) -> int:
        ...
    def remove(self, arg0: DispatchKey | str) -> DispatchKeySet:
        ...
class _ExcludeDispatchKeyGuard(metaclass=_pybind11_type):
    """
    with _ExcludeDispatchKeyGuard(keyset): excludes the keys for the block.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self, arg0: DispatchKeySet) -> None:
        ...
class _IncludeDispatchKeyGuard(metaclass=_pybind11_type):
    """
    with _IncludeDispatchKeyGuard(keyset): includes the keys for the block.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self, arg0: DispatchKeySet) -> None:
        ...
class _AutoDispatchBelowAutograd(metaclass=_pybind11_type):
    """
    with _AutoDispatchBelowAutograd(): excludes the autograd keys for the block.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
class SchemaParseError(ValueError, RuntimeError):
    """A function schema that does not parse (the message gives the position)."""
class ArgumentTypeError(TypeError, RuntimeError):
    """An operator call whose arguments do not fit the schema (a TypeError, and a RuntimeError as PyTorch raises it)."""
class ArgumentValueError(ValueError, RuntimeError):
    """An argument value PyTorch rejects with RuntimeError, e.g. a bad device string (also a ValueError)."""
class _OperatorHandle(metaclass=_pybind11_type):
    """
    A handle to a defined operator.
    """
    __hash__: typing.ClassVar[None]  # type: ignore[assignment]
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __repr__(self) -> str:
        ...
    def call_boxed(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Calls the operator: binds args/kwargs to the schema, dispatches, returns the result(s).
        """
    def dump_state(self) -> str:
        ...
    def dump_table(self) -> str:
        ...
    def has_computed_kernel_for_dispatch_key(self, arg0: DispatchKey | str) -> builtins.bool:
        ...
    def has_kernel_for_any_dispatch_key(self, arg0: DispatchKeySet) -> builtins.bool:
        ...
    def has_kernel_for_dispatch_key(self, arg0: DispatchKey | str) -> builtins.bool:
        ...
    def has_schema(self) -> builtins.bool:
        ...
    def redispatch_boxed(self, arg0: DispatchKeySet, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Calls the kernel for `keyset` (already restricted by the caller).
        """
    def debug(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def overload_name(self) -> str:
        ...
    def schema(self) -> FunctionSchema:
        ...
    @property
    def tags(self) -> list[str]:
        ...
class _DispatchLibrary(metaclass=_pybind11_type):
    """
    A set of registrations for one namespace, undone by reset() or when the object dies.
    """
    def def_(self, schema: str, alias: str = '') -> Self:
        ...
    def def_legacy(self, schema: str) -> Self:
        ...
    def def_name_t_t(self, name: str, dispatch: str = '', debug: str = 'default_def_name_t_t') -> Self:
        ...
    def def_schema_t_t(self, name: str, dispatch: str = '', alias: str = '', debug: str = 'default_def_schema_t_t') -> Self:
        ...
    def define(self, schema: str, alias_analysis: str = '', tags: collections.abc.Sequence[str] = ..., site: str | None = '') -> str:
        """
        Defines an operator. site: where ('file:line', for debug output and duplicate-definition errors); '' (default): where the library was created; None: the innermost Python frame outside opdispatch.
        """
    def fallback(self, dispatch: str, func: collections.abc.Callable[..., typing.Any], with_keyset: builtins.bool = False) -> None:
        ...
    def fallback_fallthrough(self, dispatch: str = '') -> None:
        ...
    def impl(self, name: str, dispatch: str, func: collections.abc.Callable[..., typing.Any], with_keyset: builtins.bool = False, check_aliasing: builtins.bool = False, site: str | None = None) -> str:
        """
        Registers the Python function `func` as the kernel of `name` at `dispatch`. check_aliasing: its tensor outputs may not share memory with its inputs or each other (Note [Custom op kernel checks]). site: where it was registered ('file:line', for debug output), if the caller knows it already; None (default): the innermost Python frame outside opdispatch. Returns the site recorded.
        """
    def impl_t_t(self, name: str, dispatch: str = '', debug: str = 'impl_t_t') -> Self:
        ...
    def reset(self) -> None:
        ...
    @property
    def dispatch_key(self) -> DispatchKey | None:
        ...
    @property
    def kind(self) -> str:
        ...
    @property
    def ns(self) -> str:
        ...
class _RegistrationHandles(metaclass=_pybind11_type):
    """
    Registrations undone by remove() or when the object dies.
    """
    def remove(self) -> None:
        """
        Undoes the registrations (idempotent).
        """
@disjoint_base
class _DispatchOperator(typing.Generic[_ReturnT_co]):
    """
    _DispatchOperator(name, overload_name=''): calling it dispatches the operator.
    """
    def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> Self: ...
    def __init__(self, name: str, overload_name: str = "") -> None: ...
    def __call__(self, *args: typing.Any, **kwargs: typing.Any) -> _ReturnT_co:
        """
        Call self as a function.
        """
    def _call_for_dispatch_key(self, dispatch_key: DispatchKey | str, /, *args: typing.Any, **kwargs: typing.Any) -> _ReturnT_co:
        """
        _call_for_dispatch_key(dispatch_key, *args, **kwargs): calls the kernel registered at `dispatch_key` (a DispatchKey or its name; alias keys such as CompositeImplicitAutograd allowed), bypassing the choice of kernel from the arguments. See OperatorHandle::callBoxedForDispatchKey.
        """
    def _redispatch_below_autograd(self, keyset: DispatchKeySet, /, *args: typing.Any, **kwargs: typing.Any) -> _ReturnT_co:
        """
        _redispatch_below_autograd(keyset, *args, **kwargs): what an Autograd kernel does to run the operator: redispatch(keyset & _after_autograd_keyset, ...) with the autograd keys excluded for the call (_AutoDispatchBelowAutograd), in one C call.
        """
    def redispatch(self, keyset: DispatchKeySet, /, *args: typing.Any, **kwargs: typing.Any) -> _ReturnT_co:
        """
        redispatch(keyset, *args, **kwargs): calls the kernel for `keyset` (already restricted by the caller).
        """
    @property
    def _handle(self) -> _OperatorHandle: ...
    @property
    def _schema(self) -> FunctionSchema: ...
@disjoint_base
class _DispatchPacket:
    """
    _DispatchPacket(): calling it calls the first of _overload_ops the arguments bind to.
    """
    _qualified_op_name: str
    _overload_ops: tuple[typing.Any, ...]
    _generation: int
    def __new__(cls, *args: typing.Any, **kwargs: typing.Any) -> Self: ...
    def __call__(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Call self as a function.
        """
    @classmethod
    def __init_subclass__(cls) -> None:
        """
        Gives the subclass the vectorcall entry.
        """
class _TorchDispatchModeKey(metaclass=_pybind11_type):
    """
    The slots of infrastructure modes on the dispatch mode stack.
    
    Members:
    
      FUNCTIONAL
    
      PROXY
    
      FAKE
    """
    FAKE: typing.ClassVar[_TorchDispatchModeKey]
    FUNCTIONAL: typing.ClassVar[_TorchDispatchModeKey]
    PROXY: typing.ClassVar[_TorchDispatchModeKey]
    __members__: typing.ClassVar[dict[str, _TorchDispatchModeKey]]
    def __eq__(self, other: object) -> builtins.bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    def __ne__(self, other: object) -> builtins.bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class _DisableTorchDispatch(metaclass=_pybind11_type):
    """
    with _DisableTorchDispatch(): neither dispatch modes nor tensor subclasses intercept calls in the block (excludes Python, PythonTLSSnapshot and PreDispatch). PyTorch: torch._C._DisableTorchDispatch.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
class _RestorePythonTLSSnapshot(metaclass=_pybind11_type):
    """
    with _RestorePythonTLSSnapshot(): inside __torch_dispatch__, runs the block with the dispatch key sets this thread had when the call entered the dispatcher. RuntimeError outside one. PyTorch: same name.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
class _EnablePythonDispatcher(metaclass=_pybind11_type):
    """
    _EnablePythonDispatcher(): turns the Python dispatcher on for this thread (operators consult their py_impl kernels) from construction until __exit__ (or until the object is destroyed), then restores the previous state. Usable as `with _EnablePythonDispatcher():`. See Note [The Python dispatcher]. PyTorch: same name.
    """
    def __enter__(self) -> Self:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
class _DisablePythonDispatcher(metaclass=_pybind11_type):
    """
    _DisablePythonDispatcher(): turns the Python dispatcher off for this thread, as _EnablePythonDispatcher turns it on. PyTorch: same name.
    """
    def __enter__(self) -> Self:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
def _accumulate_grad(tensor: TensorBase, grad: typing.Any, create_graph: builtins.bool, /) -> None:
    ...
def _as_strided(self: TensorBase, size: collections.abc.Sequence[typing.SupportsIndex], stride: collections.abc.Sequence[typing.SupportsIndex], storage_offset: typing.SupportsIndex) -> opdispatch.Tensor:
    """
    A view of self's storage with the given sizes, strides (in elements) and offset: shares the storage and the version counter, does not require grad. Raises IndexError if it reaches past the storage.
    """
def _resize_(self: TensorBase, size: collections.abc.Sequence[typing.SupportsIndex], stride: collections.abc.Sequence[typing.SupportsIndex]) -> None:
    """
    Gives self the sizes and strides (in elements), keeping its storage offset, and grows its storage in place when they reach past it (new memory holding the old bytes; every tensor sharing the storage sees it). ValueError for a bad geometry, RuntimeError for a storage that is not resizable (from_numpy, from_dlpack) or sizes whose extent overflows. PyTorch: resize_impl_cpu_.
    """
@typing.overload
def _topk_indices(values: numpy.typing.NDArray[numpy.float64], k: typing.SupportsInt, largest: builtins.bool, sorted: builtins.bool) -> numpy.typing.NDArray[numpy.int64]:
    """
    _topk_indices(values, k, largest, sorted): for each row of the C-contiguous 2-D float64 or int64 array values, the int64 indices of its k largest (or smallest) values as PyTorch's CPU topk selects and orders them, equal values included (Note [topk's order among equal values]); NaN is the largest value. ValueError unless values is 2-D and 0 <= k <= its row length. PyTorch: topk_impl_loop.
    """
@typing.overload
def _topk_indices(values: numpy.typing.NDArray[numpy.int64], k: typing.SupportsInt, largest: builtins.bool, sorted: builtins.bool) -> numpy.typing.NDArray[numpy.int64]:
    """
    _topk_indices(values, k, largest, sorted): for each row of the C-contiguous 2-D float64 or int64 array values, the int64 indices of its k largest (or smallest) values as PyTorch's CPU topk selects and orders them, equal values included (Note [topk's order among equal values]); NaN is the largest value. ValueError unless values is 2-D and 0 <= k <= its row length. PyTorch: topk_impl_loop.
    """
def _set_sizes_and_strides(self: TensorBase, size: collections.abc.Sequence[typing.SupportsIndex], stride: collections.abc.Sequence[typing.SupportsIndex], storage_offset: typing.SupportsIndex) -> None:
    """
    Gives self new sizes, strides (in elements) and storage offset in place, keeping its storage, dtype and version counter: the metadata update of an in-place view operator (transpose_, as_strided_, ...). ValueError for a bad geometry, IndexError if it reaches past the storage; the tensor is unchanged then. PyTorch: TensorImpl::set_sizes_and_strides.
    """
def _can_cast(from_: typing.Any, to: typing.Any) -> builtins.bool:
    """
    Whether a result of dtype from_ may be written to a tensor of dtype to: not to a lower category (floating to integer, complex to floating, anything else to bool). PyTorch: torch.can_cast (c10::canCast).
    """
def _check_can_cast(op: str, result: typing.Any, desired: typing.Any) -> None:
    """
    RuntimeError naming op unless _can_cast(result, desired), with PyTorch's message ("result type Float can't be cast to the desired output type Long"). PyTorch: TensorIteratorBase::compute_types.
    """
def _call_numpy(fn: collections.abc.Callable[..., typing.Any], /, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
    """
    _call_numpy(fn, *args, **kwargs): how built-in CPU kernels run NumPy. Calls fn with every tensor argument (also inside a list argument) replaced by a writeable ndarray view of its memory, with NumPy's floating-point error reporting off (overflow gives inf, as in PyTorch), and returns fn's result as tensors: an ndarray or NumPy scalar becomes a tensor owning it (copied to C order when it is not C-contiguous, aligned and writeable), a tuple a tuple of those; an array made for an argument returns that argument itself (an in-place kernel's out=), None and tensors pass through. Raises what fn raises, and RuntimeError for a tensor without data (meta, wrapper subclasses).
    """
def _call_overload_packet(name: str, overloads: tuple[typing.Any, ...], args: tuple[typing.Any, ...], kwargs: dict[str, typing.Any], /) -> typing.Any:
    """
    _call_overload_packet(name, overloads, args, kwargs): calls the first operator of the tuple `overloads` whose schema the arguments bind to; TypeError listing every candidate if none does.
    """
def _disabled_torch_dispatch_impl(func: collections.abc.Callable[..., typing.Any], types: tuple[type, ...], args: tuple[typing.Any, ...] = (), kwargs: dict[str, typing.Any] | None = None) -> typing.Any:
    """
    opdispatch.Tensor.__torch_dispatch__, the marker of a class that does not handle dispatch: called (e.g. by super().__torch_dispatch__), it runs func(*args, **kwargs) with the Python key and the keys above it excluded. PyTorch: torch._C._disabled_torch_dispatch_impl.
    """
def _dispatch_argument_key_sets(name: str, overload: str, *args: typing.Any, **kwargs: typing.Any) -> list[tuple[str, int, DispatchKeySet, TensorBase]]:
    """
    [(argument, list index or -1, DispatchKeySet)]: the tensors a call of operator `name` (with overload `overload`, '' for the default) passes with the positional and keyword arguments that follow, bound as the call binds them.
    """
def _dispatch_register_default_fallback(dispatch: str, func: collections.abc.Callable[..., typing.Any], with_keyset: builtins.bool, debug: str) -> _RegistrationHandles:
    """
    Registers fn([keyset,] op, *args, **kwargs) as a default backend fallback of `dispatch` (each runtime key of an alias key): one opdispatch installs, which a user's fallback for the same key replaces (Note [Default fallbacks]). Returns the registrations (_RegistrationHandles); keep them alive.
    """
def _dispatch_check_all_invariants() -> None:
    ...
def _dispatch_check_invariants(arg0: str) -> None:
    ...
def _dispatch_dump(arg0: str) -> str:
    ...
def _dispatch_dump_table(arg0: str) -> str:
    ...
def _dispatch_find_dangling_impls() -> list[str]:
    ...
def _dispatch_find_overload_names(arg0: str) -> list[str]:
    """
    The overload names ('' for the default) of the operators named `name` ('ns::op') that have a schema, in the order their entries were first registered; costs the number of overloads, not of operators.
    """
def _dispatch_find_schema_or_throw(arg0: str, arg1: str) -> _OperatorHandle:
    ...
def _dispatch_get_all_op_names() -> list[str]:
    ...
def _dispatch_get_backend_keyset_from_autograd(arg0: DispatchKey | str) -> DispatchKeySet:
    ...
def _dispatch_get_defined_op_names() -> list[str]:
    """
    Names ('ns::name' or 'ns::name.overload') of the operators that have a schema, in the order their entries were first registered (unlike _dispatch_get_all_op_names, no impl-only operators).
    """
def _dispatch_get_runtime_keyset(arg0: DispatchKey | str) -> DispatchKeySet:
    ...
def _dispatch_has_backend_fallback(arg0: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_has_computed_kernel_for_dispatch_key(arg0: str, arg1: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_has_kernel(arg0: str) -> builtins.bool:
    ...
def _dispatch_has_kernel_for_any_dispatch_key(arg0: str, arg1: DispatchKeySet) -> builtins.bool:
    ...
def _dispatch_has_kernel_for_dispatch_key(arg0: str, arg1: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_is_alias_key(arg0: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_is_included_in_alias(arg0: DispatchKey | str, arg1: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_kernel_debug(arg0: str, arg1: DispatchKey | str) -> str | None:
    """
    Where the newest kernel registered at the key for the operator was registered ('registered at file:line'), or None if it has none (or the operator does not exist).
    """
def _dispatch_kernel_for_dispatch_key_is_fallthrough(arg0: str, arg1: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_key_for_device(arg0: str) -> str:
    ...
def _dispatch_key_name(arg0: DispatchKey | str) -> str:
    ...
def _dispatch_key_parse(arg0: DispatchKey | str) -> DispatchKey:
    ...
def _dispatch_keys(arg0: TensorBase) -> DispatchKeySet:
    ...
def _dispatch_keyset_full() -> DispatchKeySet:
    ...
def _dispatch_keyset_full_after(arg0: DispatchKey | str) -> DispatchKeySet:
    ...
def _dispatch_keyset_to_string(arg0: DispatchKeySet) -> str:
    ...
def _dispatch_library(kind: str, name: str, dispatch: str, file: str = '/dev/null', linenum: typing.SupportsIndex = 0) -> _DispatchLibrary:
    """
    A registration library: kind 'DEF' | 'IMPL' | 'FRAGMENT', namespace, dispatch key name ('' for none).
    """
def _dispatch_pystub(name: str, overload: str) -> tuple[str, str] | None:
    """
    (pymodule, context) that a C++ library recorded with set_python_module for the operator, or None. PyTorch: torch._C._dispatch_pystub.
    """
def _dispatch_registration_generation() -> int:
    """
    A counter that changes whenever an operator is defined or undefined.
    """
def _dispatch_table_entries(name: str) -> list[tuple[str, str, str, builtins.bool, str]]:
    """
    [(key, kernel debug, reason, is_fallthrough, site)] for Undefined and every runtime key of operator `name` ('ns::op' or 'ns::op.overload'), computed by the rules the dispatch table uses (reason 'missing' where no kernel serves the key; site 'file:line' or '').
    """
def _dispatch_take_static_registration_errors() -> list[str]:
    """
    Errors of OPDISPATCH_LIBRARY blocks that failed while a shared library loaded (cleared by the call).
    """
def _dispatch_tls_is_dispatch_key_excluded(arg0: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_tls_is_dispatch_key_included(arg0: DispatchKey | str) -> builtins.bool:
    ...
def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    ...
def _dispatch_tls_local_include_set() -> DispatchKeySet:
    ...
def _dispatch_tls_set_dispatch_key_excluded(arg0: DispatchKey | str, arg1: builtins.bool) -> None:
    ...
def _dispatch_tls_set_dispatch_key_included(arg0: DispatchKey | str, arg1: builtins.bool) -> None:
    ...
def _functionalize_unsafe_set(dst: TensorBase, src: TensorBase, /) -> None:
    """
    _functionalize_unsafe_set(dst, src): dst uses src's storage from now on, keeping its own sizes, strides, offset and dtype (IndexError if they reach past it); if src has no storage (a wrapper subclass), dst shares its version counter instead, so both count as one memory (_shares_memory). No operator runs. PyTorch: torch._functionalize_unsafe_set.
    """
def _get_dispatch_mode(mode_key: _TorchDispatchModeKey | None) -> TorchDispatchMode | None:
    """
    The infrastructure mode of mode_key, or None.
    """
def _get_dispatch_stack_at(idx: typing.SupportsIndex) -> TorchDispatchMode:
    """
    The mode at index idx of this thread's stack (0: the bottom, infrastructure modes first).
    """
def _gradient_edge(value: object) -> tuple[typing.Any, int]:
    ...
def _jit_resolve_packet(qualname: str, *args: typing.Any, **kwargs: typing.Any) -> str:
    ...
def _len_torch_dispatch_stack() -> int:
    """
    The number of modes on this thread's stack.
    """
def _library_define(lib: _DispatchLibrary, schema: str, alias_analysis: str, tags: collections.abc.Iterable[str], site: str | types.FrameType | None, owner_defs: set[str], /) -> str:
    """
    _library_define(lib, schema, alias_analysis, tags, site, owner_defs) -> str: lib.define with positional arguments, keeping the Python registry's tables (Note [Registration fast path]); returns the qualified name.
    """
def _library_impl(lib: _DispatchLibrary, name: str, dispatch: str, func: collections.abc.Callable[..., typing.Any], with_keyset: builtins.bool, check_aliasing: builtins.bool, site: str | types.FrameType | None, owner_impls: set[str] | None, /) -> str:
    """
    _library_impl(lib, name, dispatch, func, with_keyset, check_aliasing, site, owner_impls) -> str: lib.impl with positional arguments, keeping the Python registry's tables (Note [Registration fast path]); returns the site recorded.
    """
def _make_subclass(cls: type[_TensorT], data: TensorBase, require_grad: builtins.bool = False) -> _TensorT:
    """
    _make_subclass(cls, data, require_grad=False): a new object of class cls viewing data's memory (shares its storage and version counter); carries the Python keys if cls has __torch_dispatch__. PyTorch: Tensor._make_subclass.
    """
def _make_wrapper_subclass(cls: type[_TensorT], size: collections.abc.Sequence[typing.SupportsIndex], strides: collections.abc.Sequence[typing.SupportsIndex] | None = None, storage_offset: typing.SupportsIndex | None = None, dtype: dtype | None = None, device: _DeviceLike | None = None, requires_grad: builtins.bool = False) -> _TensorT:
    """
    _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, dtype=None, device=None, requires_grad=False): a new object of class cls with this metadata and no data (reading its data raises); it carries the Python keys. TypeError if cls does not define __torch_dispatch__; TypeError / ValueError for sizes or strides that are not ints, negative, of different lengths or overflowing int64. PyTorch: Tensor._make_wrapper_subclass.
    """
def _parse_dispatch_key(arg0: str) -> DispatchKey | None:
    ...
def _parse_name(arg0: str) -> tuple[str, str]:
    """
    Parses 'ns::name[.overload]' into (name, overload_name).
    """
def _pop_torch_dispatch_stack(mode_key: _TorchDispatchModeKey | None) -> TorchDispatchMode:
    """
    Pops the top mode (mode_key None) or unsets an infrastructure mode, and returns it. RuntimeError if there is none.
    """
def _push_on_torch_dispatch_stack(mode: TorchDispatchMode) -> None:
    """
    Pushes a dispatch mode on this thread's stack (a mode with a `_mode_key` goes into that infrastructure slot; RuntimeError if the slot is taken).
    """
def is_grad_enabled() -> builtins.bool:
    """
    Whether grad mode is on in this thread (Note [Grad mode is its own flag]). PyTorch: torch._C.is_grad_enabled.
    """
def _set_grad_enabled(enabled: builtins.bool) -> None:
    """
    Sets this thread's grad mode. PyTorch: torch._C._set_grad_enabled.
    """
def _set_autograd_fallback_mode(mode: str) -> None:
    """
    Sets, for the process, what an operator with no autograd kernel gives outputs computed from a tensor that requires grad: 'warn' (the default), a grad_fn that warns at backward and passes no gradient on; 'nothing', no grad_fn. PyTorch: torch._C._set_autograd_fallback_mode.
    """
def _get_autograd_fallback_mode() -> str:
    """
    The autograd fallback's mode, 'warn' or 'nothing'. PyTorch: torch._C._get_autograd_fallback_mode.
    """
def _result_type(*operands: typing.Any) -> dtype:
    """
    _result_type(*operands) -> dtype: the dtype PyTorch's promotion gives tensors and Python numbers (bool, int, float, complex) operated on together: tensors with dimensions first, then 0-d tensors, then numbers, a lower class counting only when its category (bool < integer < floating < complex) is higher (Note [Result type] in core/TypePromotion.h). TypeError for no operand or an operand of another type. PyTorch: at::native::result_type.
    """
def _rename_privateuse1_backend(backend_name: str) -> None:
    """
    Names the PrivateUse1 device type (once per process). PyTorch: torch._C._rename_privateuse1_backend.
    """
def _get_privateuse1_backend_name() -> str:
    """
    PrivateUse1's device-type name. PyTorch: torch._C._get_privateuse1_backend_name.
    """
def _dispatch_default_included_set() -> DispatchKeySet:
    """
    The keys every thread includes until it excludes them (Note [BackendSelect is included by default]).
    """
def _python_call_site_text() -> str | None:
    """
    'file:line' of _python_call_site (one str per site, cached), or None; what registrations record.
    """
def _python_call_site() -> tuple[str, int] | None:
    """
    (file, line) of the innermost Python frame outside the paths of _dispatch_set_call_site_skip_paths (the user's registration site), or None. The same frame Python kernels record as 'registered at file:line'.
    """
def _dispatch_set_call_site_skip_paths(paths: collections.abc.Sequence[str]) -> list[str]:
    """
    Sets the source files (and directories, ending in '/') whose frames are not a user's registration site (_python_call_site and the 'registered at' of Python kernels skip them); returns the previous list.
    """
def _apply_op_node(node: typing.Any, grad_outputs: list[typing.Any], /) -> list[typing.Any]:
    ...
def _run_backward(roots: collections.abc.Sequence[tuple[typing.Any, int]], root_grads: collections.abc.Sequence[typing.Any], retain_graph: builtins.bool, create_graph: builtins.bool, captures: dict[tuple[typing.Any, int], typing.Any] | None, /) -> None:
    ...
def _saved_tensors(ctx: typing.Any, /) -> tuple[typing.Any, ...]:
    ...
def _saved_versions(values: tuple[object, ...]) -> tuple[int, ...]:
    ...
def _set_accumulate_grad_class(cls: type) -> None:
    """
    Sets the class of leaves' nodes (a Python class whose instances hold their leaf as `variable`): _gradient_edge makes one for a leaf without one.
    """
def _set_engine_callbacks(accumulate_retained: collections.abc.Callable[..., typing.Any], op_node_input_metadata: collections.abc.Callable[..., typing.Any]) -> None:
    """
    Installs what _run_backward calls: accumulate_retained(node, grads, create_graph) (a node with outputs that retain_grad()), and the input_metadata function of the nodes whose outputs_meta it reads.
    """
def _set_op_node_class(cls: typing.Any) -> None:
    """
    Installs graph.OpNode: the engine runs its apply and release in C (_apply_op_node, and dropping the saved tensors) for nodes whose class keeps them; its output_layout is the layout of one Tensor return.
    """
def _set_autograd_fallback(fn: collections.abc.Callable[..., typing.Any] | None) -> None:
    """
    Sets fn(op, keyset, *args, **kwargs), called for operators without an autograd kernel when an input requires grad; it must redispatch with keyset & _after_autograd_keyset. None restores the default (redispatch below autograd).
    """
def _set_dispatch_mode(mode: TorchDispatchMode) -> None:
    """
    Sets the infrastructure mode of mode._mode_key (RuntimeError if one is set).
    """
def _set_definition_listener(listener: collections.abc.Callable[[str], typing.Any] | None, watched: dict[str, typing.Any] | None = None) -> None:
    """
    listener(qualname) runs after _library_define defined an operator of a namespace that is a key of the dict `watched` (None: of any namespace); None: no listener.
    """
def _set_fallthrough_kernel(arg0: typing.Any) -> typing.Any:
    """
    Registers the Python object that means 'fallthrough' when passed as a kernel (None: no such object); returns the previous one (or None).
    """
def _set_history(tensor: TensorBase, node: object, output_nr: typing.SupportsIndex, /) -> None:
    """
    _set_history(tensor, node, output_nr): makes the tensor the output_nr-th output of node: its autograd state (created if it has none) gets grad_fn=node and forgets any AccumulateGrad, and the tensor requires grad. RuntimeError for a dtype that cannot require grad (nothing changes then).
    """
def _set_numpy_errstate(var: typing.Any, ignore_all: typing.Any) -> None:
    """
    Sets the context variable holding NumPy's floating-point error state and the value that ignores every error: _call_numpy sets it for each call (Note [NumPy floating-point errors in kernels]).
    """
def _set_opoverload_resolver(arg0: collections.abc.Callable[[str, str], typing.Any] | None) -> collections.abc.Callable[[str, str], typing.Any] | None:
    """
    Registers f(name, overload_name) -> OpOverload, used for the op argument of Python fallbacks (None removes it); returns the previous one (or None).
    """
def _set_python_registry(defs: set[str], impls: set[str], check_kernel_slot: collections.abc.Callable[[str, str, str, str, str | None], typing.Any], checked_keys: collections.abc.Set[str]) -> None:
    """
    The Python registry's tables that _library_define / _library_impl keep, and the check a kernel's slot gets where it may be taken: check_kernel_slot(slot, ns, op_name, dispatch, site), run where the slot (_python_kernel_slot) is taken and for every kernel whose dispatch key (as passed) is in the set checked_keys (Note [Registration fast path]).
    """
def _promote_types(type1: typing.Any, type2: typing.Any) -> dtype:
    """
    The smallest dtype both dtypes convert to without losing their kind (int8 with uint8: int16; an integer with float16: float16). TypeError for a non-dtype. PyTorch: torch.promote_types (c10::promoteTypes).
    """
def _python_kernel_slot(ns: str, op_name: str, dispatch_key: str) -> str:
    """
    The Python registry's slot of a kernel that a library of namespace `ns` registers for `op_name` ('name[.overload]', optionally 'ns::'-qualified) at `dispatch_key` (as passed; '' for none): '<ns>/<name[.overload]>/<dispatch_key>', seed 000's torch.library._impls key. The one place of that rule (_library_impl keeps registry.impls by it).
    """
def _set_tensor_class(arg0: type[TensorBase]) -> None:
    """
    Sets the class that wraps tensors created in C++ (opdispatch.Tensor).
    """
def _set_torch_dispatch_rules(rules: dict[str, dict[type, collections.abc.Callable[..., typing.Any]]]) -> None:
    """
    Sets the registry of register_torch_dispatch rules: {'ns::op[.overload]': {class: rule}}.
    """
def _set_version_counter_of(dst: TensorBase, src: TensorBase, /) -> None:
    """
    _set_version_counter_of(dst, src): dst shares src's version counter, so it counts as a view of src (_shares_memory, in-place updates): how a wrapper subclass (a FakeTensor) aliases what it stands for.
    """
def _torch_dispatch_mode_exit(flags: dict[str, typing.Any]) -> collections.abc.Callable[..., None]:
    """
    TorchDispatchMode.__exit__ as a method written in C, writing the mode flags into the dict `flags` (the globals of opdispatch.utils._python_dispatch).
    """
def _unsave_outputs(node: object, outputs: collections.abc.Sequence[object], /) -> None:
    """
    _unsave_outputs(node, outputs): replaces the outputs of node (those whose grad_fn it is) among the tensors it saved (node._saved) by detached aliases (same memory and version counter, no history), and records where they are and which output each is in node._saved_outputs, so that no reference cycle output -> node -> output forms. BackwardContext.saved_tensors gives them their history back when backward is differentiated. PyTorch: SavedVariable's is_output (it saves outputs without their grad_fn).
    """
def _unset_dispatch_mode(mode_key: _TorchDispatchModeKey) -> TorchDispatchMode | None:
    """
    Unsets the infrastructure mode of mode_key and returns it (None if none was set).
    """
def empty(shape: _ShapeLike, dtype: dtype | None = None, device: _DeviceLike | None = None) -> opdispatch.Tensor:
    """
    A new uninitialised tensor of `shape` (int or sequence of ints), dtype (default float32) and device (default cpu; meta tensors have no memory).
    """
def empty_strided(shape: _ShapeLike, stride: _ShapeLike, dtype: dtype | None = None, device: _DeviceLike | None = None) -> opdispatch.Tensor:
    """
    A new uninitialised tensor with the given strides (in elements).
    """
def from_numpy(array: NDArray[typing.Any]) -> opdispatch.Tensor:
    """
    A tensor sharing memory with a numpy.ndarray (which it keeps alive). Raises TypeError for unsupported dtypes and ValueError for negative or unaligned strides; warns (UserWarning) for a read-only array.
    """
def parse_schema(schema: str, allow_typevars: builtins.bool = True) -> FunctionSchema:
    """
    Parses a schema string; raises ValueError with the position of the problem. allow_typevars: accept type variables such as `t` (operator definitions do not). PyTorch: torch._C.parse_schema.
    """
_after_ADInplaceOrView_keyset: DispatchKeySet
_after_autograd_keyset: DispatchKeySet
_dispatch_autogradother_backends: DispatchKeySet
bool: dtype
complex128: dtype
complex64: dtype
float16: dtype
float32: dtype
float64: dtype
int16: dtype
int32: dtype
int64: dtype
int8: dtype
uint8: dtype
@typing.final
class _Overridable:
    """
    _Overridable(func, *, fast=None, fast_nargs=-1): a public function or Tensor method that checks for __torch_function__ overrides and modes before calling the Python function func (or, on fast_nargs plain tensors passed positionally, `fast`). See Note [The function layer].
    """
    _func: collections.abc.Callable[..., typing.Any]
    _public: typing.Any
    def __new__(cls, func: collections.abc.Callable[..., typing.Any], *, fast: collections.abc.Callable[..., typing.Any] | None = None, fast_nargs: int = -1) -> Self:
        """
        Create and return a new object.  See help(type) for accurate signature.
        """
    def __call__(self, *args: typing.Any, **kwargs: typing.Any) -> typing.Any:
        """
        Call self as a function.
        """
    def __get__(self, instance: typing.Any, owner: type | None = None, /) -> typing.Any:
        """
        Return an attribute of instance, which is of type owner.
        """
class DisableTorchFunctionSubclass(metaclass=_pybind11_type):
    """
    with DisableTorchFunctionSubclass(): __torch_function__ overrides of arguments do not run in the block (TorchFunctionModes still do); what Tensor.__torch_function__ runs func under. PyTorch: same name.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
class DisableTorchFunction(metaclass=_pybind11_type):
    """
    with DisableTorchFunction(): neither TorchFunctionModes nor __torch_function__ overrides run in the block. PyTorch: same name.
    """
    def __enter__(self) -> None:
        ...
    def __exit__(self, *args: object) -> None:
        ...
    def __init__(self) -> None:
        ...
def _disabled_torch_function_impl(func: collections.abc.Callable[..., typing.Any], types: typing.Any, args: typing.Any = (), kwargs: typing.Any = None) -> typing.Any:
    """
    What a tensor subclass sets as __torch_function__ to opt out of the function layer (`__torch_function__ = _disabled_torch_function_impl`): calls func(*args, **kwargs). PyTorch: torch._C._disabled_torch_function_impl.
    """
def _has_torch_function(relevant_args: typing.Any) -> builtins.bool:
    """
    Whether a call with these arguments goes to __torch_function__: a TorchFunctionMode is enabled, or an argument is not a plain opdispatch.Tensor and has an override. PyTorch: torch._C._has_torch_function.
    """
def _has_torch_function_unary(obj: typing.Any) -> builtins.bool:
    """
    _has_torch_function((obj,)). PyTorch: torch._C._has_torch_function_unary.
    """
def _has_torch_function_variadic(*args: typing.Any) -> builtins.bool:
    """
    _has_torch_function(args) for the arguments given. PyTorch: torch._C._has_torch_function_variadic.
    """
def _is_torch_function_enabled() -> builtins.bool:
    """
    Whether __torch_function__ overrides of arguments run (not inside DisableTorchFunctionSubclass or DisableTorchFunction). PyTorch: same name.
    """
def _is_torch_function_all_disabled() -> builtins.bool:
    """
    Whether DisableTorchFunction is in effect (neither modes nor overrides run). PyTorch: same name.
    """
def _is_torch_function_mode_enabled() -> builtins.bool:
    """
    Whether a TorchFunctionMode is on this thread's stack and DisableTorchFunction is not in effect. PyTorch: same name.
    """
def _push_on_torch_function_stack(mode: typing.Any) -> None:
    """
    Pushes a TorchFunctionMode on this thread's stack. PyTorch: same name.
    """
def _pop_torch_function_stack() -> typing.Any:
    """
    Pops the top TorchFunctionMode of this thread's stack and returns it; RuntimeError if there is none. PyTorch: same name.
    """
def _len_torch_function_stack() -> int:
    """
    The number of TorchFunctionModes on this thread's stack. PyTorch: same name.
    """
def _get_function_stack_at(idx: typing.SupportsInt) -> typing.Any:
    """
    The TorchFunctionMode at index idx of this thread's stack (0: the bottom). PyTorch: same name.
    """
def _set_torch_function_handler(handler: collections.abc.Callable[..., typing.Any]) -> None:
    """
    Sets handler(public, args, kwargs), which _Overridable objects hand overridden calls to (opdispatch.overrides sets it at import).
    """
def _prepare_subclass(cls: type, /) -> None:
    """
    _prepare_subclass(cls): readies a new subclass of opdispatch.Tensor for its objects to be preserved while C++ holds their tensor (Tensor.__init_subclass__ calls it). PyTorch: THPVariableMetaType_init.
    """
def _set_subclass(tensor: TensorBase, cls: type, /) -> None:
    """
    _set_subclass(tensor, cls): makes the tensor object, which nothing else refers to yet, an instance of cls (a subclass of opdispatch.Tensor of the same object layout), with the Python keys if cls has __torch_dispatch__: Tensor.as_subclass on a fresh alias.
    """
