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
import enum
import importlib
import os
from typing import Any, Callable, Iterator

from . import _C

__all__ = ["OpOverload", "OpOverloadPacket", "OperatorBase", "Tag", "ops"]


class Tag(enum.Enum):
    """Operator tags (PyTorch: ``torch.Tag``, generated from
    aten/src/ATen/native/tags.yaml). Stored with an operator by
    ``Library.define(..., tags=...)`` and reported by :attr:`OpOverload.tags`.
    The dispatcher itself gives them no meaning."""

    core = "core"
    data_dependent_output = "data_dependent_output"
    dynamic_output_shape = "dynamic_output_shape"
    flexible_layout = "flexible_layout"
    generated = "generated"
    inplace_view = "inplace_view"
    maybe_aliasing_or_mutating = "maybe_aliasing_or_mutating"
    needs_fixed_stride_order = "needs_fixed_stride_order"
    nondeterministic_bitwise = "nondeterministic_bitwise"
    nondeterministic_seeded = "nondeterministic_seeded"
    pointwise = "pointwise"
    pt2_compliant_tag = "pt2_compliant_tag"
    view_copy = "view_copy"

    def __repr__(self) -> str:
        return f"opdispatch.Tag.{self.name}"


# Qualified names ("ns::op" or "ns::op.overload") of operators defined by
# opdispatch.library (kept here, below library.py, for OpOverload._defined_in_python).
# PyTorch: torch.library._defs.
_defs: set[str] = set()


def _defined_overloads() -> dict[str, list[str]]:
    """{"ns::op": [overload names, "" for the default]} of every operator with
    a schema, in the order the dispatcher first saw them."""
    out: dict[str, list[str]] = {}
    for full in _C._dispatch_get_defined_op_names():
        name, overload = _C._parse_name(full)
        out.setdefault(name, []).append(overload)
    return out


def _overload_names_of(qualified_op_name: str) -> list[str]:
    return _defined_overloads().get(qualified_op_name, [])


