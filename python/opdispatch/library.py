"""opdispatch.library: defining operators and registering kernels and
fallbacks from Python (PyTorch: torch/library.py).

Every registration belongs to a :class:`Library` and is undone when that
Library is destroyed (``_destroy()``) or garbage collected; ``opdispatch.ops``
then forgets the operators it defined.

Example:

>>> import numpy as np
>>> from opdispatch.library import Library, impl
>>> lib = Library("mylib", "FRAGMENT")
>>> lib.define("sin(Tensor x) -> Tensor")
'mylib::sin'
>>> @impl("mylib::sin", "cpu", lib=lib)
... def sin_cpu(x):
...     return opdispatch.from_numpy(np.sin(x.numpy()))
>>> opdispatch.ops.mylib.sin(opdispatch.tensor([0.0]))
tensor([0.], dtype=opdispatch.float32)
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import re
import warnings
import weakref
from sys import _getframe
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Sequence, TypeVar, Union, cast, overload

from . import _C, _ops
from ._library import registry as _registry
from ._lazy import LazyTable, lazy_getattr
from ._library import utils as _utils
from ._library.autograd import make_autograd_kernel
from ._library.registry import RegistrationHandle
from ._library.utils import parse_namespace
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
    "register_torch_dispatch",
    "register_fake",
    "register_kernel",
]

# The Python registry's tables under seed 000's names (the same objects; see
# Note [The Python registry] in _library/registry.py). PyTorch:
# torch.library._impls ("ns/op/key" strings: real code tests membership to
# register only once) and torch.library._defs.
_impls: set[str] = _registry.impls
_defs: set[str] = _registry.defs


def __dir__() -> list[str]:
    return sorted(__all__)

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

# opcheck's default tests, in order. PyTorch: torch.library._OPCHECK_DEFAULT_UTILS.
_OPCHECK_DEFAULT_UTILS = ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")

# Names this module exports from opdispatch._library, imported on first use:
# `import opdispatch` imports this module (for the built-in operators) and
# should not pay for custom_op's machinery. name -> (module, attribute).
_LAZY_EXPORTS: LazyTable = {
    "CustomOpDef": (f"{__package__}._library.custom_ops", "CustomOpDef"),
    "custom_op": (f"{__package__}._library.custom_ops", "custom_op"),
    "infer_schema": (f"{__package__}._library.infer_schema", "infer_schema"),
}
_load_lazy = lazy_getattr(globals(), _LAZY_EXPORTS)


def __getattr__(name: str) -> Any:
    return _load_lazy(name)


def fallthrough_kernel() -> None:
    """Pass this to :meth:`Library.impl` (or :meth:`Library.fallback`) to
    register a fallthrough: the dispatcher skips the key, as if it were not in
    the call's key set. Never called. PyTorch: torch.library.fallthrough_kernel."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


_C._set_fallthrough_kernel(fallthrough_kernel)


# Note [Registration sites]
# Every registration records where it was made ("file:line": shown by
# `python -m opdispatch table`, explain and coverage, and named by
# duplicate-registration errors): the innermost Python frame outside
# opdispatch's registration code (_C._python_call_site), unless a
# _registration_site() block says where. The built-in library uses one to
# attribute each operator to the module statement that declares it rather
# than to the helpers in between, which many operators share.
_SITE: contextvars.ContextVar[Optional[tuple[str, int]]] = contextvars.ContextVar("opdispatch_site", default=None)


@contextlib.contextmanager
def _registration_site(file: str, line: int) -> Iterator[None]:
    """Registrations inside the block record ``file:line`` as their site."""
    token = _SITE.set((file, line))
    try:
        yield
    finally:
        _SITE.reset(token)


# Note [Sites searched from the caller]
# Library.define and .impl pass _C their caller's frame (sys._getframe(1)),
# from which _C searches outwards for the site, rather than None (search from
# the current frame): on CPython 3.11+ a frame object is made only when asked
# for, and asking _C for the current one made a frame object for the define
# / impl call itself on every registration (~0.4 us), where the caller's
# frame object is made at most once per run of the calling function (a loop
# registering many operators shares one).


def _call_site_frame() -> Optional[tuple[str, int]]:
    """(file, line) of the registration being made (Note [Registration sites]), or None."""
    return _SITE.get() or _C._python_call_site()


