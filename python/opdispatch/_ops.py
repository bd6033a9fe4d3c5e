"""opdispatch.ops: operator namespaces, packets and overloads (PyTorch's torch._ops).

``opdispatch.ops.<ns>`` is an :class:`_OpNamespace`, ``ops.<ns>.<op>`` an
:class:`OpOverloadPacket` and ``ops.<ns>.<op>.<overload>`` an
:class:`OpOverload`, whose call is one C call (``_C._DispatchOperator``).
Nothing here dispatches: the only decision made in Python is which overload a
packet call means, and even that binding runs in C (Note [Overload resolution]
in csrc/python/PythonOperator.cpp).
"""
from __future__ import annotations

import ctypes
import difflib
import enum
import functools
import importlib
import os
import weakref
from typing import Any, Callable, Iterable, Iterator, cast

from . import _C
from ._library import registry as _registry
from .autograd.grad_mode import is_grad_enabled
from .utils._python_dispatch import TorchDispatchMode, _get_current_dispatch_mode, _pop_mode_temporarily

__all__ = ["HigherOrderOperator", "OpOverload", "OpOverloadPacket", "OperatorBase", "Tag", "ops", "resolve_key"]


class Tag(enum.Enum):
    """Operator tags: PyTorch's 20 ``torch.Tag`` members, with its values
    (generated there from aten/src/ATen/native/tags.yaml). Stored with an
    operator by ``Library.define(..., tags=...)`` and reported by
    :attr:`OpOverload.tags`; the dispatcher gives them no meaning.

    ``opdispatch._C.Tag`` is this same object (see Note [Tag lives in Python]).
    As PyTorch's pybind11 enum: ``Tag.pointwise.value == int(Tag.pointwise)
    == 16``, ``Tag(16) is Tag.pointwise``, ``Tag.__members__``; unlike it, the
    enum is also iterable (``list(Tag)``).
    """

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19

    def __int__(self) -> int:
        return self.value

    __index__ = __int__


# Note [Tag lives in Python]
# PyTorch binds a C++ enum (at::Tag) as torch._C.Tag and re-exports it as
# torch.Tag. opdispatch's core stores an operator's tags by name (the C++
# Library::def takes names), so no C++ enum exists to bind; the one Python
# enum is installed as _C.Tag here. _C is only importable through the
# opdispatch package, whose __init__ imports this module, so `_C.Tag` and
# `from opdispatch._C import Tag` always see this object.
_C.Tag = Tag  # type: ignore[misc]


def _defined_overloads() -> dict[str, list[str]]:
    """{"ns::op": [overload names, "" for the default]} of every operator with
    a schema, in the order the dispatcher first saw them."""
    out: dict[str, list[str]] = {}
    for full in _C._dispatch_get_defined_op_names():
        name, overload = _C._parse_name(full)
        out.setdefault(name, []).append(overload)
    return out


#: ``_overload_names_of("ns::op")``: its overload names ("" for the default)
#: that have a schema, in the order the dispatcher first saw them; from the
#: dispatcher's index by name, so a lookup costs the operator's overloads,
#: not every operator's.
_overload_names_of = _C._dispatch_find_overload_names


