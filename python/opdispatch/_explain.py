"""opdispatch.explain: how a call would dispatch, step by step, without
running it — the key set and where each key came from, each hop with the
kernel chosen there, the precedence rule that chose it and where that kernel
was registered; for a call that would fail, why and what registration would
serve it."""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from . import _C
from ._introspection import TableEntry, table_entries

_K = _C.DispatchKey


def _priority(key: str) -> int:
    return int(_K.__members__[key])


def _is_backend(key: str) -> bool:
    return key != "Undefined" and _C._dispatch_is_included_in_alias(_K.__members__[key], _K.CompositeExplicitAutograd)


def _is_autograd(key: str) -> bool:
    return key != "Undefined" and _C._dispatch_is_included_in_alias(_K.__members__[key], _K.Autograd)


def _names(keyset: Any) -> list[str]:
    return [k.name for k in keyset]


# Note [Hops]
# The dispatcher runs the kernel of the highest key of a call's key set; what
# happens next is up to that kernel, which explain cannot see into. It follows
# the convention of each kind of key, one entry of _HOP_KINDS each: a backend
# kernel computes the result (the last hop); an autograd kernel records a graph
# node and redispatches to the keys below autograd; ADInplaceOrView
# redispatches below itself; a CompositeImplicitAutograd ("math") kernel
# decomposes into other operators, each dispatched anew (the last hop of this
# call). Any other key (Python, Functionalize, ...) is taken to redispatch to
# the keys below it. A kind of hop for the Python key (modes, then subclasses)
# is one more entry.


@dataclasses.dataclass(frozen=True)
class _HopKind:
    then: str
    #: The keys a redispatch keeps, by the hop's key; None: the last hop.
    below: Optional[Any]


def _hop_kind(key: str, entry: TableEntry) -> _HopKind:
    if entry.rule in ("math kernel", "ambiguous autogradother"):
        return _HopKind("the kernel decomposes the call into other operators, each dispatched anew", None)
    if key == "Undefined" or _is_backend(key):
        return _HopKind("the kernel computes the result", None)
    if _is_autograd(key):
        return _HopKind("records a graph node (if grad mode is on and an input requires grad), then redispatches "
                        "to the keys below autograd", _C._after_autograd_keyset)
    if key == "ADInplaceOrView":
        return _HopKind("redispatches to the keys below ADInplaceOrView", _C._after_ADInplaceOrView_keyset)
    return _HopKind(f"the kernel decides; by convention it redispatches to the keys below {key}",
                    _C._dispatch_keyset_full_after(_K.__members__[key]))


@dataclasses.dataclass(frozen=True)
class KeySource:
    """A dispatch key of the call and where it came from: ``sources`` names
    arguments ("x", "tensors[1]") and "TLS include set"; ``removed`` says why
    the key does not count ("excluded by the TLS exclude set", "skipped: a
    fallthrough kernel ...") or is ""."""

    key: str
    sources: tuple[str, ...]
    removed: str


@dataclasses.dataclass(frozen=True)
class Hop:
    """One step of the call: the kernel that ``entry`` says serves ``key``, the
    highest key of ``keyset`` (the keys left at this step), and what happens
    after it (``then``)."""

    key: str
    keyset: tuple[str, ...]
    entry: TableEntry
    then: str


