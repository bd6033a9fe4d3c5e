"""The dispatcher's state as data: one operator's computed dispatch table,
each entry with the precedence rule that chose it and where its kernel was
registered. Shared by :func:`opdispatch.explain` and the ``table`` and
``coverage`` commands; computed by the same code as the dispatch table
(``_C._dispatch_table_entries``), never parsed from dump text."""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

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
}


def language(file: str) -> Optional[str]:
    """"Python" or "C++" by the file's suffix (None if neither)."""
    if file.endswith((".py", ".pyx")) or file.startswith("<"):
        return "Python"
    if file.endswith(_CPP_SUFFIXES):
        return "C++"
    return None


def with_origins(text: str) -> str:
    """Replaces each 'registered at FILE:LINE' in ``text`` by 'Python FILE:LINE' or 'C++ FILE:LINE'."""

    def origin(match: re.Match) -> str:
        lang = language(match.group(1))
        return f"{lang} {match.group(1)}:{match.group(2)}" if lang else match.group(0)

    return _REGISTERED_AT.sub(origin, text)


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
            return f"{language(file) or 'registered at'} {self.site}"
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