# (file, line) of a _registration_site() block -> its "file:line" text, made
# once per site: the registrations of one block share the strings kept per
# kernel (_C._python_call_site_text caches the other sites' texts itself).
_SITE_TEXTS: dict[tuple[str, int], str] = {}


def _block_site(site: tuple[str, int]) -> str:
    """"file:line" of a _registration_site() block's ``site``."""
    text = _SITE_TEXTS.get(site)
    if text is None:
        text = _SITE_TEXTS[site] = f"{site[0]}:{site[1]}"
    return text


def _call_site() -> str:
    """"file:line" of the registration being made."""
    site = _SITE.get()
    return (_C._python_call_site_text() or "(unknown)") if site is None else _block_site(site)


_F = TypeVar("_F", bound=Callable[..., Any])


def _registration_method(kind: str) -> Callable[[_F], _F]:
    """Makes the decorated Library method (``kind``: "define" or "impl") a
    method descriptor that makes its plain calls from C and runs the
    decorated function for every other call (Note [Registration methods] in
    csrc/python/RegistrationMethod.cpp); the function's signature and
    docstring stay the method's."""

    def wrap(func: _F) -> _F:
        method = _C._RegistrationMethod(func, kind, _SITE)
        functools.update_wrapper(method, func)
        return cast(_F, method)

    return wrap