@dataclasses.dataclass(frozen=True)
class Explanation:
    """What :func:`explain` returns; ``str()`` gives the report.

    ``op``: "ns::op.overload" (the overload the call resolves to);
    ``schema``: its schema; ``keys``: a :class:`KeySource` per key the
    arguments or the TLS include set bring; ``tls_included`` /
    ``tls_excluded``: the thread's key sets; ``hops``: the steps, in order;
    ``error``: why the call would fail with NotImplementedError, else None;
    ``fix``: the registrations that would serve it, else None.
    """

    op: str
    schema: str
    keys: tuple[KeySource, ...]
    tls_included: tuple[str, ...]
    tls_excluded: tuple[str, ...]
    hops: tuple[Hop, ...]
    error: Optional[str]
    fix: Optional[str]

    def __str__(self) -> str:
        lines = [self.schema, "", "Dispatch keys of the call (highest priority first):"]
        for ks in self.keys:
            note = f"  -- {ks.removed}" if ks.removed else ""
            lines.append(f"  {ks.key:<20} from {', '.join(ks.sources)}{note}")
        if not self.keys:
            lines.append("  (none: no tensor argument, nothing in the TLS include set)")
        lines.append(f"  thread-local: include [{', '.join(self.tls_included)}], "
                     f"exclude [{', '.join(self.tls_excluded)}]")
        for i, hop in enumerate(self.hops, 1):
            where = f"the highest of [{', '.join(hop.keyset)}]" if hop.keyset else "no key left: the Undefined entry"
            lines += ["", f"Hop {i}: {hop.key}  ({where})"]
            if hop.entry.served:
                lines.append(f"  kernel: {hop.entry.origin}")
            lines.append(f"  rule:   [{hop.entry.rule}] {hop.entry.describe()}")
            lines.append(f"  then:   {hop.then}")
        if self.error:
            lines += ["", f"Fails: {self.error}", f"Fix: {self.fix}"]
        return "\n".join(lines)


def _resolve(op: Any, args: tuple, kwargs: dict) -> tuple[str, str]:
    """(name "ns::op", overload name) of the overload a call of ``op`` with these arguments reaches."""
    from ._ops import OpOverload, OpOverloadPacket

    if hasattr(op, "_opoverload"):  # a CustomOpDef
        op = op._opoverload
    if isinstance(op, OpOverload):
        name = op._overloadpacket._qualified_op_name
        return name, "" if op._overloadname == "default" else op._overloadname
    if isinstance(op, OpOverloadPacket):
        name = op._qualified_op_name
    elif isinstance(op, str) and "::" in op:
        name, _, overload = op.partition(".")
        if overload:
            return name, "" if overload == "default" else overload
    else:
        raise TypeError(f"explain: expected an operator (OpOverload, OpOverloadPacket, custom op or "
                        f"'ns::op[.overload]'), got {op!r}")
    overload = _C._jit_resolve_packet(name, *args, **kwargs)
    return name, "" if overload == "default" else overload


def _fix(qualname: str, key: str, entries: dict[str, TableEntry]) -> str:
    registered = sorted({e.source for e in entries.values() if e.source and not e.fallthrough}, key=_priority)
    have = (f" Its kernels are registered at: {', '.join(registered)}." if registered
            else " It has no kernels yet.")
    if entries[key].rule == "ambiguous autogradother":
        return (f"register a kernel at AutogradOther or at Autograd (lib.impl({qualname!r}, fn, 'Autograd')), or "
                f"replace the CompositeImplicitAutograd kernel by backend kernels.{have}")
    if key == "Undefined":
        return ("register a CompositeExplicitAutograd kernel (it serves calls whose arguments bring no key, and "
                f"every backend), e.g. lib.impl({qualname!r}, fn, 'CompositeExplicitAutograd'), or pass a tensor "
                f"argument.{have}")
    if _is_backend(key):
        return (f"register a kernel for {key}: lib.impl({qualname!r}, fn, {key!r}) (for custom ops: "
                f"register_kernel with the device type), or one CompositeExplicitAutograd kernel for every "
                f"backend, or a CompositeImplicitAutograd kernel that decomposes into operators that {key} "
                f"supports.{have}")
    if _is_autograd(key):
        return (f"register an autograd formula (opdispatch.library.register_autograd) or a kernel at Autograd "
                f"or {key}.{have}")
    return f"register a kernel for {key} (lib.impl({qualname!r}, fn, {key!r})) or a backend fallback for {key}.{have}"