class OperatorBase:
    """The Python-kernel registry shared by operators and higher-order
    operators (PyTorch: ``OperatorBase`` in torch/_ops.py).

    ``py_kernels`` maps a DispatchKey (runtime or alias) to a Python function
    and ``python_key_table`` a dispatch-mode class (or, for a
    :class:`HigherOrderOperator`, a tensor subclass) to one; both are filled
    by :meth:`py_impl`. A HigherOrderOperator dispatches to them; an
    :class:`OpOverload` consults them only while the Python dispatcher is on
    (``opdispatch._dispatch.python.enable_python_dispatcher``).
    ``_dispatch_cache`` maps a runtime key to the handler chosen for it (a
    Python function, or a DispatchKey meaning "the C++ kernel"); py_impl
    clears it."""

    def __init__(self) -> None:
        self._dispatch_cache: dict[_C.DispatchKey, Any] = {}
        self.py_kernels: dict[_C.DispatchKey, Callable[..., Any]] = {}
        self.python_key_table: dict[type, Callable[..., Any]] = {}

    def has_kernel_for_dispatch_key(self, k: _C.DispatchKey) -> bool:
        """Whether a Python kernel is registered at ``k`` (a DispatchKey,
        runtime or alias) with py_impl. PyTorch: OperatorBase.has_kernel_for_dispatch_key."""
        return k in self.py_kernels

    def has_kernel_for_any_dispatch_key(self, ks: _C.DispatchKeySet) -> bool:
        """Whether a py_impl kernel is registered at a runtime key of ``ks``
        (a DispatchKeySet). PyTorch: OperatorBase.has_kernel_for_any_dispatch_key."""
        return any(not _C._dispatch_is_alias_key(k) and ks.has(k) for k in self.py_kernels)

    def py_impl(self, k: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering ``fn`` as this operator's Python kernel for
        ``k``: a ``DispatchKey`` (``fn(*args, **kwargs)``), or a
        TorchDispatchMode subclass (``fn(mode, *args, **kwargs)``, run while
        that mode is the innermost one, with the mode popped). Returns ``fn``.

        Raises TypeError if ``k`` is none of those (tensor subclasses are
        keys of HigherOrderOperator only) or ``fn`` is not callable,
        ValueError for ``DispatchKey.Python`` (register a mode instead, as
        PyTorch says), and RuntimeError if ``k`` already has a kernel.
        PyTorch: OperatorBase.py_impl."""

        def inner(fn: Callable[..., Any]) -> Callable[..., Any]:
            table, what = self._py_impl_table(k)
            if not callable(fn):
                raise TypeError(f"py_impl for {self.name()} at {what}: Input function is required to be a "
                                f"callable but found type {type(fn)}; pass the function itself")
            if k in table:
                where = "py_kernels" if table is self.py_kernels else "python_key_table"
                raise RuntimeError(f"Trying to override a python impl for {what} on operator {self.name()}; "
                                   f"remove the existing one from {where} first")
            table[k] = fn
            self._dispatch_cache.clear()
            return fn

        return inner

    def _py_impl_table(self, k: Any) -> tuple[dict[Any, Any], str]:
        """The registry py_impl(k) writes to and ``k``'s name for messages;
        raises as py_impl documents."""
        if isinstance(k, type) and issubclass(k, TorchDispatchMode):
            return self.python_key_table, k.__name__
        if isinstance(k, type) and issubclass(k, _C.TensorBase):
            raise TypeError(f"py_impl({k.__name__}) for {self.name()}: per-tensor-subclass kernels are for "
                            f"HigherOrderOperator; for an operator, give the subclass a __torch_dispatch__ or use "
                            f"opdispatch.library.register_torch_dispatch({self.name()!r}, {k.__name__}, fn)")
        if not isinstance(k, _C.DispatchKey):
            raise TypeError(f"py_impl({k!r}) for {self.name()}: expected an opdispatch._C.DispatchKey or a "
                            f"TorchDispatchMode subclass, got {type(k).__name__}")
        if k == _C.DispatchKey.Python:
            raise ValueError(f"py_impl: {self.name()}: please register a mode for the DispatchKey.Python key instead "
                             f"(py_impl(MyMode))")
        return self.py_kernels, k.name

    def _uncache_dispatch(self, key: _C.DispatchKey) -> None:
        """Forgets the handler cached for runtime key ``key`` (recomputed on
        the next call). Registering a py_impl kernel already clears the whole
        cache. PyTorch: OpOverload._uncache_dispatch."""
        self._dispatch_cache.pop(key, None)

    def name(self) -> str:
        raise NotImplementedError


def resolve_key(op: OperatorBase, k: _C.DispatchKey) -> _C.DispatchKey:
    """The key whose kernel serves runtime key ``k`` (or Undefined) of
    ``op``, counting its py_impl kernels as registrations, by the precedence
    of the dispatch table: 1. a kernel at ``k``; 2.
    CompositeExplicitAutogradNonFunctional, then CompositeExplicitAutograd,
    for backend keys; 3. CompositeImplicitAutograd for backend and autograd
    keys whose backend has no kernel (nor CompositeExplicitAutograd); 4.
    Autograd for autograd keys; 5. FuncTorchBatchedDecomposition for
    FuncTorchBatched; 6. ``k`` itself if it has a backend fallback.

    Raises RuntimeError for AutogradOther when a CompositeImplicitAutograd
    kernel and a kernel of one of its backends both exist (ambiguous), and
    NotImplementedError naming ``op`` and ``k`` if nothing serves ``k``.
    PyTorch: torch._ops.resolve_key (OperatorEntry::computeDispatchTableEntryWithDebug).
    """
    K = _C.DispatchKey
    undefined = k == K.Undefined

    def covered(alias: _C.DispatchKey) -> bool:
        return undefined or _C._dispatch_is_included_in_alias(k, alias)

    # 1.
    if op.has_kernel_for_dispatch_key(k):
        return k
    # 2.
    for alias in (K.CompositeExplicitAutogradNonFunctional, K.CompositeExplicitAutograd):
        if covered(alias) and op.has_kernel_for_dispatch_key(alias):
            return alias
    # 3.
    if covered(K.CompositeImplicitAutograd) and op.has_kernel_for_dispatch_key(K.CompositeImplicitAutograd):
        if k == K.AutogradOther and op.has_kernel_for_any_dispatch_key(_C._dispatch_autogradother_backends):
            raise RuntimeError(f"ambiguous autogradother kernel for {op.name()}: it has a CompositeImplicitAutograd "
                               f"kernel and a kernel for one of the backends AutogradOther serves")
        has_backend_kernel = op.has_kernel_for_any_dispatch_key(
            _C._dispatch_get_backend_keyset_from_autograd(k)) or op.has_kernel_for_dispatch_key(
            K.CompositeExplicitAutograd)
        if not has_backend_kernel:
            return K.CompositeImplicitAutograd
    # 4., 5.
    for alias in (K.Autograd, K.FuncTorchBatchedDecomposition):
        if _C._dispatch_is_included_in_alias(k, alias) and op.has_kernel_for_dispatch_key(alias):
            return alias
    # 6.
    if not undefined and _C._dispatch_has_backend_fallback(k):
        return k
    raise NotImplementedError(f"could not find kernel for {op.name()} at dispatch key {k.name}: nothing is "
                              f"registered at that key, at an alias key that covers it, or as its backend fallback")


# OpOverloads whose _dispatch_cache holds something (PyTorch: cached_ops); weak, so that removed operators go.
_cached_ops: weakref.WeakSet[Any] = weakref.WeakSet()


def _clear_dispatch_caches() -> None:
    """Empties the Python dispatcher's cache of every operator: a kernel or
    fallback registration may change any answer. Called by the
    PythonDispatcher fallback when the dispatcher's kernel generation
    changed (Note [The Python dispatcher] in csrc/python/PythonDispatcher.cpp)."""
    for op in list(_cached_ops):
        op._dispatch_cache.clear()
    _cached_ops.clear()


class _PythonDispatcherOverload:
    """What the Python dispatcher asks an :class:`OpOverload` (Note [The
    Python dispatcher] in csrc/python/PythonDispatcher.cpp)."""

    def _get_dispatch(self, key: _C.DispatchKey) -> Any:
        """The handler of runtime key ``key``, computed and cached in
        ``_dispatch_cache``: the py_impl kernel that :func:`resolve_key`
        picks, else ``key`` itself, meaning "the C++ table's kernel" (also
        when nothing serves the key: the table reports that). For the Python
        key, a function running the innermost mode's ``py_impl(ModeClass)``
        kernel if there is one (with that mode popped), else the Python key's
        fallback. PyTorch: OpOverload._get_dispatch."""
        op = cast(OpOverload, self)  # the only class that mixes this in
        if key == _C.DispatchKey.Python:
            handler: Any = functools.partial(_python_key_handler, op) if op.python_key_table else key
        else:
            try:
                final = resolve_key(op, key)
            except (NotImplementedError, RuntimeError):
                final = key
            handler = op.py_kernels.get(final, key)
        op._dispatch_cache[key] = handler
        _cached_ops.add(op)
        return handler


def _python_key_handler(op: OpOverload, /, *args: Any, **kwargs: Any) -> Any:
    """The Python dispatcher's handler of the Python key for an operator with
    py_impl(ModeClass) kernels: runs the one of the innermost mode's class
    (the mode popped while it runs), else the Python key's own fallback."""
    mode = _get_current_dispatch_mode()
    kernel = None if mode is None else op.python_key_table.get(type(mode))
    if kernel is None:
        return op._call_for_dispatch_key(_C.DispatchKey.Python, *args, **kwargs)
    with _pop_mode_temporarily() as popped:
        return kernel(popped, *args, **kwargs)


# --- higher-order operators --------------------------------------------------------------

#: name -> HigherOrderOperator, behind ``opdispatch.ops.higher_order``. PyTorch: torch._ops._higher_order_ops.
_higher_order_ops: dict[str, HigherOrderOperator] = {}

#: The keys a HigherOrderOperator skips unless it registers a kernel there. PyTorch: same name.
_HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS = (
    _C.DispatchKey.PythonDispatcher,
    _C.DispatchKey.PythonTLSSnapshot,
    _C.DispatchKey.ADInplaceOrView,
    _C.DispatchKey.BackendSelect,
    _C.DispatchKey.AutocastCPU,
    _C.DispatchKey.AutocastCUDA,
    _C.DispatchKey.AutocastXPU,
)

# Note [Dispatching a higher-order operator]
# A HigherOrderOperator (cond, map_impl, ...) takes functions and pytrees,
# which no schema describes, so it has no C++ entry: it is dispatched here, in
# Python, by the same rules as an operator. Its key set is the union of the
# key sets of the tensors among its pytree-flattened arguments, plus the TLS
# included keys, minus the excluded ones, masked by its non-fallthrough keys
# (key_extractor, the Python twin of the C++ extraction); the highest key
# picks the kernel:
#  - the Python key (a mode is active or an argument is a tensor subclass
#    with __torch_dispatch__): the innermost mode's py_impl(ModeClass) kernel
#    runs with the mode popped, as __torch_dispatch__ would; a mode without
#    one is asked through __torch_dispatch__(hop, (), args, kwargs) if it sets
#    supports_higher_order_operators, else NotImplementedError. If it returns
#    NotImplemented, each tensor subclass among the arguments (subclasses
#    before their bases) is asked through its py_impl(Subclass) kernel
#    (natural calling convention, no mode argument); a tensor that belongs to
#    a mode (a FakeTensor's ``fake_mode``) uses that mode's kernel;
#  - any other key: the py_impl kernel resolve_key picks (alias keys
#    included, e.g. CompositeExplicitAutograd for every backend and
#    Undefined, Autograd for every autograd key), cached per key.
# A kernel that wants the keys below its own excludes its key itself
# (e.g. _AutoDispatchBelowAutograd) and calls the operator again.


def _to_flat_tuple(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The leaves of a call's arguments, positional first. PyTorch: same name."""
    from .utils import _pytree  # (imported on first use: `import opdispatch` does not need it)

    return _pytree.arg_tree_leaves(*args, **kwargs)


def _get_tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """The tensors among a call's pytree-flattened arguments. PyTorch: same name."""
    return tuple(t for t in _to_flat_tuple(args, kwargs) if isinstance(t, _C.TensorBase))


def key_extractor(tensors: Iterable[Any], key_mask: _C.DispatchKeySet) -> _C.DispatchKeySet:
    """(TLS included | the tensors' key sets) - TLS excluded, & ``key_mask``:
    the C++ dispatcher's key-set computation (OperatorEntry::computeDispatchKeySet).
    PyTorch: torch._ops.key_extractor."""
    key_set = _C._dispatch_tls_local_include_set()
    for tensor in tensors:
        key_set = key_set | _C._dispatch_keys(tensor)
    key_set = key_set - _C._dispatch_tls_local_exclude_set()
    return key_set & key_mask


def _compute_keyset(args: tuple[Any, ...], kwargs: dict[str, Any], non_fallthrough_keys: _C.DispatchKeySet) -> _C.DispatchKeySet:
    """The key set a higher-order operator call dispatches on. PyTorch: same name."""
    return key_extractor(_get_tensors(args, kwargs), non_fallthrough_keys)


def _overloaded_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The tensors with the Python key among a call's pytree-flattened
    arguments, one per class, a subclass before its bases and otherwise in
    argument order. PyTorch: append_overloaded_arg (the order the Python key's
    fallback uses for operators too)."""
    out: list[Any] = []
    for t in _get_tensors(args, kwargs):
        cls = type(t)
        if not _C._dispatch_keys(t).has(_C.DispatchKey.Python) or any(type(o) is cls for o in out):
            continue
        at = next((i for i, o in enumerate(out) if issubclass(cls, type(o))), len(out))
        out.insert(at, t)
    return out


class HigherOrderOperator(OperatorBase):
    """An operator that takes functions (and pytrees of tensors), e.g.
    ``cond(pred, true_fn, false_fn, operands)``: it has no schema and no C++
    entry, and is dispatched in Python by the dispatcher's rules (Note
    [Dispatching a higher-order operator]) to kernels registered with
    :meth:`py_impl`: per DispatchKey (alias keys included), per dispatch-mode
    class and per tensor subclass.

    ``HigherOrderOperator(name)`` registers the operator as
    ``opdispatch.ops.higher_order.<name>`` (a later one of the same name
    replaces it, as in PyTorch). The keys of
    ``_HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS`` are skipped until
    a kernel is registered there; :meth:`fallthrough` skips another.
    PyTorch: torch._ops.HigherOrderOperator.
    """

    def __init__(self, name: str) -> None:
        super().__init__()
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"HigherOrderOperator(name): the name must be a Python identifier (it becomes "
                             f"opdispatch.ops.higher_order.<name>), got {name!r}")
        self._name = name
        self.__name__ = name
        self._ns = "higher_order"
        if type(self) is HigherOrderOperator:
            self.__module__ = "opdispatch.ops.higher_order"
        self.non_fallthrough_keys = _C._dispatch_keyset_full()
        for key in _HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS:
            self.fallthrough(key)
        _higher_order_ops[name] = self

    def py_impl(self, k: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """As :meth:`OperatorBase.py_impl`; ``k`` may also be a tensor
        subclass (``fn(*args, **kwargs)``, for calls that reach the Python
        key because of an argument of that class). A kernel at a runtime key
        that was a fallthrough makes the key dispatch again.
        PyTorch: HigherOrderOperator.py_impl."""
        inner = super().py_impl(k)

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            inner(fn)
            if isinstance(k, _C.DispatchKey) and not _C._dispatch_is_alias_key(k) and k != _C.DispatchKey.Undefined:
                self.non_fallthrough_keys = self.non_fallthrough_keys.add(k)
            return fn

        return register

    def _py_impl_table(self, k: Any) -> tuple[dict[Any, Any], str]:
        if isinstance(k, type) and issubclass(k, _C.TensorBase):
            return self.python_key_table, k.__name__
        return super()._py_impl_table(k)

    def py_autograd_impl(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Registers ``fn`` (same arguments as the operator) as the Autograd
        kernel, for calls that need gradients: grad mode on and a tensor
        argument that requires grad. Other calls skip it and run the keys
        below autograd. ``fn`` typically applies an autograd.Function whose
        forward calls the operator below autograd (_AutoDispatchBelowAutograd).
        Returns ``fn``. PyTorch: HigherOrderOperator.py_autograd_impl."""

        @functools.wraps(fn)  # explain and coverage name and locate fn
        def maybe_run_autograd(*args: Any, **kwargs: Any) -> Any:
            if not is_grad_enabled() or not any(t.requires_grad for t in _get_tensors(args, kwargs)):
                with _C._AutoDispatchBelowAutograd():
                    return self(*args, **kwargs)
            return fn(*args, **kwargs)

        self.py_impl(_C.DispatchKey.Autograd)(maybe_run_autograd)
        return fn

    @property
    def namespace(self) -> str:
        """"higher_order"."""
        return self._ns

    def fallthrough(self, dispatch_key: _C.DispatchKey) -> None:
        """Skips runtime key ``dispatch_key``: calls go to the next key.
        ValueError for an alias key. PyTorch: HigherOrderOperator.fallthrough."""
        self.non_fallthrough_keys = self.non_fallthrough_keys.remove(dispatch_key)
        self._dispatch_cache.clear()

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        """Dispatches on the key set of the tensors among the arguments and
        the TLS (Note [Dispatching a higher-order operator])."""
        key_set = _compute_keyset(args, kwargs, self.non_fallthrough_keys)
        return self.dispatch(key_set.highestPriorityTypeId(), *args, **kwargs)

    def dispatch(self, /, dispatch_key: _C.DispatchKey, *args: Any, **kwargs: Any) -> Any:
        """Runs the kernel for runtime key ``dispatch_key`` (Note [Dispatching
        a higher-order operator]). Raises NotImplementedError naming the
        operator and key if no kernel serves it, or if the active mode (or an
        argument's tensor subclass) has no rule for this operator; TypeError
        if every handler returned NotImplemented. PyTorch: HigherOrderOperator.dispatch."""
        kernel = self._dispatch_cache.get(dispatch_key)
        if kernel is not None:
            return kernel(*args, **kwargs)
        if dispatch_key == _C.DispatchKey.Python:
            return self._dispatch_python_key(args, kwargs)
        try:
            final_key = resolve_key(self, dispatch_key)
        except NotImplementedError:
            final_key = dispatch_key
        kernel = self.py_kernels.get(final_key)
        if kernel is None:
            raise NotImplementedError(
                f"could not find kernel for HigherOrderOperator {self._name} at dispatch key {final_key.name} "
                f"(resolved from {dispatch_key.name}); register one with "
                f"{self._name}.py_impl(DispatchKey.<key>) (e.g. CompositeExplicitAutograd for every backend)")
        self._dispatch_cache[dispatch_key] = kernel
        return kernel(*args, **kwargs)

    def _dispatch_python_key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        result: Any = NotImplemented
        mode = _get_current_dispatch_mode()
        if mode is not None:
            handler = self.python_key_table.get(type(mode))
            if handler is not None:
                with _pop_mode_temporarily() as popped:
                    result = handler(popped, *args, **kwargs)
            elif getattr(mode, "supports_higher_order_operators", False):
                with _pop_mode_temporarily() as popped:
                    result = popped.__torch_dispatch__(self, (), args, kwargs)
            else:
                raise NotImplementedError(
                    f"There was no rule registered for HigherOrderOperator {self._name} and mode {mode}. Hint: "
                    f"register one with {self._name}.py_impl({type(mode).__name__}), or set "
                    f"{type(mode).__name__}.supports_higher_order_operators = True so that higher-order operators "
                    f"reach its __torch_dispatch__ (which must then handle {self._name} or return NotImplemented).")
            if result is not NotImplemented:
                return result
        overloaded = _overloaded_args(args, kwargs)
        for arg in overloaded:
            handler = self.python_key_table.get(type(arg))
            owner = getattr(arg, "fake_mode", None)
            if handler is not None:
                result = handler(*args, **kwargs)
            elif owner is not None and type(owner) in self.python_key_table:
                # A fake tensor used outside its mode: its mode's rule (PyTorch does the same for FakeTensor).
                result = self.python_key_table[type(owner)](owner, *args, **kwargs)
            else:
                raise NotImplementedError(
                    f"There was no rule registered for HigherOrderOperator {self._name} and tensor subclass "
                    f"{type(arg).__name__}; register one with {self._name}.py_impl({type(arg).__name__})")
            if result is not NotImplemented:
                return result
        raise TypeError(
            f"HigherOrderOperator '{self._name}' is not supported for the given input types: every handler returned "
            f"NotImplemented (mode: {mode}; tensor subclasses: {[type(a).__name__ for a in overloaded]}). Make "
            f"one of them handle {self._name}.")

    def __str__(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"opdispatch.ops.higher_order.{self._name}"

    def name(self) -> str:
        """The operator's name ("cond")."""
        return self._name

    def __deepcopy__(self, memo: Any = None) -> HigherOrderOperator:
        return self


class _PyOpNamespace:
    """``opdispatch.ops.higher_order``: ``ops.higher_order.<name>`` is the
    :class:`HigherOrderOperator` of that name (the built-in ones, cond and
    map_impl, are created on first use); iterating yields their names.
    PyTorch: torch._ops._HigherOrderNamespace (_PyOpNamespace in the seed)."""

    __file__ = "opdispatch.ops"

    def __init__(self, name: str, ops: dict[str, HigherOrderOperator]) -> None:
        self.__ns = name
        self.__name__ = f"opdispatch.ops.{name}"
        self._ops = ops
        self.__module__ = "opdispatch.ops"

    def __repr__(self) -> str:
        return f"opdispatch.ops.{self.__ns}"

    def _load_builtins(self) -> None:
        importlib.import_module("opdispatch._higher_order_ops")

    def __iter__(self) -> Iterator[str]:
        self._load_builtins()
        return iter(list(self._ops))

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self))

    def __getattr__(self, name: str) -> HigherOrderOperator:
        if name.startswith("__"):
            raise AttributeError(f"'_PyOpNamespace' '{self.__ns}' object has no attribute '{name}'")
        if name not in self._ops:
            self._load_builtins()
        op = self._ops.get(name)
        if op is None:
            raise AttributeError(f"'_PyOpNamespace' '{self.__ns}' object has no attribute '{name}': no "
                                 f"HigherOrderOperator of that name exists (known: {', '.join(sorted(self._ops))}); "
                                 f"create one with opdispatch._ops.HigherOrderOperator({name!r})")
        return op