def _tag_names(schema: str, tags: Tag | Sequence[Tag]) -> list[str]:
    """The names of ``tags`` (one Tag or a sequence of them) for define(``schema``);
    TypeError for anything that is not a :class:`Tag`."""
    tags = (tags,) if isinstance(tags, Tag) else tuple(tags)
    for t in tags:
        if not isinstance(t, Tag):
            raise TypeError(f"define({schema!r}): tags must be opdispatch.Tag members, got {t!r}")
    return [t.name for t in tags]


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
    operators this library defined. Every registration and its undoing go
    through the library's ``_registrations`` (Note [The Python registry] in
    opdispatch/_library/registry.py). PyTorch: torch.library.Library.
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind!r}; expected 'DEF', 'IMPL' or 'FRAGMENT'")
        if ns in _reserved_namespaces and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library with another name.")
        filename, lineno = _call_site_frame() or ("<unknown>", 0)
        registrations = _registry.Registrations(kind, ns, dispatch_key, filename, lineno)
        self._registrations = registrations
        self.m: Any = registrations.m
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        # Seed 000's attributes, the registrations' own containers.
        self._op_defs: set[str] = registrations.defs
        # (None for the built-in library, whose kernels are not Python registrations: see _builtins/_registry.py.)
        self._op_impls: Optional[set[str]] = registrations.impls
        self._registration_handles: list[RegistrationHandle] = registrations.handles
        # weakref.finalize rather than __del__: it runs once, from _destroy()
        # or when the object dies, and keeps what it needs alive (PyTorch does the same).
        self._finalizer = weakref.finalize(self, registrations.destroy)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    def _live(self, what: str) -> Any:
        if self.m is None:
            raise RuntimeError(f"{what}: {self!r} was destroyed; create a new Library to register more")
        return self.m

    @_registration_method("define")
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
        m = self.m
        if m is None:
            self._live("define")
        names = () if type(tags) is tuple and not tags else _tag_names(schema, tags)
        # (Outside a _registration_site() block, the caller's frame: Note [Sites searched from the caller].)
        site = _SITE.get()
        # (Registrations.define's work in one C call, keeping the registry's tables: Note [Registration fast path].)
        return _C._library_define(m, schema, alias_analysis, names, _getframe(1) if site is None else _block_site(site),
                                  self._op_defs)

    @_registration_method("impl")
    def impl(
        self,
        op_name: str | OpOverload,
        fn: Callable[..., Any],
        dispatch_key: str = "",
        *,
        with_keyset: bool = False,
        allow_override: bool = False,
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
            allow_override (bool): override a Python kernel another Library
                (or this one) registered for the operator and key, instead
                of the error below. PyTorch 2.13 has the keyword with
                default True; opdispatch keeps PyTorch 2.4's error as the
                default (see the README's differences).

        A kernel already registered at the key another way (a built-in
        ``od`` kernel, a C++ kernel) is overridden with a UserWarning, as
        PyTorch warns when an ATen kernel is overridden: the newest kernel of
        a key runs, and the previous one again once this Library is
        destroyed.

        Raises TypeError if ``fn`` is not callable; RuntimeError if
        ``op_name`` is neither str nor OpOverload, if a Python kernel is
        already registered for this operator and key and ``allow_override``
        is false (naming both registration sites; PyTorch: the ``_impls``
        check in Library.impl; "" and "CompositeImplicitAutograd" are two
        keys there, as here),
        for a Meta kernel on an operator with a CompositeImplicitAutograd
        kernel (PyTorch rule: let it decompose), for a namespace or key
        mismatch with the library; ValueError for an unknown key name.
        PyTorch: torch.library.Library.impl.
        """
        m = self.m
        if m is None:
            self._live("impl")
        if isinstance(op_name, str):
            name = op_name
        elif isinstance(op_name, OpOverload):
            name = op_name._name
        else:
            raise RuntimeError(
                "impl should be passed either a name or an OpOverload object as the first argument, "
                f"not {type(op_name).__name__}"
            )
        if not callable(fn):
            qualname = name if "::" in name else f"{self.ns}::{name}"
            key_name = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
            _utils.check_callable(fn, f"impl of {qualname} at dispatch key {key_name}")
        site = _SITE.get()
        dispatch_key = dispatch_key or self.dispatch_key
        where = _getframe(1) if site is None else _block_site(site)
        if allow_override:
            # The slot taken is no error: the kernel goes in the dispatcher above the one holding it, and the
            # slot is this library's too (PyTorch removes it from _impls when either library goes, as here).
            slot = _registry.impls_key(self.ns, name, dispatch_key)
            held = slot in _impls
            _impls.discard(slot)
            try:
                _C._library_impl(m, name, dispatch_key, fn, with_keyset, False, where, self._op_impls)
            except BaseException:
                if held:
                    _impls.add(slot)
                raise
            return
        # (Registrations.impl's work in one C call, which runs the registry's slot checks where a slot may be
        # taken and keeps its tables: Note [Registration fast path]. The site: as in define.)
        _C._library_impl(m, name, dispatch_key, fn, with_keyset, False, where, self._op_impls)

    def _register_fake(self, op_name: str, fn: Callable[..., Any], _stacklevel: int = 1) -> None:
        """Registers ``fn`` as the fake impl of ``<ns>::<op_name>`` (see
        :func:`register_fake`), undone with this library.

        Args:
            op_name (str): "name" or "name.overload" in this library's namespace.
            fn (Callable): the fake impl.
            _stacklevel (int): accepted for PyTorch's signature; the
                registration site is found without it (the innermost frame
                outside opdispatch).

        Raises ValueError if the operator is not defined; RuntimeError if it
        already has a fake impl (naming where it was registered), a Meta
        kernel registered another way, or a CompositeImplicitAutograd kernel.
        PyTorch: torch.library.Library._register_fake (seed 000).
        """
        from ._library import fake_impl

        self._live("_register_fake")
        fake_impl.register(f"{self.ns}::{op_name}", fn, _call_site(), self._registrations)

    def _register_torch_dispatch_rule(self, op_name: str, torch_dispatch_class: Any, fn: Callable[..., Any]) -> None:
        """Registers ``fn`` as how ``torch_dispatch_class`` (a tensor subclass
        with ``__torch_dispatch__``, called as ``fn(cls, func, types, args,
        kwargs)``, or a TorchDispatchMode class, ``fn(mode, func, types, args,
        kwargs)``) handles ``<ns>::<op_name>``, undone with this library (see
        :func:`register_torch_dispatch`).

        Raises ValueError if the operator is not defined; RuntimeError if the
        class already has a rule for it. PyTorch: Library._register_torch_dispatch_rule.
        """
        self._live("_register_torch_dispatch_rule")
        self._register_torch_dispatch_rule_for(self._registrations, f"{self.ns}::{op_name}", torch_dispatch_class, fn)

    @staticmethod
    def _register_torch_dispatch_rule_for(registrations: _registry.Registrations, op_name: str,
                                          torch_dispatch_class: Any, fn: Callable[..., Any]) -> None:
        """:meth:`_register_torch_dispatch_rule` for the owner ``registrations``
        (a Library's or a custom op's); ``op_name`` "ns::name[.overload]"
        (a bare name takes the owner's namespace)."""
        from ._library.utils import lookup_op
        from .utils._python_dispatch import _torch_dispatch_rules

        qualname = lookup_op(op_name if "::" in op_name else f"{registrations.ns}::{op_name}")._name
        rules = _torch_dispatch_rules.setdefault(qualname, {})
        if torch_dispatch_class in rules:
            raise RuntimeError(f"{torch_dispatch_class} already has a `__torch_dispatch__` rule registered for "
                               f"{qualname}; destroy the Library of the first registration to replace it")
        rules[torch_dispatch_class] = fn

        def undo() -> None:
            if rules.get(torch_dispatch_class) is fn:
                del rules[torch_dispatch_class]
            if not rules and _torch_dispatch_rules.get(qualname) is rules:
                del _torch_dispatch_rules[qualname]

        registrations.add_handle(undo)

    def _register_handle(self, undo: Callable[[], None]) -> RegistrationHandle:
        """A handle running ``undo`` once, when this library is destroyed: for
        registrations kept outside the dispatcher and the registry's tables
        (as PyTorch appends to ``Library._registration_handles``)."""
        self._live("_register_handle")
        return self._registrations.add_handle(undo)

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
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        _utils.check_callable(fn, f"fallback for dispatch key {dispatch_key or '(none)'}")
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
        # Directly, not through the finalizer: weakref.finalize marks itself
        # dead before it calls, so an exception in between would leave the
        # registrations for ever (Note [Destruction runs to completion]).
        self._registrations.destroy()
        self.m = None


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

    Example:

    >>> from opdispatch.library import define
    >>> define("mylib::tan", "(Tensor x) -> Tensor")
    >>> print(opdispatch.ops.mylib.tan.default._schema)
    mylib::tan(Tensor x) -> Tensor
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


# singledispatch on the first argument, as PyTorch's define(lib, ...); mypy wants one parameter type.
@define.register(Library)
def _(lib: Library, schema: str, alias_analysis: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:  # type: ignore[misc]
    """The legacy torch.library.define(lib, schema): a decorator."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        name = lib.define(schema, alias_analysis)
        lib.impl(name, f)
        return f

    return wrap


def _device_type_to_key(device_type: str) -> str:
    """The dispatch key name of a device type: its backend key (cpu -> CPU,
    cuda -> CUDA, xpu -> XPU, hpu -> HPU, mtia -> MTIA, lazy -> Lazy,
    privateuseone -> PrivateUse1, meta -> Meta, ...: every device type
    ``opdispatch.device`` accepts), or CompositeExplicitAutograd for
    "default". Raises ValueError for anything else. PyTorch:
    torch.library._device_type_to_key (torch._C._dispatch_key_for_device)."""
    if device_type == "default":
        return "CompositeExplicitAutograd"
    try:
        return _C._dispatch_key_for_device(device_type)
    except ValueError as e:
        raise ValueError(
            f"impl: unknown device type '{device_type}' ({e}). Use a device type, 'default' (all devices: "
            f"CompositeExplicitAutograd), or a dispatch key name such as CPU or AutogradCPU."
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
        types (str | Sequence[str]): device types ("cpu", "cuda", "xpu",
            "meta", "privateuseone", ...; "default" for every device, i.e.
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

    Example:

    >>> import numpy as np
    >>> from opdispatch.library import define, impl
    >>> define("mylib::cos", "(Tensor x) -> Tensor")
    >>> @impl("mylib::cos", "cpu")
    ... def cos_cpu(x):
    ...     return opdispatch.from_numpy(np.cos(x.numpy()))
    >>> opdispatch.ops.mylib.cos(opdispatch.tensor([0.0]))
    tensor([1.], dtype=opdispatch.float32)
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


# singledispatch on the first argument, as PyTorch's impl(lib, ...); mypy wants one parameter type.
@impl.register(Library)
def _(lib: Library, name: str, dispatch_key: str = "") -> Callable[[Callable[..., Any]], Callable[..., Any]]:  # type: ignore[misc]
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


def _op_name(op: _op_identifier) -> str:
    """The qualified name of ``op``, a name or an OpOverload (a CustomOpDef
    was handled through _custom_op_of before)."""
    if isinstance(op, OpOverload):
        return op._name
    assert isinstance(op, str), "a CustomOpDef is handled by _custom_op_of"
    return op


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
    name = _op_name(op)
    return impl(name, "CompositeExplicitAutograd" if device_types is None else device_types, func, lib=lib)


@overload
def register_fake(op: _op_identifier, func: None = None, /, *, lib: Optional[Library] = None,
                  _stacklevel: int = 1) -> Callable[[_F], _F]: ...
@overload
def register_fake(op: _op_identifier, func: _F, /, *, lib: Optional[Library] = None, _stacklevel: int = 1) -> _F: ...
def register_fake(
    op: _op_identifier,
    func: Optional[Callable[..., Any]] = None,
    /,
    *,
    lib: Optional[Library] = None,
    _stacklevel: int = 1,
) -> Any:
    """Registers a fake impl ("meta kernel") for ``op``; a decorator when
    ``func`` is omitted. Returns ``func``. (``_stacklevel`` is accepted for
    PyTorch's signature and not needed: see :meth:`Library._register_fake`.)

    A fake impl has the operator's signature and computes its outputs'
    metadata from the inputs' (shapes, dtypes, devices) without touching
    data: it runs whenever the operator is called with meta tensors (the
    "Meta" dispatch key), and on FakeTensors under a FakeTensorMode (opcheck's
    fake check and make_fx(tracing_mode="fake") do that). Use only
    operations on the inputs' metadata and on other operators that have
    meta kernels; for an output size that depends on the data, use
    ``get_ctx().new_dynamic_size()``.

    For a custom op this is :meth:`CustomOpDef.register_fake` (replacing an
    earlier one). Otherwise raises ValueError if the operator is not
    defined, and RuntimeError if it already has a fake impl (naming where it
    was registered), another Meta kernel, or a CompositeImplicitAutograd
    kernel. ``lib`` ties the registration's lifetime to that Library.
    PyTorch: torch.library.register_fake.

    Example:

    >>> import numpy as np
    >>> from opdispatch.library import define, get_ctx, impl, register_fake
    >>> define("mylib::nonzero", "(Tensor x) -> Tensor")
    >>> impl("mylib::nonzero", "cpu", lambda x: opdispatch.from_numpy(np.argwhere(x.numpy())))
    <function <lambda> at 0x...>
    >>> @register_fake("mylib::nonzero")
    ... def _(x):
    ...     return opdispatch.empty(get_ctx().new_dynamic_size(), x.dim(), dtype=opdispatch.int64, device=x.device)
    >>> opdispatch.ops.mylib.nonzero(opdispatch.empty(5, 2, device="meta")).shape[1]
    2
    """
    opdef = _custom_op_of("register_fake", op)
    if opdef is not None:
        return opdef.register_fake if func is None else opdef.register_fake(func)
    qualname = _op_name(op)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        namespace, op_name = parse_namespace(qualname)
        _library_for(namespace, lib)._register_fake(op_name, f)
        return f

    return register if func is None else register(func)


def impl_abstract(qualname: _op_identifier, func: Optional[Callable[..., Any]] = None, *,
                  lib: Optional[Library] = None, _stacklevel: int = 1) -> Any:
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

    Example:

    >>> import numpy as np
    >>> from opdispatch.library import custom_op, register_autograd
    >>> @custom_op("mylib::numpy_sin", mutates_args=())
    ... def numpy_sin(x: opdispatch.Tensor) -> opdispatch.Tensor:
    ...     return opdispatch.from_numpy(np.sin(x.numpy()))
    >>> def setup_context(ctx, inputs, output):
    ...     ctx.save_for_backward(inputs[0])
    >>> def backward(ctx, grad):
    ...     x, = ctx.saved_tensors
    ...     return grad * x.cos()
    >>> register_autograd("mylib::numpy_sin", backward, setup_context=setup_context)
    >>> x = opdispatch.tensor([0.0], requires_grad=True)
    >>> numpy_sin(x).backward()
    >>> x.grad
    tensor([1.], dtype=opdispatch.float32)
    """
    opdef = _custom_op_of("register_autograd", op)
    if opdef is not None:
        opdef.register_autograd(backward, setup_context=setup_context)
        return
    qualname = _op_name(op)
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


def register_torch_dispatch(
    op: _op_identifier,
    torch_dispatch_class: Any,
    func: Optional[Callable[..., Any]] = None,
    /,
    *,
    lib: Optional[Library] = None,
) -> Any:
    """Registers how ``torch_dispatch_class`` (a tensor subclass with
    ``__torch_dispatch__`` or a TorchDispatchMode class) handles ``op``,
    without changing the class or the operator; a decorator when ``func`` is
    omitted. Returns ``func``.

    When a call of ``op`` reaches that mode (an instance of exactly that
    class) or subclass, ``func(mode_or_cls, func_overload, types, args,
    kwargs)`` runs instead of its ``__torch_dispatch__`` (arguments as
    ``__torch_dispatch__`` gets them); for a subclass, returning
    NotImplemented falls back to its ``__torch_dispatch__``. ``lib`` ties the
    registration's lifetime to that Library.

    Raises ValueError if ``op`` is not defined and RuntimeError if the class
    already has a rule for ``op``. PyTorch: torch.library.register_torch_dispatch.

    Example::

        @register_torch_dispatch("mylib::foo", MyMode)
        def _(mode, func, types, args, kwargs):
            return args[0] + 1
    """
    from ._library import custom_ops

    if isinstance(op, custom_ops.CustomOpDef):
        return op.register_torch_dispatch(torch_dispatch_class, func)
    if not isinstance(op, (str, OpOverload)):
        raise ValueError(f"register_torch_dispatch(op): expected a qualified name, an OpOverload or a CustomOpDef, "
                         f"got {type(op).__name__}")
    qualname = op if isinstance(op, str) else op._name

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        namespace, name = parse_namespace(qualname)
        _library_for(namespace, lib)._register_torch_dispatch_rule(name, torch_dispatch_class, f)
        return f

    return register if func is None else register(func)


def get_ctx() -> Optional[FakeImplCtx]:
    """The context of the fake impl running now (see :func:`register_fake`):
    ``get_ctx().new_dynamic_size(min=0, max=None)`` gives a data-dependent
    output size. None outside a fake impl, as in PyTorch (code tests
    ``get_ctx() is None`` to tell whether it runs in one).
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
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
) -> dict[str, Any]:
    """Checks that an operator's registrations are consistent with what it
    does on the sample ``args`` / ``kwargs``, and returns
    ``{test name: "SUCCESS" | the exception}``.

    Tests (``test_utils``: a name, a sequence, or "ALL"; default the four
    PyTorch runs by default, in this order):

    - ``test_schema``: the arguments the call mutates are exactly the ones
      the schema marks mutable (``Tensor(a!)``), and outputs alias inputs
      (or each other) only where the schema declares it;
    - ``test_autograd_registration`` (only when an input requires grad):
      the operator has an autograd kernel (Autograd, Autograd<Backend>), is
      CompositeImplicitAutograd, or is a custom op — not a backend kernel
      that records autograd history itself;
    - ``test_faketensor``: the operator runs on meta copies of the inputs
      (its fake impl / Meta kernel; an operator without one passes if it is
      mutable and returns nothing, or is tagged out / inplace, as in
      PyTorch), and the outputs' metadata (number, shapes — a dimension from
      ``new_dynamic_size`` may differ — dtypes, requires_grad, aliasing of
      inputs) equals the real outputs';
    - ``test_aot_dispatch_dynamic`` (and ``test_aot_dispatch_static``, the
      same check here): forward and, when inputs require grad, backward run
      on meta tensors (fake impl, setup_context, backward without data), with
      the gradients' presence, shapes and dtypes those of eager mode.

    Each test works on copies of the inputs; tests pass without running for
    meta inputs. With ``raise_exception`` the first failure raises
    ``OpCheckError`` (from opdispatch._library.opcheck) whose message names
    the test, the operator, the sample, the cause and where it was raised,
    what the test checks and what to do; the cause is chained. ``rtol`` /
    ``atol`` are accepted as in PyTorch (both or neither, else ValueError)
    and unused: no compiled graph exists whose values could differ from
    eager mode. Raises ValueError for an ``op`` that is not an OpOverload or
    CustomOpDef, or an unknown test name; RuntimeError for a packet with
    several overloads. opcheck tests registrations; use
    :func:`opdispatch.autograd.gradcheck` to test the formulas' math.
    PyTorch: torch.library.opcheck (optests.opcheck).
    """
    from ._library import opcheck as checks

    return checks.opcheck(op, args, kwargs, test_utils=test_utils, raise_exception=raise_exception, rtol=rtol,
                          atol=atol)
