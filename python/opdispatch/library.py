"""opdispatch.library: defining operators and registering kernels and
fallbacks from Python (PyTorch: torch/library.py).

Every registration belongs to a :class:`Library` and is undone when that
Library is destroyed (``_destroy()``) or garbage collected; ``opdispatch.ops``
then forgets the operators it defined.

Example::

    lib = Library("mylib", "FRAGMENT")
    lib.define("sin(Tensor x) -> Tensor")

    @impl("mylib::sin", "cpu", lib=lib)
    def sin_cpu(x):
        return opdispatch.from_numpy(np.sin(x.numpy()))

    y = opdispatch.ops.mylib.sin(x)
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import sys
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence, Union

from . import _C, _ops
from ._library import utils as _utils
from ._library.autograd import make_autograd_kernel
from ._library.utils import RegistrationHandle, parse_namespace
from ._ops import OpOverload, Tag

if TYPE_CHECKING:  # at run time: __getattr__ below
    from ._library.custom_ops import CustomOpDef, custom_op
    from ._library.fake_impl import FakeImplCtx
    from ._library.infer_schema import infer_schema

__all__ = [
    "CustomOpDef",
    "Library",
    "Tag",
    "custom_op",
    "define",
    "fallthrough_kernel",
    "get_ctx",
    "impl",
    "impl_abstract",
    "infer_schema",
    "opcheck",
    "register_autograd",
    "register_fake",
    "register_kernel",
]

# "ns::op[.overload]/DispatchKey" -> where the Python kernel was registered:
# at most one Python kernel per (operator, key), so that two libraries cannot
# silently override each other. PyTorch: torch.library._impls (a set there).
_impls: dict[str, str] = {}

# Qualified names of the operators defined from Python (shared with _ops for
# OpOverload._defined_in_python). PyTorch: torch.library._defs.
_defs: set[str] = _ops._defs

# Namespaces Library refuses to DEF or FRAGMENT. PyTorch: torch.library._reserved_namespaces.
_reserved_namespaces = ["prim"]

# Libraries created by the free functions define() / impl() without lib=:
# they live as long as the process. PyTorch: torch.library._keep_alive.
_keep_alive: list[Library] = []

# The frames _C skips when it looks for a registration's call site (the
# "registered at file:line" of kernels, _C._python_call_site): the modules that
# register on a user's behalf, and contextlib (for `with _scoped_library(...)`).
_C._dispatch_set_call_site_skip_paths([
    __file__,
    os.path.join(os.path.dirname(__file__), "_library", ""),
    os.path.join(os.path.dirname(__file__), "_custom_ops.py"),
    _ops.__file__,
    os.path.join(os.path.dirname(__file__), "_builtins", "_registry.py"),
    contextlib.__file__,
])

# A schema without the operator name, as define(qualname, schema) takes it.
NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")

# opcheck's tests, in order. PyTorch: torch.library._OPCHECK_DEFAULT_UTILS
# (which also has test_aot_dispatch_dynamic: torch.compile).
_OPCHECK_DEFAULT_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor")

# Names this module exports from opdispatch._library, imported on first use:
# `import opdispatch` imports this module (for the built-in operators) and
# should not pay for custom_op's machinery. name -> (module, attribute).
_LAZY_EXPORTS = {
    "CustomOpDef": ("custom_ops", "CustomOpDef"),
    "custom_op": ("custom_ops", "custom_op"),
    "infer_schema": ("infer_schema", "infer_schema"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY_EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _LAZY_EXPORTS[name]
    value = getattr(importlib.import_module(f"{__package__}._library.{module}"), attribute)
    globals()[name] = value
    return value


def fallthrough_kernel() -> None:
    """Pass this to :meth:`Library.impl` (or :meth:`Library.fallback`) to
    register a fallthrough: the dispatcher skips the key, as if it were not in
    the call's key set. Never called. PyTorch: torch.library.fallthrough_kernel."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


_C._set_fallthrough_kernel(fallthrough_kernel)


