"""The dispatcher's state as data: one operator's computed dispatch table,
each entry with the precedence rule that chose it and where its kernel was
registered. Shared by :func:`opdispatch.explain` and the ``table`` and
``coverage`` commands; computed by the same code as the dispatch table
(``_C._dispatch_table_entries``), never parsed from dump text."""
from __future__ import annotations

import dataclasses
import inspect
import os
import re
from typing import Any, Optional

from . import _C

_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".cu")
_REGISTERED_AT = re.compile(r"registered at (.+?):(\d+)(?=\s|$)")

#: The alias keys a "default backend kernel" may come from, in precedence order.
_DEFAULT_BACKEND_ALIASES = ("CompositeExplicitAutogradNonFunctional", "CompositeExplicitAutograd")

#: Precedence rule (the reason computeDispatchTableEntryWithDebug gives) -> what it means.
RULES = {
    "kernel": "a kernel registered at this key",
    "default backend kernel": "the {alias} kernel, which serves every backend key",
    "math kernel": "the CompositeImplicitAutograd kernel (a decomposition into other operators), which serves "
                   "every key whose backend has no kernel of its own",
    "autograd kernel": "the Autograd kernel, which serves every autograd key",
    "batched kernel": "the FuncTorchBatchedDecomposition kernel",
    "backend fallback": "the backend fallback registered for this key (for every operator)",
    "ambiguous autogradother": "ambiguous: AutogradOther serves several backends and one of them has a kernel of "
                               "its own while a CompositeImplicitAutograd kernel exists; calling raises",
    "missing": "nothing: no kernel at this key, no alias-key kernel that covers it, no backend fallback",
    # Higher-order operators only (hop_table_entries): their kernels are py_impl kernels, dispatched in Python.
    "fallthrough": "skipped: a fallthrough of the higher-order operator (HigherOrderOperator.fallthrough, or a key "
                   "higher-order operators skip until they register a kernel there)",
    "mode and subclass kernels": "the kernels registered per dispatch-mode class and tensor subclass "
                                 "(py_impl(ModeClass), py_impl(Subclass)), asked in the Python key's order",
}


def language(file: str) -> Optional[str]:
    """"Python" or "C++" by the file's suffix (None if neither)."""
    if file.endswith((".py", ".pyx")) or file.startswith("<"):
        return "Python"
    if file.endswith(_CPP_SUFFIXES):
        return "C++"
    return None


#: The installed package's folder, with a trailing separator (see display_site).
_PACKAGE_PREFIX = os.path.dirname(os.path.abspath(__file__)) + os.sep


def display_site(site: str) -> str:
    """``site`` ("FILE:LINE") as shown to users: a file of opdispatch's own
    installed package as ``opdispatch/...`` (as its C++ sites already read,
    opdispatch/csrc/...), so what is printed does not depend on where it is
    installed; any other file as given."""
    if site.startswith(_PACKAGE_PREFIX):
        return "opdispatch/" + site[len(_PACKAGE_PREFIX):]
    return site


def with_origins(text: str) -> str:
    """Replaces each 'registered at FILE:LINE' in ``text`` by 'Python FILE:LINE'
    or 'C++ FILE:LINE' (FILE as :func:`display_site` shows it)."""

    def origin(match: re.Match[str]) -> str:
        lang = language(match.group(1))
        return f"{lang} {display_site(match.group(1))}:{match.group(2)}" if lang else match.group(0)

    return _REGISTERED_AT.sub(origin, text)