def explain(op: Any, *args: Any, **kwargs: Any) -> Explanation:
    """How calling ``op(*args, **kwargs)`` would dispatch, without calling it.

    Args:
        op: an ``OpOverload`` (``opdispatch.ops.od.add.Tensor``), an
            ``OpOverloadPacket`` (``opdispatch.ops.od.add``: the overload is
            resolved from the arguments, as a call would), a custom op made
            by ``custom_op``, or a name "ns::op[.overload]".
        *args: the call's positional arguments (tensors on any device, e.g.
            ``meta`` ones, which cost nothing).
        **kwargs: its keyword arguments.

    Returns:
        :class:`Explanation`: the key set with where each key came from (the
        tensor arguments, the thread-local include set; keys removed by the
        exclude set or skipped by a fallthrough kernel), each hop (the key,
        the kernel the dispatch table holds for it, the precedence rule that
        chose it, where the kernel was registered, what happens next; see
        Note [Hops] in this file), and for a call that would fail, why and
        what registration would serve it. ``print()`` it for a report.

    Raises:
        TypeError: the arguments do not bind to the schema (the error the
            call would raise), or ``op`` is not an operator.
        RuntimeError: no such operator or overload.

    The key set is computed as the dispatcher does (DESIGN.md "Dispatcher"):
    (the union of the tensor arguments' keys | TLS included) - TLS excluded,
    without the keys whose kernel is a fallthrough; the table entries come
    from the code that builds the dispatch table
    (PyTorch: OperatorEntry::computeDispatchTableEntryWithDebug).
    """
    name, overload = _resolve(op, args, kwargs)
    qualname = name + ("." + overload if overload else "")
    schema = str(_C._dispatch_find_schema_or_throw(name, overload).schema)
    tensor_keys = _C._dispatch_argument_key_sets(name, overload, *args, **kwargs)
    default = _names(_C._dispatch_default_included_set())
    included = [k for k in _names(_C._dispatch_tls_local_include_set()) if k not in default]
    excluded = sorted(_names(_C._dispatch_tls_local_exclude_set()), key=_priority, reverse=True)
    entries = table_entries(qualname)
    keys = _key_sources(tensor_keys, included, default, excluded, entries)
    hops, error, fix = _hops(qualname, [k.key for k in keys if not k.removed], entries)
    return Explanation(qualname, schema, keys, tuple(included), tuple(excluded), hops, error, fix)


def _key_sources(tensor_keys: list, included: list[str], default: list[str], excluded: list[str],
                 entries: dict[str, TableEntry]) -> tuple[KeySource, ...]:
    """Each key the arguments and the TLS include set bring, highest first, with why it may not count.
    A key of the default include set (BackendSelect) is listed only where the
    operator has a kernel for it (a factory), not where it is a fallthrough."""
    sources: dict[str, list[str]] = {}
    for arg, index, keyset in tensor_keys:
        for key in _names(keyset):
            sources.setdefault(key, []).append(arg if index < 0 else f"{arg}[{index}]")
    for key in included:
        sources.setdefault(key, []).append("TLS include set")
    for key in default:
        if not entries[key].fallthrough:
            sources.setdefault(key, []).append("default include set")
    keys = []
    for key in sorted(sources, key=_priority, reverse=True):
        entry = entries[key]
        if key in excluded:
            removed = "excluded by the TLS exclude set"
        elif entry.fallthrough:
            removed = f"skipped: a fallthrough kernel ({entry.origin}, [{entry.rule}])"
        else:
            removed = ""
        keys.append(KeySource(key, tuple(sources[key]), removed))
    return tuple(keys)


def _hops(qualname: str, remaining: list[str],
          entries: dict[str, TableEntry]) -> tuple[tuple[Hop, ...], Optional[str], Optional[str]]:
    """The hops of a call whose key set is ``remaining`` (highest first), and (error, fix) if it fails."""
    hops: list[Hop] = []
    while True:
        key = remaining[0] if remaining else "Undefined"
        entry = entries[key]
        if not entry.served or entry.rule == "ambiguous autogradother":
            hops.append(Hop(key, tuple(remaining), entry, "the call raises NotImplementedError"))
            error = (f"no kernel of {qualname} serves {key}: none is registered at {key}, no alias-key kernel "
                     f"covers it and {key} has no backend fallback." if not entry.served
                     else f"{qualname} at AutogradOther is {entry.describe()}.")
            return tuple(hops), error, _fix(qualname, key, entries)
        kind = _hop_kind(key, entry)
        hops.append(Hop(key, tuple(remaining), entry, kind.then))
        if kind.below is None:
            return tuple(hops), None, None
        below = set(_names(kind.below))
        remaining = [k for k in remaining if k in below]