def _check_python_kernel_slot(qualname: str, key_name: str) -> str:
    """The ``_impls`` key of a Python kernel for ``qualname`` at ``key_name``;
    RuntimeError (naming both registration sites) if one is registered."""
    key = f"{qualname}/{key_name}"
    if key in _impls:
        raise RuntimeError(
            f"This is not allowed since there's already a kernel registered from python overriding "
            f"{qualname}'s behavior for {key_name} dispatch key and {qualname.split('::')[0]} namespace. "
            f"The existing kernel was registered at {_impls[key]}; this registration is at {_call_site()}. "
            f"Destroy the Library holding the existing kernel (Library._destroy()) first, or register at "
            f"another dispatch key."
        )
    return key


def _has_kernel_for_dispatch_key(qualname: str, key: str) -> bool:
    """Whether operator ``qualname`` exists and has a kernel registered at ``key``."""
    try:
        return _C._dispatch_has_kernel_for_dispatch_key(qualname, key)
    except RuntimeError:  # no such operator
        return False


def _call_site() -> str:
    """"file:line" of the user's registration (interned: registrations in a
    loop or from one module share the strings kept per kernel)."""
    site = _C._python_call_site()
    return sys.intern(f"{site[0]}:{site[1]}") if site else "(unknown)"


class Library:
    """A set of registrations for one namespace, made from Python.

    Args:
        ns (str): the namespace ("mylib"); "_" for backend fallbacks.
        kind (str): "DEF" (defines the namespace; one per namespace),
            "FRAGMENT" (more definitions and kernels) or "IMPL" (kernels only).
        dispatch_key (str): the default dispatch key of :meth:`impl` and
            :meth:`fallback` ("" for none).

    Raises ValueError for an unknown kind or dispatch key name, or a reserved
    namespace ("prim") with DEF/FRAGMENT; RuntimeError if another DEF library
    already holds ``ns`` (naming where).

    Registrations are undone by :meth:`_destroy` or when the object is
    garbage collected (weakref.finalize); ``opdispatch.ops`` then forgets the
    operators this library defined. PyTorch: torch.library.Library.
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind!r}; expected 'DEF', 'IMPL' or 'FRAGMENT'")
        if ns in _reserved_namespaces and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        filename, lineno = _C._python_call_site() or ("<unknown>", 0)
        self.m: Any = _C._dispatch_library(kind, ns, dispatch_key, filename, lineno)
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._op_defs: set[str] = set()
        self._op_impls: set[str] = set()
        self._registration_handles: list[RegistrationHandle] = []
        # weakref.finalize rather than __del__: it runs once, from _destroy()
        # or when the object dies, and keeps what it needs alive (PyTorch does the same).
        self._finalizer = weakref.finalize(
            self, _del_library, self.m, _impls, self._op_impls, _defs, self._op_defs, self._registration_handles
        )

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def _live(self, what: str) -> Any:
        if self.m is None:
            raise RuntimeError(f"{what}: {self!r} was destroyed; create a new Library to register more")
        return self.m

    def define(self, schema: str, alias_analysis: str = "", *, tags: Tag | Sequence[Tag] = ()) -> str:
        """Defines an operator in this library's namespace.

        Args:
            schema (str): "name[.overload](args) -> returns", e.g.
                "sum(Tensor self) -> Tensor"; the namespace may be given
                ("mylib::sum(...)") and must then be this library's.
            alias_analysis (str): "", "FROM_SCHEMA" or "CONSERVATIVE" (accepted, not used).
            tags (Tag | Sequence[Tag]): stored with the operator (:attr:`OpOverload.tags`).

        Returns:
            the qualified name, "ns::name" or "ns::name.overload" (PyTorch
            returns the bare name without namespace or overload).

        Raises ValueError for a malformed schema (with the position),
        RuntimeError for an invalid alias_analysis, an IMPL library, a
        namespace mismatch or an operator that is already defined (naming
        where), TypeError for a tag that is not a :class:`Tag`.
        PyTorch: torch.library.Library.define.
        """
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis!r}; expected '', FROM_SCHEMA or CONSERVATIVE")
        if isinstance(tags, Tag):
            tags = (tags,)
        tags = tuple(tags)
        for t in tags:
            if not isinstance(t, Tag):
                raise TypeError(f"define({schema!r}): tags must be opdispatch.Tag members, got {t!r}")
        m = self._live("define")
        name = schema.split("(", 1)[0].strip()
        qualname = name if "::" in name else f"{self.ns}::{name}"
        m.define(schema, alias_analysis, [t.name for t in tags])
        self._op_defs.add(qualname)
        _defs.add(qualname)
        _ops._sync_packet(qualname)
        return qualname

    def impl(
        self,
        op_name: str | OpOverload,
        fn: Callable[..., Any],
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
    ) -> None:
        """Registers the Python function ``fn`` as the kernel of an operator at a dispatch key.

        Args:
            op_name (str | OpOverload): "name", "name.overload",
                "ns::name[.overload]" or an OpOverload of this namespace.
            fn (Callable): called with the operator's arguments (keyword-only
                ones as keywords; with ``with_keyset`` the call's
                DispatchKeySet first); returns its results.
                :func:`fallthrough_kernel` registers a fallthrough.
            dispatch_key (str): a dispatch key name ("CPU", "AutogradCPU",
                "CompositeExplicitAutograd", ...); default: the library's
                key, else CompositeImplicitAutograd.
            with_keyset (bool): pass the DispatchKeySet first, for redispatch.

        Raises TypeError if ``fn`` is not callable; RuntimeError if
        ``op_name`` is neither str nor OpOverload, if a Python kernel is
        already registered for this operator and key (naming both
        registration sites; PyTorch: the ``_impls`` check in Library.impl),
        for a Meta kernel on an operator with a CompositeImplicitAutograd
        kernel (PyTorch rule: let it decompose), for a namespace or key
        mismatch with the library; ValueError for an unknown key name.
        PyTorch: torch.library.Library.impl.
        """
        m = self._live("impl")
        name, key = self._check_impl(op_name, fn, dispatch_key)
        site = _call_site()
        # (All positional: passing `site` by keyword costs time per call, and
        # pybind11's keyword path makes a one-time ~0.5-1 MB allocation.)
        m.impl(name, dispatch_key or self.dispatch_key, fn, with_keyset, False, site)
        _impls[key] = site
        self._op_impls.add(key)

    def _check_impl(self, op_name: str | OpOverload, fn: Callable[..., Any], dispatch_key: str) -> tuple[str, str]:
        """The checks of :meth:`impl`; returns (the name to register, its ``_impls`` key)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        if isinstance(op_name, str):
            name = op_name
        elif isinstance(op_name, OpOverload):
            name = op_name._name
        else:
            raise RuntimeError(
                "impl should be passed either a name or an OpOverload object as the first argument, "
                f"not {type(op_name).__name__}"
            )
        qualname = name if "::" in name else f"{self.ns}::{name}"
        key_name = dispatch_key or "CompositeImplicitAutograd"
        key = _check_python_kernel_slot(qualname, key_name)
        if key_name == "Meta" and _has_kernel_for_dispatch_key(qualname, "CompositeImplicitAutograd"):
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator '{qualname}', because it has a "
                f"CompositeImplicitAutograd kernel. Instead let the operator decompose, and make sure the "
                f"operators it decomposes into have meta kernels."
            )
        return name, key

    def _impl_handle(
        self, op_name: str | OpOverload, fn: Callable[..., Any], dispatch_key: str = "", *, with_keyset: bool = False
    ) -> RegistrationHandle:
        """:meth:`impl` as a registration that can be undone on its own
        (``handle.destroy()``; destroying the library undoes it too): for
        fake impls and the legacy API's placeholder kernels. PyTorch: the
        handles of Library._register_fake."""
        self._live("impl")
        name, key = self._check_impl(op_name, fn, dispatch_key)
        filename, lineno = _C._python_call_site() or ("(unknown)", 0)
        site = f"{filename}:{lineno}"
        m = _C._dispatch_library("FRAGMENT", self.ns, "", filename, lineno)
        m.impl(name, dispatch_key or self.dispatch_key, fn, with_keyset, False, site)
        _impls[key] = site

        def undo() -> None:
            m.reset()
            _impls.pop(key, None)

        return self._register_handle(undo)

    def _register_handle(self, undo: Callable[[], None]) -> RegistrationHandle:
        """A handle running ``undo`` once: when destroyed, or when this library is."""
        handles = self._registration_handles

        def destroy() -> None:
            undo()
            if handle in handles:
                handles.remove(handle)

        handle = RegistrationHandle(destroy)
        handles.append(handle)
        return handle

    def fallback(self, fn: Callable[..., Any], dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Registers ``fn`` as the backend fallback of a dispatch key: the
        kernel of every operator that has no kernel of its own for that key.

        Args:
            fn (Callable): called as ``fn(op, *args, **kwargs)`` (with
                ``with_keyset``: ``fn(keyset, op, *args, **kwargs)``, PyTorch's order), where
                ``op`` is the operator's :class:`OpOverload`; returns the
                operator's results. :func:`fallthrough_kernel` registers a
                fallthrough fallback.
            dispatch_key (str): default: the library's key. An alias key
                registers the fallback for each of its runtime keys.
            with_keyset (bool): pass the call's DispatchKeySet first.

        A fallback opdispatch installs itself for the key (the autograd
        fallback, fallthroughs such as ADInplaceOrView's) is replaced, and
        restored when this one goes (Note [Default fallbacks]).

        Raises TypeError if ``fn`` is not callable; RuntimeError unless the
        library is ``Library("_", "IMPL", ...)``, or if the key already has a
        user's fallback (naming it; several are allowed at
        AutogradPrivateUse1, as in PyTorch); ValueError without a dispatch key
        or for an unknown one. PyTorch: torch.library.Library.fallback.
        """
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        if self.ns != "_":
            raise RuntimeError(
                f'Fallback can only be registered using a library on the global namespace "_" '
                f'(Library("_", "IMPL", key)), but it is {self.ns}'
            )
        if dispatch_key == "":
            raise ValueError("fallback() needs a dispatch key: pass one, or create the Library with one")
        m = self._live("fallback")
        if fn is fallthrough_kernel:
            m.fallback_fallthrough(dispatch_key)
        else:
            m.fallback(dispatch_key, fn, with_keyset)

    def _destroy(self) -> None:
        """Undoes every registration of this library now (idempotent)."""
        self._finalizer()
        self.m = None


def _del_library(
    m: Any,
    captured_impls: dict[str, str],
    op_impls: set[str],
    captured_defs: set[str],
    op_defs: set[str],
    registration_handles: list[RegistrationHandle],
) -> None:
    # Runs once: from Library._destroy or when the Library is collected.
    m.reset()
    for key in op_impls:
        captured_impls.pop(key, None)
    op_impls.clear()
    captured_defs.difference_update(op_defs)
    for handle in reversed(list(registration_handles)):
        handle.destroy()
    registration_handles.clear()
    for qualname in op_defs:
        _ops._sync_packet(qualname)
    op_defs.clear()


@contextlib.contextmanager
def _scoped_library(ns: str, kind: str, dispatch_key: str = "") -> Iterator[Library]:
    """``with _scoped_library(ns, kind) as lib:`` a :class:`Library` destroyed
    on exit. PyTorch: torch.library._scoped_library."""
    lib = Library(ns, kind, dispatch_key)
    try:
        yield lib
    finally:
        lib._destroy()


def _library_for(namespace: str, lib: Library | None) -> Library:
    if lib is not None:
        return lib
    new = Library(namespace, "FRAGMENT")
    _keep_alive.append(new)
    return new


@functools.singledispatch
def define(qualname: str, schema: str, *, lib: Library | None = None, tags: Tag | Sequence[Tag] = ()) -> None:
    """Defines the operator ``qualname`` with a schema that omits the name.

    Args:
        qualname (str): "namespace::name" (or "namespace::name.overload").
        schema (str): "(Tensor x) -> Tensor".
        lib (Library | None): ties the operator's lifetime to ``lib``;
            default: a FRAGMENT library that lives as long as the process.
        tags (Tag | Sequence[Tag]): stored with the operator.

    Raises ValueError if ``qualname`` is not a str of the form "ns::name" or
    ``schema`` includes a name, plus what :meth:`Library.define` raises.
    The legacy form ``define(lib, schema, alias_analysis="")`` returns a
    decorator that defines the operator and registers the decorated function
    as its CompositeImplicitAutograd kernel.
    PyTorch: torch.library.define.

    Example::

        define("mylib::sin", "(Tensor x) -> Tensor")
    """
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, got {type(qualname)}")
    namespace, name = parse_namespace(qualname)
    if not NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(
            f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" but got '
            f'"{schema}"'
        )
    _library_for(namespace, lib).define(name + schema, alias_analysis="", tags=tags)


@define.register(Library)
def _(lib: Library, schema: str, alias_analysis: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The legacy torch.library.define(lib, schema): a decorator."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        name = lib.define(schema, alias_analysis)
        lib.impl(name, f)
        return f

    return wrap


def _device_type_to_key(device_type: str) -> str:
    """The dispatch key name of a device type: cpu -> CPU, cuda -> CUDA,
    meta -> Meta, privateuseone -> PrivateUse1, "default" ->
    CompositeExplicitAutograd. Raises ValueError otherwise."""
    if device_type == "default":
        return "CompositeExplicitAutograd"
    try:
        return _C._dispatch_key_for_device(device_type)
    except ValueError:
        raise ValueError(
            f"impl: unknown device type '{device_type}'. Expected one of cpu, cuda, meta, privateuseone, "
            f"'default' (all devices: CompositeExplicitAutograd), or a dispatch key name such as CPU or "
            f"AutogradCPU."
        ) from None


@functools.singledispatch
def impl(
    qualname: str | OpOverload,
    types: str | Sequence[str],
    func: Callable[..., Any] | None = None,
    *,
    lib: Library | None = None,
) -> Any:
    """Registers ``func`` as the implementation of operator ``qualname`` for device types.

    Args:
        qualname (str | OpOverload): "namespace::name[.overload]".
        types (str | Sequence[str]): device types ("cpu", "cuda", "meta",
            "privateuseone"; "default" for every device, i.e.
            CompositeExplicitAutograd) or dispatch key names ("CPU", "AutogradCPU").
        func (Callable | None): the kernel; if omitted, ``impl`` returns a decorator.
        lib (Library | None): ties the registration's lifetime to ``lib``;
            default: a FRAGMENT library that lives as long as the process.

    Returns ``func`` (the decorator returns its argument; PyTorch 2.4 returns None).
    Raises ValueError for an unknown device type (PyTorch raises
    RuntimeError) or a malformed qualname, plus what :meth:`Library.impl`
    raises. The legacy form ``impl(lib, name, dispatch_key="")`` returns a
    decorator registering at ``dispatch_key`` in ``lib``.
    PyTorch: torch.library.impl.

    Example::

        @impl("mylib::sin", "cpu")
        def sin_cpu(x):
            return opdispatch.from_numpy(np.sin(x.numpy()))
    """
    if isinstance(qualname, OpOverload):
        qualname = qualname._name
    if isinstance(types, str):
        types = (types,)
    keys: dict[str, None] = {}
    for typ in types:
        keys[typ if _C._parse_dispatch_key(typ) is not None else _device_type_to_key(typ)] = None

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        namespace, _ = parse_namespace(qualname.split(".", 1)[0])
        use_lib = _library_for(namespace, lib)
        for key in keys:
            use_lib.impl(qualname, f, key)
        return f

    if func is None:
        return register
    return register(func)


@impl.register(Library)
def _(lib: Library, name: str, dispatch_key: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The legacy torch.library.impl(lib, name, dispatch_key): a decorator."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        lib.impl(name, f, dispatch_key)
        return f

    return wrap


# What register_kernel / register_fake / register_autograd accept as the operator.
_op_identifier = Union[str, OpOverload, "CustomOpDef"]


def _custom_op_of(api: str, op: Any) -> Optional[CustomOpDef]:
    """The CustomOpDef of ``op`` (None for an operator custom_op did not
    make); ValueError if ``op`` is not a name, an OpOverload or a CustomOpDef."""
    from ._library import custom_ops

    if not isinstance(op, (str, OpOverload, custom_ops.CustomOpDef)):
        raise ValueError(
            f"{api}(op): got unexpected type for op: {type(op).__name__}; expected a qualified name "
            f'("ns::name[.overload]"), an OpOverload (opdispatch.ops.ns.name.default) or a CustomOpDef'
        )
    return custom_ops._maybe_get_opdef(op)


def register_kernel(
    op: _op_identifier,
    device_types: Union[str, Sequence[str], None],
    func: Optional[Callable[..., Any]] = None,
    /,
    *,
    lib: Optional[Library] = None,
) -> Any:
    """Registers ``func`` as the implementation of ``op`` for device types; a
    decorator when ``func`` is omitted.

    Args:
        op (str | OpOverload | CustomOpDef): "ns::name[.overload]", an
            OpOverload, or a custom op.
        device_types (None | str | Sequence[str]): "cpu", "cuda", ... or a
            sequence of them; None registers for every device type
            (CompositeExplicitAutograd) — only for implementations that truly
            are device-agnostic.
        lib (Library | None): ties the registration's lifetime to ``lib``
            (ignored for custom ops, whose kernels live with the operator).

    For a custom op this is :meth:`CustomOpDef.register_kernel` (it replaces
    an earlier kernel for the same device type); otherwise :func:`impl`, so a
    second Python kernel for the same operator and device type raises
    RuntimeError naming where the first was registered. Raises ValueError for
    an unexpected ``op`` or an unknown device type.
    PyTorch: torch.library.register_kernel.
    """
    opdef = _custom_op_of("register_kernel", op)
    if opdef is not None:
        return opdef.register_kernel(device_types, func)
    name = op._name if isinstance(op, OpOverload) else op
    return impl(name, "CompositeExplicitAutograd" if device_types is None else device_types, func, lib=lib)


def register_fake(
    op: _op_identifier,
    func: Optional[Callable[..., Any]] = None,
    /,
    *,
    lib: Optional[Library] = None,
) -> Any:
    """Registers a fake impl ("meta kernel") for ``op``; a decorator when
    ``func`` is omitted. Returns ``func``.

    A fake impl has the operator's signature and computes its outputs'
    metadata from the inputs' (shapes, dtypes, devices) without touching
    data: it runs whenever the operator is called with meta tensors (the
    "Meta" dispatch key; opcheck's fake check does that). Use only
    operations on the inputs' metadata and on other operators that have
    meta kernels; for an output size that depends on the data, use
    ``get_ctx().new_dynamic_size()``.

    For a custom op this is :meth:`CustomOpDef.register_fake` (replacing an
    earlier one). Otherwise raises ValueError if the operator is not
    defined, and RuntimeError if it already has a fake impl (naming where it
    was registered), another Meta kernel, or a CompositeImplicitAutograd
    kernel. ``lib`` ties the registration's lifetime to that Library.
    PyTorch: torch.library.register_fake (which also runs it on FakeTensors).

    Example::

        @register_fake("mylib::nonzero")
        def _(x):
            return x.new_empty([get_ctx().new_dynamic_size(), x.dim()], dtype=opdispatch.int64)
    """
    opdef = _custom_op_of("register_fake", op)
    if opdef is not None:
        return opdef.register_fake if func is None else opdef.register_fake(func)
    qualname = op._name if isinstance(op, OpOverload) else op

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        from ._library import fake_impl

        namespace, _ = parse_namespace(qualname)
        fake_impl.register(qualname, f, _call_site(), _library_for(namespace, lib))
        return f

    return register if func is None else register(func)


def impl_abstract(qualname: _op_identifier, func: Optional[Callable[..., Any]] = None, *,
                  lib: Optional[Library] = None) -> Any:
    """The former name of :func:`register_fake` (same arguments and result);
    warns FutureWarning. PyTorch: torch.library.impl_abstract (deprecated in 2.4)."""
    warnings.warn(
        "`opdispatch.library.impl_abstract` was renamed to `opdispatch.library.register_fake`. Please use that "
        "instead; `impl_abstract` will be removed in a future version.",
        FutureWarning,
        stacklevel=2,
    )
    return register_fake(qualname, func, lib=lib)


def register_autograd(
    op: _op_identifier,
    backward: Callable[..., Any],
    /,
    *,
    setup_context: Optional[Callable[..., Any]] = None,
    lib: Optional[Library] = None,
) -> None:
    """Registers an autograd formula for ``op``: its Autograd kernel runs the
    operator below autograd and, when an input requires grad (and grad mode
    is on), records a node whose backward is ``backward``.

    ``backward(ctx, *grads)`` gets one gradient per output (zeros for
    outputs that received none, a list for a Tensor[] output) and returns a
    gradient per positional input — a tuple, or a bare value for one input —
    with None for non-tensor inputs and inputs without a gradient; all
    positional inputs or only those the caller passed. Checked at backward
    (RuntimeError): the count, a gradient for a non-tensor input, a value
    that is not a tensor or None, the length of a list for a Tensor[] input.
    ``setup_context(ctx, inputs, output)`` — ``(ctx, inputs,
    keyword_only_inputs, output)`` if it has a ``keyword_only_inputs``
    parameter — runs after the forward (inputs with defaults filled in) and
    saves what backward needs: ``ctx.save_for_backward(*tensors)``,
    attributes, ``ctx.mark_non_differentiable(*outputs)``;
    ``ctx.needs_input_grad`` tells which inputs need a gradient.

    Works for custom ops (:meth:`CustomOpDef.register_autograd`, replacing
    an earlier formula), operators made with :func:`define` and operators of
    C++ extensions. Raises ValueError for an unexpected ``op`` or an
    undefined operator; RuntimeError for an operator that mutates its
    arguments, returns a view, returns nothing, or already has a Python
    Autograd kernel; NotImplementedError for keyword-only tensor arguments.
    ``lib`` ties the registration's lifetime to that Library.
    PyTorch: torch.library.register_autograd.

    Example::

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * x.cos()

        register_autograd("mylib::numpy_sin", backward, setup_context=setup_context)
    """
    opdef = _custom_op_of("register_autograd", op)
    if opdef is not None:
        opdef.register_autograd(backward, setup_context=setup_context)
        return
    qualname = op._name if isinstance(op, OpOverload) else op
    overload = _utils.lookup_op(qualname)
    schema = overload._schema
    if not _utils.is_functional_schema(schema):
        raise RuntimeError(
            f"Cannot register autograd formula for non-functional operator {qualname} with schema {schema}. "
            f"Please create a functional operator and register an autograd formula for that."
        )
    if _utils.has_kwarg_only_tensors(schema):
        raise NotImplementedError(
            f"register_autograd with kwarg-only Tensor args. In the original definition of the op, please make "
            f"your tensors not kwarg-only. Got: {schema}"
        )
    namespace, opname = parse_namespace(qualname)
    kernel = make_autograd_kernel(overload, backward, setup_context)
    _library_for(namespace, lib).impl(opname, kernel, "Autograd", with_keyset=True)


def get_ctx() -> FakeImplCtx:
    """The context of the fake impl running now (see :func:`register_fake`):
    ``get_ctx().new_dynamic_size(min=0, max=None)`` gives a data-dependent
    output size. Raises RuntimeError outside a fake impl.
    PyTorch: torch.library.get_ctx."""
    from ._library import fake_impl

    return fake_impl.get_ctx()


def opcheck(
    op: Union[OpOverload, _ops.OpOverloadPacket, CustomOpDef],
    args: tuple[Any, ...],
    kwargs: Optional[dict[str, Any]] = None,
    *,
    test_utils: Union[str, Sequence[str]] = _OPCHECK_DEFAULT_UTILS,
    raise_exception: bool = True,
) -> dict[str, Any]:
    """Checks that an operator's registrations are consistent with what it
    does on the sample ``args`` / ``kwargs``, and returns
    ``{test name: "SUCCESS" | the exception}``.

    Tests (``test_utils``, a name or a sequence; default all three):

    - ``test_schema``: the arguments the call mutates are exactly the ones
      the schema marks mutable (``Tensor(a!)``), and outputs alias inputs
      (or each other) only where the schema declares it;
    - ``test_autograd_registration``: with inputs that require grad, the
      operator has an autograd kernel (Autograd, Autograd<Backend>) or is
      CompositeImplicitAutograd — not a backend kernel that records autograd
      history itself;
    - ``test_faketensor``: the operator runs on meta copies of the inputs
      (its fake impl / Meta kernel), and the outputs' metadata (number,
      shapes — a dimension from ``new_dynamic_size`` may differ — dtypes,
      requires_grad, aliasing of inputs) equals the real outputs'.

    Each test works on copies of the inputs. With ``raise_exception`` the
    first failure raises ``OpCheckError`` (from opdispatch._library.opcheck,
    naming the test and the cause). Raises ValueError for an ``op`` that is
    not an OpOverload, a packet with one overload, or a CustomOpDef, or for
    an unknown test name. opcheck tests registrations; use
    :func:`opdispatch.autograd.gradcheck` to test the formulas' math.
    PyTorch: torch.library.opcheck (whose test_aot_dispatch_dynamic needs
    torch.compile and has no equivalent here).
    """
    from ._library import opcheck as checks

    return checks.opcheck(op, args, kwargs, test_utils=test_utils, raise_exception=raise_exception)
