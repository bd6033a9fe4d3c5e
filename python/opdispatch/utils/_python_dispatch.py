"""Dispatch modes: Python objects whose ``__torch_dispatch__`` intercepts every
operator call made on this thread while they are active (``with Mode():``),
and the helpers for the mode stack; and the traceable wrapper subclass
protocol (``__tensor_flatten__`` / ``__tensor_unflatten__``) with its helpers.
PyTorch: torch/utils/_python_dispatch.py.

The stack itself lives in C++ (``_C._push_on_torch_dispatch_stack`` and
friends, Note [The dispatch mode stack] in csrc/python/TorchDispatchModeTLS.h);
calls reach a mode through the Python key's fallback (Note [The Python key]
in csrc/python/PythonFallbackKernel.cpp).
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

if TYPE_CHECKING:
    from typing_extensions import Self

from .. import _C
from .._C import (
    _get_dispatch_stack_at,
    _len_torch_dispatch_stack,
    _pop_torch_dispatch_stack,
    _push_on_torch_dispatch_stack,
)

__all__ = [
    "BaseTorchDispatchMode",
    "TorchDispatchMode",
    "is_in_torch_dispatch_mode",
    "is_traceable_wrapper_subclass",
    "is_traceable_wrapper_subclass_type",
    "return_and_correct_aliasing",
    "transform_subclass",
]

# {"ns::op[.overload]": {mode or subclass type: rule}}: the rules
# opdispatch.library.register_torch_dispatch registers; the Python key's
# fallback consults them before __torch_dispatch__. PyTorch:
# torch._library.simple_registry's torch_dispatch_rules.
_torch_dispatch_rules: dict[str, dict[type, Callable[..., Any]]] = {}
_C._set_torch_dispatch_rules(_torch_dispatch_rules)

_is_in_torch_dispatch_mode = False
_is_in_non_infra_torch_dispatch_mode = False


def is_in_torch_dispatch_mode(include_infra_modes: bool = True) -> bool:
    """Whether a ``with Mode():`` block of some mode is open on this process
    (``include_infra_modes=False``: of a mode that is not an infrastructure
    mode). PyTorch: same name."""
    return _is_in_torch_dispatch_mode if include_infra_modes else _is_in_non_infra_torch_dispatch_mode


class TorchDispatchMode:
    """Overrides every operator call made in a dynamic scope, without a tensor
    subclass: subclass it, define ``__torch_dispatch__(self, func, types,
    args=(), kwargs=None)`` (a plain method), and run code under ``with
    MyMode():``.

    ``func`` is the :class:`~opdispatch._ops.OpOverload` called, ``types`` the
    tensor subclasses with ``__torch_dispatch__`` among the arguments, ``args``
    and ``kwargs`` the call's arguments (trailing defaults dropped, as in
    PyTorch). Modes nest: the innermost runs first, and runs with itself popped
    from the stack, so ``func(*args, **kwargs)`` inside it goes to the next mode
    and finally to the kernels below the Python key (autograd has already run).
    Returning ``NotImplemented`` passes the call on to the tensor subclasses
    among the arguments. Modes run before subclasses; the stack is per thread.

    Infrastructure modes (FakeTensorMode, the make_fx tracer) set ``_mode_key``
    (a ``_C._TorchDispatchModeKey``): they take that slot at the bottom of the
    stack instead of being pushed on top.

    A higher-order operator (``opdispatch.ops.higher_order.cond``) asks a mode
    through the rule registered with ``hop.py_impl(ModeClass)``; a mode without
    one gets the call in ``__torch_dispatch__(hop, (), args, kwargs)`` if its
    class sets ``supports_higher_order_operators = True``, else the call raises
    NotImplementedError. PyTorch: torch.utils._python_dispatch.TorchDispatchMode.
    """

    supports_higher_order_operators = False

    #: What ``with`` restores, one (live, mode key, stack length, previous slot mode, in_mode,
    #: in_non_infra_mode, outer) link per open block of this mode (Note [Entering and leaving a mode]).
    _saved_mode_flags: tuple[Any, ...] = ()

    def __init__(self, _dispatch_key: Optional[_C.DispatchKey] = None) -> None:
        if _dispatch_key is not None:
            raise ValueError("TorchDispatchMode(_dispatch_key=...): opdispatch has no pre-dispatch mode stack; "
                             "modes run at the Python key only")

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """Handles one call: ``func`` (an OpOverload), ``types`` (the tensor
        subclasses with ``__torch_dispatch__`` among the arguments), ``args``
        (tuple) and ``kwargs`` (dict or None). Returns the call's result, or
        NotImplemented to pass it on to those subclasses. Subclasses must
        override it: this one raises NotImplementedError.
        PyTorch: TorchDispatchMode.__torch_dispatch__."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self._enter_mode(None)

    def _enter_mode(self, previous: Optional["TorchDispatchMode"]) -> Self:
        """Pushes this mode and records what __exit__ restores, with
        ``previous``, the infrastructure mode this one displaced from its slot
        (Note [Entering and leaving a mode])."""
        global _is_in_torch_dispatch_mode, _is_in_non_infra_torch_dispatch_mode
        in_non_infra = _is_in_non_infra_torch_dispatch_mode or not self.is_infra_mode()
        key = self.__dict__.get("_mode_key", None)
        saved = (True, key, _len_torch_dispatch_stack(), previous, _is_in_torch_dispatch_mode,
                 _is_in_non_infra_torch_dispatch_mode, self._saved_mode_flags)
        try:
            _push_on_torch_dispatch_stack(self)
            self._saved_mode_flags = saved
            _is_in_torch_dispatch_mode = True
            _is_in_non_infra_torch_dispatch_mode = in_non_infra
            return self
        except BaseException:  # (a KeyboardInterrupt after the push): undo all of it
            _unpush(self, saved[2])
            _is_in_torch_dispatch_mode, _is_in_non_infra_torch_dispatch_mode, self._saved_mode_flags = saved[4:]
            raise

    def _enter_again(self) -> Self:
        """Records a ``with`` block of a mode already in its slot: its __exit__
        leaves the stack as it is."""
        self._saved_mode_flags = (False, None, 0, None, _is_in_torch_dispatch_mode,
                                  _is_in_non_infra_torch_dispatch_mode, self._saved_mode_flags)
        return self

    #: Pops the mode and restores what its __enter__ recorded, written in C so that no KeyboardInterrupt
    #: can land half way (Note [Entering and leaving a mode]). PyTorch: TorchDispatchMode.__exit__.
    __exit__ = _C._torch_dispatch_mode_exit(globals())

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> "TorchDispatchMode":
        """``cls(*args, **kwargs)`` (PyTorch's deprecated spelling of ``with cls():``)."""
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        """Whether this mode is infrastructure (FakeTensorMode, the tracer)
        rather than a user mode. PyTorch: same name."""
        return False