class OpOverload(_C._DispatchOperator, _PythonDispatcherOverload, OperatorBase):
    """One overload of an operator, e.g. ``opdispatch.ops.mylib.foo.default``.

    Calling it binds the arguments to the schema and dispatches in a single C
    call (``_C._DispatchOperator.__call__``): a wrong argument raises
    TypeError naming the operator and argument; a missing kernel
    NotImplementedError naming the operator and key. Objects are unique per
    (packet, overload), so ``==`` and ``hash`` are by identity.
    PyTorch: torch._ops.OpOverload (whose call goes through a JIT builtin).
    """

    def __init__(self, overloadpacket: OpOverloadPacket, overload_name: str) -> None:
        _C._DispatchOperator.__init__(self, overloadpacket._qualified_op_name, overload_name)
        OperatorBase.__init__(self)
        qualified = overloadpacket._qualified_op_name
        self._overloadpacket = overloadpacket
        self._overloadname = overload_name or "default"
        self._name = qualified + ("." + overload_name if overload_name else "")
        self.__name__ = f"{qualified.split('::', 1)[1]}.{self._overloadname}"
        self.__qualname__ = self._name
        self.__module__ = overloadpacket.__module__

    # _schema and _handle come from _C._DispatchOperator (always the live definition).

    @property
    def namespace(self) -> str:
        """The operator's namespace ("mylib")."""
        return self._name.split("::", 1)[0]

    @property
    def _namespace(self) -> str:
        return self.namespace

    @property
    def _opname(self) -> str:
        return self._overloadpacket.__name__

    @property
    def overloadpacket(self) -> OpOverloadPacket:
        """The packet this overload belongs to (``opdispatch.ops.mylib.foo``)."""
        return self._overloadpacket

    @property
    def op(self) -> OpOverload:
        """The callable that runs the operator: the overload itself (PyTorch
        returns its JIT builtin here)."""
        return self

    @property
    def tags(self) -> list[Tag | str]:
        """The operator's tags as :class:`Tag` members (a tag name that is not
        a Tag, possible from C++ ``Library::def``, stays a str)."""
        return [Tag.__members__.get(t, t) for t in self._handle.tags]

    @property
    def _defined_in_python(self) -> bool:
        """Whether opdispatch.library defined this overload. PyTorch: same name."""
        return self._name in _registry.defs

    def name(self) -> str:
        """The qualified name: "ns::op" or "ns::op.overload"."""
        return self._name

    # redispatch(keyset, *args, **kwargs) comes from _C._DispatchOperator: it
    # calls the kernel for `keyset`, which the caller has already restricted
    # (e.g. `keyset & _C._after_autograd_keyset`). PyTorch: OpOverload.redispatch.

    def has_kernel_for_dispatch_key(self, k: _C.DispatchKey) -> bool:
        """Whether a kernel is registered directly at ``k`` (runtime or alias
        key), in the dispatcher or with py_impl. Raises RuntimeError if the
        operator was removed. PyTorch: OpOverload.has_kernel_for_dispatch_key."""
        return OperatorBase.has_kernel_for_dispatch_key(self, k) or _C._dispatch_has_kernel_for_dispatch_key(
            self._name, k
        )

    def has_kernel_for_any_dispatch_key(self, ks: _C.DispatchKeySet) -> bool:
        """Whether a kernel is registered at any runtime key of ``ks``.
        PyTorch: OpOverload.has_kernel_for_any_dispatch_key."""
        return _C._dispatch_has_kernel_for_any_dispatch_key(
            self._name, ks
        ) or OperatorBase.has_kernel_for_any_dispatch_key(self, ks)

    def decompose(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the operator's CompositeImplicitAutograd kernel (its
        decomposition) on the arguments, whatever kernels other keys have: the
        py_impl kernel for that key if there is one, else the dispatcher's.
        Returns ``NotImplemented`` if there is neither.
        PyTorch: OpOverload.decompose."""
        dk = _C.DispatchKey.CompositeImplicitAutograd
        if dk in self.py_kernels:
            return self.py_kernels[dk](*args, **kwargs)
        if _C._dispatch_has_kernel_for_dispatch_key(self._name, dk):
            return self._call_for_dispatch_key(dk, *args, **kwargs)
        return NotImplemented

    @property
    def is_view(self) -> bool:
        """Whether the operator returns a view of an input: some argument has
        an alias annotation and none of them is a write (``Tensor(a)``, not
        ``Tensor(a!)``; mixed read and write annotations count as not a view).
        PyTorch: OpOverload.is_view (the rule of ATen's MathBitsFallback.h)."""
        is_write = None
        for a in self._schema.arguments:
            if a.alias_info is not None:
                is_write = a.alias_info.is_write or bool(is_write)
        return is_write is False

    def __repr__(self) -> str:
        ns, op = self._name.split(".", 1)[0].split("::", 1)
        return f"<OpOverload(op='{ns}.{op}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        ns, op = self._name.split(".", 1)[0].split("::", 1)
        return f"{ns}.{op}.{self._overloadname}"

    def __copy__(self) -> OpOverload:
        return self

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        # Pickled by name; unpickling looks the overload up in opdispatch.ops.
        return _resolve_opoverload, (self._overloadpacket._qualified_op_name, self._name.partition(".")[2])

    def __deepcopy__(self, memo: Any = None) -> OpOverload:
        return self


class OpOverloadPacket(_C._DispatchPacket):
    """All overloads of one operator name, e.g. ``opdispatch.ops.mylib.foo``.

    ``packet.<overload>`` / ``packet.default`` is the :class:`OpOverload`
    (cached after the first lookup). Calling the packet (one C call,
    ``_C._DispatchPacket``) calls the first overload, in the order the
    dispatcher first saw them, whose schema the arguments bind to (Note
    [Overload resolution]); if none does, TypeError lists every candidate
    schema. The overload list follows the dispatcher: overloads defined or
    removed later are seen on the next call (which calls :meth:`_refresh`
    when ``_generation`` is stale) or lookup.
    PyTorch: torch._ops.OpOverloadPacket.
    """

    def __init__(self, qualified_op_name: str, op_name: str, module: str) -> None:
        self._qualified_op_name = qualified_op_name
        self.__name__ = op_name
        self.__qualname__ = op_name
        self.__module__ = module
        self._generation = -1
        self._overload_names: list[str] = []
        self._overload_ops: tuple[OpOverload, ...] = ()
        self._refresh()

    def _refresh(self) -> None:
        """Re-reads the overloads from the dispatcher; forgets cached
        OpOverloads of overloads that are no longer defined."""
        # Another thread may define, destroy or cache overloads of this packet
        # meanwhile (Note [Packets under threads]).
        generation = _C._dispatch_registration_generation()
        names = _overload_names_of(self._qualified_op_name)
        live = {n or "default" for n in names}
        cache = vars(self)
        for attr, value in cache.copy().items():
            if isinstance(value, OpOverload) and attr not in live and cache.get(attr) is value:
                cache.pop(attr, None)
        found: list[str] = []
        overloads: list[OpOverload] = []
        for name in names:
            try:
                overloads.append(self._overload(name))
            except RuntimeError:  # removed since the listing: the generation read above is stale now
                continue
            found.append(name)
        self._overload_names = found
        self._overload_ops = tuple(overloads)
        self._generation = generation

    def _refresh_if_stale(self) -> None:
        if self._generation != _C._dispatch_registration_generation():
            self._refresh()

    def _overload(self, overload_name: str) -> OpOverload:
        """The cached OpOverload of ``overload_name`` ("" for default), created if needed."""
        key = overload_name or "default"
        cached = self.__dict__.get(key)
        if isinstance(cached, OpOverload):
            return cached
        # setdefault: a thread caching the same overload concurrently gets the same object.
        overload: OpOverload = self.__dict__.setdefault(key, OpOverload(self, overload_name))
        return overload

    def __getattr__(self, key: str) -> OpOverload:
        # Only called for attributes not yet cached: an overload lookup.
        if key.startswith("__"):
            raise AttributeError(f"'{self}' has no attribute '{key}'")
        overload_name = "" if key == "default" else key
        names = _overload_names_of(self._qualified_op_name)
        if overload_name not in names:
            known = ", ".join(n or "default" for n in names) or "(none: the operator is no longer defined)"
            raise AttributeError(
                f"The operator '{self._qualified_op_name}' has no overload named '{key}'. "
                f"Its overloads are: {known}. Use one of those, or define '{self._qualified_op_name}.{key}'."
            )
        try:
            return self._overload(overload_name)
        except RuntimeError as e:  # removed between the listing and the lookup
            raise AttributeError(f"'{self}' has no overload '{key}': {e}") from None

    def overloads(self) -> list[str]:
        """The overload names ("default" for the unnamed one)."""
        self._refresh_if_stale()
        return [n or "default" for n in self._overload_names]

    @property
    def _schemas(self) -> dict[str, _C.FunctionSchema]:
        """{overload name ("" for default): FunctionSchema}. PyTorch: same."""
        self._refresh_if_stale()
        return {n: op._schema for n, op in zip(self._overload_names, self._overload_ops)}

    @property
    def op(self) -> OpOverloadPacket:
        """The callable resolving overloads: the packet itself."""
        return self

    def __repr__(self) -> str:
        ns, op = self._qualified_op_name.split("::", 1)
        return f"<OpOverloadPacket(op='{ns}.{op}')>"

    def __str__(self) -> str:
        return "{}.{}".format(*self._qualified_op_name.split("::", 1))

    def __copy__(self) -> OpOverloadPacket:
        return self

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _resolve_packet, (self._qualified_op_name,)

    def __deepcopy__(self, memo: Any = None) -> OpOverloadPacket:
        return self


# Note [Packets under threads]
# Registration in one thread (define / _destroy, then _sync_packet) and
# lookups in others (ops.<ns>.<op>, packet.<overload>, a stale packet's
# call) all read and write the packet's and the namespace's instance dicts,
# and any bytecode boundary may switch threads. So: _refresh iterates a copy
# of the packet's dict (dict.copy is one C call) and removes only the value
# it saw; an overload removed between the listing and its OpOverload's
# construction is left out, and the generation read before the listing is
# then stale, so the next use refreshes again; caches are filled with
# dict.setdefault so that racing lookups agree on one object; and a packet
# is checked against the generation after it is cached in its namespace, as
# a destroy that finished before the caching had no packet to sync. A lookup
# that loses a race with a destroy raises AttributeError, as any lookup of
# an undefined operator or overload does. (issue 29, item 10)


# Note [Packets are cached without setattr]
# A namespace caches each operator's packet in its instance dict, written and
# removed through that dict, not with setattr / delattr. Those intern the
# attribute name (CPython's process-wide interned-string table) and look it
# up in the type's attribute cache first. For an operator whose name is new —
# a process defining and destroying operators of fresh names — that is an
# insertion into (and later a removal from) a table of every interned string
# of the process, plus an eviction from the shared attribute cache, per
# operator: work whose memory is new every time, which a same-name
# redefinition does not do. In issue 9's define + impl + call + destroy
# cycle (benchmarks/leak.py) it was the unique-name kind's memory growth (15
# -> 0.5 B per cycle over 100k cycles) and most of its extra time in the
# ops.<ns>.<op> lookup (~0.7 -> ~0.2 us per cycle). The dict write is what setattr does for
# these names anyway: __getattr__ only runs for a name the class does not
# define, so no descriptor is involved. A name written in source
# (``ops.ns.op``) arrives interned already, so attribute loads of it keep
# matching the dict key by identity.


class _OpNamespace:
    """``opdispatch.ops.<ns>``: ``ops.<ns>.<op>`` is the op's
    :class:`OpOverloadPacket`, created on first access and then cached as a
    plain attribute (Note [Packets are cached without setattr]). Iterating
    yields the names of the operators defined in the namespace now. An operator may be called ``name``: the namespace's
    own name is kept under a private attribute. Module-like as PyTorch's:
    ``__name__`` is "opdispatch.ops.<ns>" and ``__file__`` "opdispatch.ops".
    PyTorch: torch._ops._OpNamespace (a ModuleType there, for TorchScript; a
    plain object here, see :class:`_Ops`).
    """

    __file__ = "opdispatch.ops"

    def __init__(self, name: str) -> None:
        self.__ns = name
        self.__name__ = f"opdispatch.ops.{name}"
        self.__module__ = "opdispatch.ops"

    def __repr__(self) -> str:
        return f"opdispatch.ops.{self.__ns}"

    def _op_names(self) -> list[str]:
        prefix = self.__ns + "::"
        return [n[len(prefix):] for n in _defined_overloads() if n.startswith(prefix)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._op_names())

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._op_names()))

    def _not_defined(self, op_name: str) -> AttributeError:
        """The error for ``ops.<ns>.<op_name>`` when no such operator is defined."""
        qualified = f"{self.__ns}::{op_name}"
        existing = sorted(self._op_names())
        close = difflib.get_close_matches(op_name, existing, n=3)
        listing = (
            f"No operators are defined in namespace '{self.__ns}'." if not existing
            else f"Did you mean {', '.join(close)}?" if close
            else f"Operators in namespace '{self.__ns}': {', '.join(existing)}." if len(existing) <= 20
            else f"Namespace '{self.__ns}' has {len(existing)} operators (python -m opdispatch ops {self.__ns})."
        )
        # No final period: Python's own ". Did you mean: ...?" may follow the message in a traceback.
        return AttributeError(
            f"'_OpNamespace' '{self.__ns}' object has no attribute '{op_name}': operator {qualified} is not "
            f"defined. {listing} Define it with opdispatch.library.define / Library.define, or load the "
            f"library that defines it (opdispatch.ops.load_library / opdispatch.ops.import_module)"
        )

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        # Only called when op_name is not cached yet.
        if op_name.startswith("__"):
            raise AttributeError(f"'_OpNamespace' '{self.__ns}' object has no attribute '{op_name}'")
        qualified = f"{self.__ns}::{op_name}"
        if not _overload_names_of(qualified):
            raise self._not_defined(op_name)
        new = OpOverloadPacket(qualified, op_name, f"opdispatch.ops.{self.__ns}")
        # Into the instance dict itself (Note [Packets are cached without setattr]).
        packet: OpOverloadPacket = vars(self).setdefault(op_name, new)
        # A definition change between the packet's reading of the dispatcher and
        # its caching is one _sync_packet could not see (Note [Packets under threads]).
        packet._refresh_if_stale()
        if not packet._overload_names:
            if vars(self).get(op_name) is packet:
                vars(self).pop(op_name, None)
            raise self._not_defined(op_name)
        return packet