class OperatorBase:
    """The Python-kernel registry shared by operators (PyTorch: ``OperatorBase``
    in torch/_ops.py): ``py_kernels`` maps a DispatchKey to a Python function
    registered with :meth:`py_impl`. The registry is data for layers above
    (decompositions, a Python dispatcher); calls do not consult it."""

    def __init__(self) -> None:
        self.py_kernels: dict[_C.DispatchKey, Callable[..., Any]] = {}

    def has_kernel_for_dispatch_key(self, k: _C.DispatchKey) -> bool:
        """Whether a Python kernel is registered at ``k`` with py_impl."""
        return k in self.py_kernels

    def has_kernel_for_any_dispatch_key(self, ks: _C.DispatchKeySet) -> bool:
        """Whether a py_impl kernel is registered at a runtime key of ``ks``."""
        return any(not _C._dispatch_is_alias_key(k) and ks.has(k) for k in self.py_kernels)

    def py_impl(self, k: _C.DispatchKey) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering ``fn`` as this operator's Python kernel for
        dispatch key ``k`` (a ``DispatchKey``). Returns ``fn``.

        Raises TypeError if ``k`` is not a DispatchKey, ValueError for
        ``DispatchKey.Python`` (register a mode instead, as PyTorch says), and
        RuntimeError if ``k`` already has a py_impl kernel.
        PyTorch: OperatorBase.py_impl."""

        def inner(fn: Callable[..., Any]) -> Callable[..., Any]:
            if not isinstance(k, _C.DispatchKey):
                raise TypeError(f"py_impl({k!r}): expected an opdispatch._C.DispatchKey, got {type(k).__name__}")
            if k == _C.DispatchKey.Python:
                raise ValueError(
                    f"py_impl: {self.name()}: please register a mode for the DispatchKey.Python key instead"
                )
            if k in self.py_kernels:
                raise RuntimeError(
                    f"Trying to override a python impl for {k} on operator {self.name()}; "
                    f"remove the existing one from py_kernels first"
                )
            self.py_kernels[k] = fn
            return fn

        return inner

    def name(self) -> str:
        raise NotImplementedError


class OpOverload(_C._DispatchOperator, OperatorBase):
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
        return self._name in _defs

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

    def __repr__(self) -> str:
        ns, op = self._name.split(".", 1)[0].split("::", 1)
        return f"opdispatch.ops.{ns}.{op}.{self._overloadname}"

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
        generation = _C._dispatch_registration_generation()
        names = _overload_names_of(self._qualified_op_name)
        live = {n or "default" for n in names}
        for attr in [a for a, v in vars(self).items() if isinstance(v, OpOverload) and a not in live]:
            delattr(self, attr)
        self._overload_names = names
        self._overload_ops = tuple(self._overload(n) for n in names)
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
        overload = OpOverload(self, overload_name)
        setattr(self, key, overload)
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
        return f"opdispatch.ops.{ns}.{op}"

    def __str__(self) -> str:
        return "{}.{}".format(*self._qualified_op_name.split("::", 1))

    def __copy__(self) -> OpOverloadPacket:
        return self

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return _resolve_packet, (self._qualified_op_name,)

    def __deepcopy__(self, memo: Any = None) -> OpOverloadPacket:
        return self


class _OpNamespace:
    """``opdispatch.ops.<ns>``: ``ops.<ns>.<op>`` is the op's
    :class:`OpOverloadPacket`, created on first access and then cached as a
    plain attribute. Iterating yields the names of the operators defined in
    the namespace now. An operator may be called ``name``: the namespace's
    own name is kept under a private attribute. PyTorch: torch._ops._OpNamespace
    (a ModuleType there, for TorchScript; a plain object here).
    """

    def __init__(self, name: str) -> None:
        self.__ns = name
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

    def __getattr__(self, op_name: str) -> OpOverloadPacket:
        # Only called when op_name is not cached yet.
        if op_name.startswith("__"):
            raise AttributeError(f"'_OpNamespace' '{self.__ns}' object has no attribute '{op_name}'")
        qualified = f"{self.__ns}::{op_name}"
        if not _overload_names_of(qualified):
            existing = self._op_names()
            listing = (
                f"Operators in namespace '{self.__ns}': {', '.join(sorted(existing))}."
                if existing
                else f"No operators are defined in namespace '{self.__ns}'."
            )
            raise AttributeError(
                f"'_OpNamespace' '{self.__ns}' object has no attribute '{op_name}': operator {qualified} is not "
                f"defined. {listing} Define it with opdispatch.library.define / Library.define, or load the "
                f"library that defines it (opdispatch.ops.load_library / opdispatch.ops.import_module)."
            )
        packet = OpOverloadPacket(qualified, op_name, f"opdispatch.ops.{self.__ns}")
        setattr(self, op_name, packet)
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

    def load_library(self, path: str | os.PathLike) -> None:
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
    name = qualified_op_name.split(".", 1)[0]
    ns, op_name = name.split("::", 1)
    namespace = ops.__dict__.get(ns)
    if namespace is None:
        return
    packet = vars(namespace).get(op_name)
    if not isinstance(packet, OpOverloadPacket):
        return
    packet._refresh()
    if not packet._overload_names:
        delattr(namespace, op_name)


def _resolve_opoverload(name: str, overload_name: str) -> OpOverload:
    """The OpOverload of ``name`` ("ns::op") and ``overload_name`` ("" for
    default): the first argument of Python fallbacks."""
    ns, op_name = name.split("::", 1)
    return getattr(getattr(getattr(ops, ns), op_name), overload_name or "default")


def _resolve_packet(name: str) -> OpOverloadPacket:
    """The packet of ``name`` ("ns::op") in opdispatch.ops."""
    ns, op_name = name.split("::", 1)
    return getattr(getattr(ops, ns), op_name)


_C._set_opoverload_resolver(_resolve_opoverload)