def python_site(fn: Any) -> str:
    """"FILE:LINE" where the Python function ``fn`` (a function, method,
    classmethod, functools.partial or decorated function) is defined, or ""
    for one without Python source (a builtin)."""
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    while hasattr(fn, "func") and not hasattr(fn, "__code__"):  # functools.partial
        fn = fn.func
    code = getattr(getattr(fn, "__func__", fn), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


@dataclasses.dataclass(frozen=True)
class TableEntry:
    """What serves one runtime key of an operator.

    ``key``: the runtime key ("CPU", or "Undefined" for calls with no key);
    ``rule``: why this entry (a key of :data:`RULES`); ``kernel``: the
    kernel's debug text ("registered at FILE:LINE" or a name); ``site``:
    "FILE:LINE" or "" if unknown; ``fallthrough``: a fallthrough kernel (the
    key is skipped); ``source``: the key the kernel was registered at (this
    key, an alias key such as "CompositeExplicitAutograd", or "" for a
    backend fallback or nothing).
    """

    key: str
    rule: str
    kernel: str
    site: str
    fallthrough: bool
    source: str

    @property
    def served(self) -> bool:
        """Whether a kernel (possibly a fallthrough) serves the key."""
        return self.rule != "missing"

    @property
    def origin(self) -> str:
        """"Python FILE:LINE", "C++ FILE:LINE", or the kernel's debug text."""
        if self.site:
            file = self.site.rsplit(":", 1)[0]
            return f"{language(file) or 'registered at'} {display_site(self.site)}"
        return self.kernel

    def describe(self) -> str:
        """The rule in words (names the alias key of a default backend kernel)."""
        return RULES[self.rule].format(alias=self.source)


def _source_key(qualname: str, key: str, rule: str) -> str:
    if rule == "kernel":
        return key
    if rule == "default backend kernel":
        for alias in _DEFAULT_BACKEND_ALIASES:  # the precedence of step 2 in OperatorEntry
            if _C._dispatch_has_kernel_for_dispatch_key(qualname, alias):
                return alias
    if rule in ("math kernel", "ambiguous autogradother"):
        return "CompositeImplicitAutograd"
    if rule == "autograd kernel":
        return "Autograd"
    if rule == "batched kernel":
        return "FuncTorchBatchedDecomposition"
    return ""


def table_entries(qualname: str) -> dict[str, TableEntry]:
    """The computed dispatch table of operator ``qualname`` ("ns::op" or
    "ns::op.overload"): runtime key name -> :class:`TableEntry`, for
    Undefined and every runtime key in priority order (lowest first).
    Raises RuntimeError if no such operator exists."""
    out = {}
    for key, kernel, rule, fallthrough, site in _C._dispatch_table_entries(qualname):
        source = _source_key(qualname, key, rule)
        out[key] = TableEntry(key, rule, "" if rule == "missing" else kernel, site, fallthrough, source)
    return out


#: The rule of a py_impl kernel found by resolve_key at an alias key (or at the key itself: "kernel").
_ALIAS_RULES = {
    "CompositeExplicitAutogradNonFunctional": "default backend kernel",
    "CompositeExplicitAutograd": "default backend kernel",
    "CompositeImplicitAutograd": "math kernel",
    "Autograd": "autograd kernel",
    "FuncTorchBatchedDecomposition": "batched kernel",
}


def function_name(fn: Any) -> str:
    """What explain and coverage call a Python kernel: its ``__qualname__`` (through decorators), else repr."""
    fn = inspect.unwrap(getattr(fn, "__func__", fn))
    return getattr(fn, "__qualname__", None) or repr(fn)


def py_impl_entry(op: Any, key: str) -> Optional[TableEntry]:
    """The ``py_impl`` kernel of ``op`` (an OpOverload or HigherOrderOperator)
    that serves runtime key ``key`` ("CPU", or "Undefined") by
    :func:`~opdispatch._ops.resolve_key`'s precedence, counting the
    operator's C++ kernels too (a C++ kernel at a higher-precedence key wins):
    an entry whose ``source`` is the key it was registered at, ``kernel`` the
    function's name and ``site`` its "FILE:LINE"; None if no py_impl kernel
    serves the key (or resolve_key raises for it). For an OpOverload these
    kernels run only while the Python dispatcher is on (Note [The Python
    dispatcher] in csrc/python/PythonDispatcher.cpp)."""
    from ._ops import resolve_key

    try:
        final = resolve_key(op, _C.DispatchKey.__members__[key])
    except (NotImplementedError, RuntimeError):
        return None
    fn = op.py_kernels.get(final)
    if fn is None:
        return None
    rule = "kernel" if final.name == key else _ALIAS_RULES[final.name]
    return TableEntry(key, rule, function_name(fn), python_site(fn), False, final.name)


def hop_table_entries(hop: Any) -> dict[str, TableEntry]:
    """The dispatch table of a :class:`~opdispatch._ops.HigherOrderOperator`
    as :func:`table_entries` gives it for an operator (Undefined, then every
    runtime key by priority), computed by the rules its ``dispatch`` uses
    (Note [Dispatching a higher-order operator] in _ops.py): a key it skips
    is "fallthrough"; the Python key is "mode and subclass kernels" (``kernel``
    lists their classes); any other key is served by the py_impl kernel
    ``resolve_key`` picks, else "missing" (a backend fallback registered in
    C++ does not serve a higher-order operator; an ambiguous AutogradOther is
    "ambiguous autogradother")."""
    out = {}
    for key in _C.DispatchKey.__members__:
        k = _C.DispatchKey.__members__[key]
        if key != "Undefined" and _C._dispatch_is_alias_key(k):
            continue
        if key != "Undefined" and not hop.non_fallthrough_keys.has(k):
            out[key] = TableEntry(key, "fallthrough", "fallthrough", "", True, "")
        elif key == "Python":
            classes = ", ".join(cls.__name__ for cls in hop.python_key_table) or "none"
            out[key] = TableEntry(key, "mode and subclass kernels", f"py_impl kernels for: {classes}", "", False,
                                  "Python")
        else:
            out[key] = py_impl_entry(hop, key) or _hop_unserved(hop, k)
    return out


def _hop_unserved(hop: Any, k: Any) -> TableEntry:
    """The entry of a key no py_impl kernel of ``hop`` serves: ambiguous or missing."""
    from ._ops import resolve_key

    try:
        resolve_key(hop, k)
    except NotImplementedError:
        pass
    except RuntimeError:  # resolve_key's ambiguous AutogradOther
        return TableEntry(k.name, "ambiguous autogradother", "", "", False, "CompositeImplicitAutograd")
    return TableEntry(k.name, "missing", "", "", False, "")