class _Ops:
    """``opdispatch.ops``: ``ops.<namespace>.<op>.<overload>``. Any attribute
    is a namespace (created and cached on first access, as in PyTorch);
    iterating yields the namespaces that have operators defined now.
    PyTorch: torch._ops._Ops (a ModuleType there, for TorchScript; a plain
    object here, which makes the cached ``ops.<ns>`` lookup a plain dict hit).
    """

    __file__ = "_ops.py"

    def __init__(self) -> None:
        self.__name__ = "opdispatch.ops"
        self.loaded_libraries: set[str] = set()
        self.higher_order = _PyOpNamespace("higher_order", _higher_order_ops)

    def __repr__(self) -> str:
        return "opdispatch.ops"

    def __getattr__(self, name: str) -> _OpNamespace:
        if name.startswith("__"):
            raise AttributeError(f"'opdispatch.ops' has no attribute '{name}'")
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        return namespace

    def __iter__(self) -> Iterator[str]:
        seen: dict[str, None] = {}
        for qualified in _defined_overloads():
            seen.setdefault(qualified.split("::", 1)[0], None)
        return iter(seen)

    def import_module(self, module: str) -> None:
        """Imports the Python module ``module`` (a dotted name) for its
        opdispatch.library registrations; raises what the import raises.
        PyTorch: torch.ops.import_module."""
        importlib.import_module(module)

    def load_library(self, path: str | os.PathLike[str]) -> None:
        """Loads a shared library whose static initialisers register operators
        (``OPDISPATCH_LIBRARY`` blocks). Raises OSError if it cannot be loaded
        and RuntimeError if one of its registration blocks failed (that
        block's registrations are undone)."""
        path = os.path.realpath(os.fspath(path))
        ctypes.CDLL(path)
        errors = _C._dispatch_take_static_registration_errors()
        if errors:
            raise RuntimeError(f"loading {path} failed to register operators:\n" + "\n".join(errors))
        self.loaded_libraries.add(path)