class BaseTorchDispatchMode(TorchDispatchMode):
    """A mode that runs every call unchanged (a base for modes that only
    observe). PyTorch: torch.utils._python_dispatch.BaseTorchDispatchMode."""

    def __torch_dispatch__(self, func: Any, types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """``func(*args, **kwargs)``, below this mode."""
        return func(*args, **(kwargs or {}))


def _get_current_dispatch_mode() -> Optional[TorchDispatchMode]:
    """The mode that handles the next call on this thread (the top of the
    stack), or None. PyTorch: same name."""
    n = _len_torch_dispatch_stack()
    return _get_dispatch_stack_at(n - 1) if n > 0 else None


def _get_current_dispatch_mode_stack() -> list[TorchDispatchMode]:
    """This thread's modes, the one that runs first last (infrastructure
    modes first, in their slots' order). PyTorch: same name."""
    return [_get_dispatch_stack_at(i) for i in range(_len_torch_dispatch_stack())]


def _push_mode(mode: TorchDispatchMode) -> None:
    """Pushes ``mode`` (an infrastructure mode takes its ``_mode_key`` slot)."""
    _push_on_torch_dispatch_stack(mode)


# Note [Entering and leaving a mode]
# ``with mode:`` must leave the mode stack and the flags as they were,
# whatever is raised wherever: an exception of the block, a RecursionError
# (which Python raises at any call once the stack is deep, e.g. in a mode
# whose handler re-enters itself), or a KeyboardInterrupt (raised at the
# first function entry, loop boundary or C call return after the signal).
# __enter__ makes one C call that changes the stack (a push that happens
# entirely or not at all), every other call before it, and after it only
# plain stores, which raise nothing: what the block restores is one tuple
# link per open block (_saved_mode_flags), not a list to append to. An
# interrupt at the push's own return makes __enter__ undo it (_unpush).
# __exit__ is written in C (_C._torch_dispatch_mode_exit): a Python
# __exit__ can be interrupted at its entry, before its first line, while a
# C one runs to completion, and an interrupt at its return finds the state
# already restored. So a mode that must undo more than its push records it
# in the link at __enter__ (FakeTensorMode: the mode it displaced from its
# slot) instead of overriding __exit__; a user mode that overrides __exit__
# in Python gives up the guarantee at its entry. An __exit__ reached at the
# recursion limit cannot even make its call, so each __exit__ also pops
# what is left above the stack length its block began with: modes of inner
# blocks that could not leave. (issue 29, items 8 and 9; PyTorch leaks a
# mode in both cases.)


def _unpush(mode: TorchDispatchMode, depth: int) -> None:
    """Pops ``mode`` if __enter__ pushed it: the stack is longer than the
    ``depth`` it had before, and the mode is in its slot or on top."""
    if _len_torch_dispatch_stack() <= depth:
        return
    key = mode.__dict__.get("_mode_key", None)
    if key is not None:
        if _C._get_dispatch_mode(key) is mode:
            _pop_torch_dispatch_stack(key)
    elif _get_dispatch_stack_at(_len_torch_dispatch_stack() - 1) is mode:
        _pop_torch_dispatch_stack(None)


def _pop_mode(k: Optional[_C._TorchDispatchModeKey] = None) -> TorchDispatchMode:
    """Pops the top mode, or the infrastructure mode of ``k``. RuntimeError if there is none."""
    return _pop_torch_dispatch_stack(k)


@contextlib.contextmanager
def _pop_mode_temporarily(k: Optional[_C._TorchDispatchModeKey] = None) -> Iterator[TorchDispatchMode]:
    """``with _pop_mode_temporarily() as mode:`` pops the top mode (or the
    infrastructure mode of slot ``k``) for the block, yielding it, and pushes
    it back after. RuntimeError if there is none. PyTorch: same name."""
    old = _pop_mode(k)
    try:
        yield old
    finally:
        _push_mode(old)


@contextlib.contextmanager
def _disable_current_modes() -> Iterator[list[TorchDispatchMode]]:
    """Pops every mode of this thread for the block, yielding them (the top
    one first), and pushes them back after. PyTorch: same name."""
    old_modes = [_pop_mode() for _ in range(_len_torch_dispatch_stack())]
    try:
        yield old_modes
    finally:
        for mode in reversed(old_modes):
            _push_mode(mode)


def _get_dispatch_mode(key: _C._TorchDispatchModeKey) -> Optional[TorchDispatchMode]:
    """The infrastructure mode in slot ``key`` (``_C._TorchDispatchModeKey.FAKE``
    or ``PROXY``) on this thread, or None. PyTorch: same name."""
    return _C._get_dispatch_mode(key)


# --- the traceable wrapper subclass protocol --------------------------------------------------------


def _has_traceable_wrapper_subclass_protocol(t: object) -> bool:
    return hasattr(t, "__tensor_flatten__") and hasattr(t, "__tensor_unflatten__")


def is_traceable_wrapper_subclass(t: object) -> bool:
    """Whether ``t`` is an instance of a tensor subclass (not opdispatch.Tensor
    itself) with ``__tensor_flatten__`` (returning the names of its inner
    tensor attributes and a context) and ``__tensor_unflatten__`` (a static
    method rebuilding an instance from ``{name: tensor}``, the context, the
    outer size and the outer stride). PyTorch: same name."""
    from .._tensor import Tensor

    return isinstance(t, Tensor) and type(t) is not Tensor and _has_traceable_wrapper_subclass_protocol(t)


def is_traceable_wrapper_subclass_type(t: type) -> bool:
    """``is_traceable_wrapper_subclass`` for a class instead of an instance.
    PyTorch: same name."""
    from .._tensor import Tensor

    return issubclass(t, Tensor) and t is not Tensor and _has_traceable_wrapper_subclass_protocol(t)


def transform_subclass(t: Any, callback: Callable[[str, Any], Any], outer_size: Optional[Any] = None,
                       outer_stride: Optional[Any] = None) -> Any:
    """A new instance of ``type(t)``, a traceable wrapper subclass, whose inner
    tensors are ``callback(name, inner)`` of ``t``'s (in the order
    ``t.__tensor_flatten__()`` names them), rebuilt by ``__tensor_unflatten__``
    with ``t``'s context and ``outer_size`` / ``outer_stride`` (default:
    ``t``'s sizes and strides, in elements). Autograd and aliasing metadata
    are not carried over. Raises AssertionError if the new instance's shape or
    strides are not the outer ones. PyTorch: same name."""
    outer_size = outer_size if outer_size is not None else t.size()
    outer_stride = outer_stride if outer_stride is not None else t.stride()
    attrs, ctx = t.__tensor_flatten__()
    inner = {attr: callback(attr, getattr(t, attr)) for attr in attrs}
    sub = type(t).__tensor_unflatten__(inner, ctx, outer_size, outer_stride)
    if sub.shape != outer_size:
        raise AssertionError(f"Expected return value from {type(t)}__tensor_unflatten__() to have shape equal to "
                             f"{outer_size}, but got: {sub.shape}")
    if sub.stride() != outer_stride:
        raise AssertionError(f"Expected return value from {type(t)}__tensor_unflatten__() to have stride equal to "
                             f"{outer_stride}, but got: {sub.stride()}")
    return sub


# --- return_and_correct_aliasing --------------------------------------------------------------------


@dataclasses.dataclass
class AliasInfo:
    """One argument or return of a schema as aliasing sees it: its alias set
    (``{"a"}`` for ``Tensor(a)``), whether it is written (``Tensor(a!)``) and
    its name (None for an unnamed return). PyTorch: same name."""

    alias_set: set[str]
    is_write: bool
    name: Optional[str]


@dataclasses.dataclass
class SchemaInfo:
    """The aliasing facts of one operator, computed once (get_alias_info).
    ``outs_write_aliases``: the write alias of each return, or None when no
    return is written; ``read_only_alias_match_indexes``: (argument index,
    return index) pairs where a return aliases an argument it does not write
    (a view). PyTorch: same name."""

    args: list[AliasInfo]
    outs: list[AliasInfo]
    is_inplace_view_op: bool
    outs_write_aliases: Optional[list[str]]
    read_only_alias_match_indexes: list[tuple[int, int]]


def _alias_info(a: Any) -> AliasInfo:
    """The AliasInfo of a schema Argument; a list's element annotation
    (``Tensor(a)[]``) counts as the list's, as torchgen reads it."""
    info = a.alias_info
    if info is None:
        return AliasInfo(alias_set=set(), is_write=False, name=a.name or None)
    infos = [info, *info.contained_types]
    return AliasInfo(alias_set={name for i in infos for name in i.before_set},
                     is_write=any(i.is_write for i in infos), name=a.name or None)


def _get_write_alias(x: AliasInfo) -> Optional[str]:
    """The one alias ``x`` writes, or None if it writes none."""
    if not x.alias_set or not x.is_write:
        return None
    if len(x.alias_set) != 1:
        raise AssertionError(f"expected one alias in a written alias set, got {sorted(x.alias_set)}")
    return next(iter(x.alias_set))


@functools.cache
def get_alias_info(func: Any) -> SchemaInfo:
    """The :class:`SchemaInfo` of ``func`` (an OpOverload), read from the alias
    annotations of its schema (``func._schema``). RuntimeError for a schema
    where some returns are written aliases and others are not, which
    return_and_correct_aliasing cannot handle. PyTorch: same name (which
    parses aten schemas with torchgen; opdispatch has one schema parser)."""
    from .. import _ops

    schema = func._schema
    args = [_alias_info(a) for a in schema.arguments]
    outs = [_alias_info(r) for r in schema.returns]
    read_only = [(i, j) for i, a in enumerate(args) for j, r in enumerate(outs)
                 if a.alias_set & r.alias_set and not a.is_write]
    writes = [_get_write_alias(r) for r in outs]
    n_written = sum(w is not None for w in writes)
    if 0 < n_written < len(writes):
        raise RuntimeError(f"Unsupported schema: {schema}")
    return SchemaInfo(args=args, outs=outs, is_inplace_view_op=_ops.Tag.inplace_view in func.tags,
                      outs_write_aliases=[w for w in writes if w is not None] if n_written else None,
                      read_only_alias_match_indexes=read_only)


def _correct_storage_aliasing(func: Any, schema_info: SchemaInfo, args: tuple[Any, ...],
                              outs: tuple[Any, ...] | list[Any]) -> None:
    """For each return of ``func`` that its schema says is a view of an
    argument (``Tensor(a) self -> Tensor(a)``), makes the returned tensor (or
    each tensor of a returned list) alias that argument's memory, without
    running an operator and without changing the return's sizes or strides
    (``_C._functionalize_unsafe_set``). AssertionError if ``func`` is not an
    OpOverload, ``args`` not a tuple, ``outs`` not a list or tuple, or an
    argument and its view differ in type where one is a traceable wrapper
    subclass. PyTorch: same name."""
    from .._ops import OpOverload
    from .._tensor import Tensor

    if not isinstance(func, OpOverload):
        raise AssertionError(f"func must be an OpOverload, got {type(func)}")
    if not isinstance(args, tuple):
        raise AssertionError(f"args must be a tuple, got {type(args)}")
    if not isinstance(outs, (list, tuple)):
        raise AssertionError(f"outs must be a list or tuple, got {type(outs)}")

    def alias_non_inplace_storage(arg: Any, ret: Any) -> None:
        rets = ret if isinstance(ret, list) else [ret]
        if type(arg) is not type(ret) and (is_traceable_wrapper_subclass_type(type(arg))
                                           or is_traceable_wrapper_subclass_type(type(ret))):
            for r in rets:
                if type(arg) is not type(r):
                    raise AssertionError(f"Called {func} with input of type {type(arg)}\n"
                                         f"and output of type {type(ret)}. But expected types to match.")
        for r in rets:
            if not isinstance(r, Tensor):
                raise AssertionError(f"expected a Tensor, got {type(r)}")
            _C._functionalize_unsafe_set(r, arg)

    for arg_idx, return_idx in schema_info.read_only_alias_match_indexes:
        alias_non_inplace_storage(args[arg_idx], outs[return_idx])


def return_and_correct_aliasing(func: Any, args: tuple[Any, ...], kwargs: Optional[dict[str, Any]], out: Any) -> Any:
    """What a wrapper subclass's ``__torch_dispatch__`` returns for a call of
    ``func`` (an OpOverload) with ``args`` / ``kwargs`` whose result, computed
    on the inner tensors and wrapped again, is ``out``, so that aliasing is as
    the schema says: a return that is a view of an argument (``Tensor(a)``)
    is made to alias that argument's memory (``_shares_memory``, its version
    counter) with its own sizes and strides kept; a written return
    (``Tensor(a!)``: an in-place or ``out=`` operator) is replaced by the
    argument it writes, ``self`` or ``out`` itself (a tuple of them for
    several). For an ``inplace_view``-tagged operator (``transpose_``,
    ``as_strided_``, ...) the written argument, the wrapper, first takes the
    geometry the operator gives it: the operator runs on it with the Python
    keys excluded, reaching its metadata-only kernel (Note [In-place view
    operators]), as PyTorch runs its meta kernel there. AssertionError for a
    view whose type differs from its base's (one being a traceable wrapper
    subclass), or an inplace_view operator writing other than one argument;
    TypeError if the arguments do not fit the schema. PyTorch: same name."""
    schema_info = get_alias_info(func)
    _correct_storage_aliasing(func, schema_info, args, out if isinstance(out, tuple) else (out,))
    if schema_info.is_inplace_view_op:
        mutated = [x for i, x in enumerate(args) if _get_write_alias(schema_info.args[i]) is not None]
        if len(mutated) != 1:
            raise AssertionError(f"{func}: expected exactly one mutated argument for an inplace_view operator, "
                                 f"got {len(mutated)}")
        with _C._DisableTorchDispatch():
            func(*args, **(kwargs or {}))
    write_aliases = schema_info.outs_write_aliases
    if write_aliases is None:
        return out
    from .._library.utils import bind_arguments

    bound = bind_arguments(func._schema, args, kwargs or {})

    def arg_from_alias(alias: str) -> Any:
        names = [a.name for a in schema_info.args if alias in a.alias_set and a.name is not None]
        if len(names) != 1:
            raise AssertionError(f"{func}: expected exactly one argument with alias {alias!r}, got {names}")
        return bound[names[0]]

    if len(write_aliases) == 1:
        return arg_from_alias(write_aliases[0])
    return type(out)(arg_from_alias(alias) for alias in write_aliases)