ops = _Ops()


def _sync_packet(qualified_op_name: str) -> None:
    """Brings the cached packet of ``qualified_op_name`` ("ns::op" or
    "ns::op.overload"), if there is one, up to date after an overload was
    defined or removed; removes it from its namespace if no overload is left
    (so that ``ops`` forgets the operator). PyTorch: torch._ops._refresh_packet
    and the delattr in Library._destroy."""
    ns, _, name = qualified_op_name.partition("::")
    namespace = ops.__dict__.get(ns)
    if namespace is None:  # (most registrations: nothing of the namespace was looked up yet)
        return
    op_name = name.partition(".")[0]
    packet = vars(namespace).get(op_name)
    if not isinstance(packet, OpOverloadPacket):
        return
    packet._refresh()
    if not packet._overload_names and vars(namespace).get(op_name) is packet:
        vars(namespace).pop(op_name, None)  # (Note [Packets are cached without setattr])


def _resolve_opoverload(name: str, overload_name: str) -> OpOverload:
    """The OpOverload of ``name`` ("ns::op") and ``overload_name`` ("" for
    default): the first argument of Python fallbacks."""
    ns, op_name = name.split("::", 1)
    overload: OpOverload = getattr(getattr(getattr(ops, ns), op_name), overload_name or "default")
    return overload


def _resolve_packet(name: str) -> OpOverloadPacket:
    """The packet of ``name`` ("ns::op") in opdispatch.ops."""
    ns, op_name = name.split("::", 1)
    packet: OpOverloadPacket = getattr(getattr(ops, ns), op_name)
    return packet


_C._set_opoverload_resolver(_resolve_opoverload)
_registry.set_definition_listener(_sync_packet, ops.__dict__)
