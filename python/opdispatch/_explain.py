"""opdispatch.explain: how a call would dispatch, step by step, without
running it — the key set and where each key came from (arguments, the
thread-local sets, dispatch modes, the Python dispatcher), each hop with the
kernel or Python handlers chosen there, the precedence rule that chose it and
where it was registered; for a call that would fail, why and what
registration would serve it."""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from . import _C
from ._introspection import TableEntry, display_site, function_name, hop_table_entries, python_site, table_entries

_K = _C.DispatchKey


def _priority(key: str) -> int:
    return int(_K.__members__[key])


def _is_backend(key: str) -> bool:
    return key != "Undefined" and _C._dispatch_is_included_in_alias(_K.__members__[key], _K.CompositeExplicitAutograd)


def _is_autograd(key: str) -> bool:
    return key != "Undefined" and _C._dispatch_is_included_in_alias(_K.__members__[key], _K.Autograd)


def _names(keyset: Any) -> list[str]:
    return [k.name for k in keyset]


def _full_after(key: str) -> Any:
    return _C._dispatch_keyset_full_after(_K.__members__[key])


# Note [Hops]
# The dispatcher runs the kernel of the highest key of a call's key set; what
# happens next is up to that kernel, which explain cannot see into. It follows
# the convention of each kind of key (_hop_kind): a backend kernel computes
# the result (the last hop); an autograd kernel records a graph node and
# redispatches to the keys below autograd; ADInplaceOrView and
# PythonTLSSnapshot redispatch below themselves; a CompositeImplicitAutograd
# ("math") kernel decomposes into other operators, each dispatched anew (the
# last hop of this call). Any other key is taken to redispatch to the keys
# below it. Two keys hand the call to Python code and get hops of their own:
#  - PythonDispatcher (the Python dispatcher is on): before every other hop,
#    its fallback asks the OpOverload which handler serves the next key
#    (_get_dispatch, the rule the call itself uses): a py_impl kernel, which
#    ends what explain can follow, or the key's C++ kernel, which runs with
#    PythonDispatcher still in the key set, so every redispatch comes back;
#  - Python: the handlers the Python key's fallback asks, in its order (the
#    innermost mode, then the modes below it as each forwards the call, then
#    the tensor subclasses among the arguments, subclasses before their
#    bases; a register_torch_dispatch rule before a class's
#    __torch_dispatch__). What a handler does is the user's code: explain
#    says so and goes on with the keys below Python, which is where a handler
#    that calls func on these arguments below the key ends up.
# A HigherOrderOperator (cond, map_impl) has no C++ entry: its table is
# computed from its py_impl kernels by the rules its dispatch uses
# (hop_table_entries), and at the Python key it asks the innermost mode's
# py_impl(ModeClass) kernel (or __torch_dispatch__ if the mode sets
# supports_higher_order_operators), then the py_impl(Subclass) kernels of
# its tensor subclass arguments; that kernel is where explain stops, as the
# call's own behaviour (tracing, fake execution) is the kernel's.


@dataclasses.dataclass(frozen=True)
class _HopKind:
    then: str
    #: The keys a redispatch keeps, by the hop's key; None: the last hop.
    below: Optional[Any]


_PYTHON_THEN = ("explain cannot know what a handler does: it returns a result of its own, or NotImplemented to let "
                "the next handler try, or calls func, which dispatches anew (a mode runs popped, so its call goes "
                "to the next handler; a wrapper subclass usually calls func on the tensors it wraps, which "
                "explain(func, *unwrapped) follows). The hops below are where func called on these arguments "
                "below the Python key goes (super().__torch_dispatch__, _DisableTorchDispatch, or a mode "
                "forwarding a call on plain tensors)")
_HOP_PYTHON_THEN = ("the first handler that does not return NotImplemented gives the result; a mode's kernel runs "
                    "with the mode popped (make_fx's records one node with the functions as subgraphs; "
                    "FakeTensorMode's runs them on fake tensors), and the operator calls it makes dispatch anew")
_PYTHON_NOBODY = ("no mode is active and no argument's class handles dispatch (the key was included by hand): the "
                  "fallback redispatches to the keys below Python")


def _hop_kind(key: str, entry: TableEntry, handlers: tuple[Any, ...]) -> _HopKind:
    if entry.rule in ("math kernel", "ambiguous autogradother"):
        return _HopKind("the kernel decomposes the call into other operators, each dispatched anew", None)
    if key == "Undefined" or _is_backend(key):
        return _HopKind("the kernel computes the result", None)
    if _is_autograd(key):
        return _HopKind("records a graph node (if grad mode is on and an input requires grad), then redispatches "
                        "to the keys below autograd", _C._after_autograd_keyset)
    if key == "ADInplaceOrView":
        return _HopKind("redispatches to the keys below ADInplaceOrView", _C._after_ADInplaceOrView_keyset)
    if key == "PythonTLSSnapshot" and entry.rule == "backend fallback":
        return _HopKind("records the thread's dispatch key sets as they are on entry (unless a call in progress "
                        "did; a handler at the Python key restores them with _RestorePythonTLSSnapshot), then "
                        "redispatches to the keys below PythonTLSSnapshot", _full_after(key))
    if key == "Python" and entry.rule == "backend fallback":
        return _HopKind(_PYTHON_THEN if handlers else _PYTHON_NOBODY, _full_after(key))
    if key == "Python":  # a higher-order operator's mode and subclass kernels
        return _HopKind(_HOP_PYTHON_THEN, None)
    return _HopKind(f"the kernel decides; by convention it redispatches to the keys below {key}", _full_after(key))


@dataclasses.dataclass(frozen=True)
class KeySource:
    """A dispatch key of the call and where it came from: ``sources`` names
    arguments ("x", "tensors[1]"; "x (class Wrapper)" for the Python keys a
    tensor subclass with ``__torch_dispatch__`` carries) and the TLS include
    set ("TLS include set", or what put the key there: the dispatch mode
    stack, the Python dispatcher); ``removed`` says why the key does not
    count ("excluded by the TLS exclude set", "skipped: a fallthrough kernel
    ...") or is ""."""

    key: str
    sources: tuple[str, ...]
    removed: str


@dataclasses.dataclass(frozen=True)
class Handler:
    """Python code a hop hands the call to, in the order the hop asks.

    ``kind``: at the PythonDispatcher key, "py_impl kernel" (the operator's
    py_impl kernel :func:`~opdispatch._ops.resolve_key` picks), "py_impl mode
    kernel" (``py_impl(ModeClass)`` for the innermost mode) or "C++ kernel"
    (no Python kernel: ``name`` is the key whose C++ kernel runs); at the
    Python key, "mode", "mode rule" (``register_torch_dispatch`` for the
    mode's class, replacing its ``__torch_dispatch__``), "subclass rule" and
    "subclass"; for a higher-order operator at the Python key, "mode
    kernel" (``py_impl(ModeClass)``), "mode" (``__torch_dispatch__`` of a
    mode that sets ``supports_higher_order_operators``), "subclass kernel"
    (``py_impl(Subclass)``) and "no rule" (the call raises
    NotImplementedError there). ``name``: what runs ("Logging.__torch_dispatch__");
    ``site``: "FILE:LINE" where it is defined, or ""; ``note``: why it is
    there (which mode, which argument, which py_impl key).
    """

    kind: str
    name: str
    site: str
    note: str


@dataclasses.dataclass(frozen=True)
class Hop:
    """One step of the call: the kernel that ``entry`` says serves ``key``, the
    highest key of ``keyset`` (the keys left at this step); ``handlers``, for
    the PythonDispatcher and Python keys, the Python code that kernel hands
    the call to, in order; and what happens after it (``then``)."""

    key: str
    keyset: tuple[str, ...]
    entry: TableEntry
    then: str
    handlers: tuple[Handler, ...] = ()


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
            if hop.handlers:
                lines.append("  Python handlers, in the order they are asked:" if hop.key == "Python"
                             else "  handler:")
                for j, h in enumerate(hop.handlers, 1):
                    site = f"  (Python {display_site(h.site)})" if h.site else ""
                    lines.append(f"    {j}. {h.kind}: {h.name} -- {h.note}{site}")
            lines.append(f"  then:   {hop.then}")
        if self.error:
            lines += ["", f"Fails: {self.error}", f"Fix: {self.fix}"]
        return "\n".join(lines)


def _resolve(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, str]:
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
        raise TypeError(f"explain: expected an operator (OpOverload, OpOverloadPacket, custom op, "
                        f"'ns::op[.overload]', or a HigherOrderOperator such as opdispatch.ops.higher_order.cond), "
                        f"got {op!r}")
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


@dataclasses.dataclass(frozen=True)
class _Call:
    """What explain knows of the call: the operator (its OpOverload for the
    Python-side tables), its dispatch table, the tensor arguments (name,
    tensor) in the order the Python key's fallback sees them, and this
    thread's modes, innermost first."""

    qualname: str
    overload: Any
    entries: dict[str, TableEntry]
    tensors: tuple[tuple[str, Any], ...]
    modes: tuple[Any, ...]
    #: Whether ``overload`` is a HigherOrderOperator (dispatched in Python, no C++ entry).
    higher_order: bool = False


def explain(op: Any, *args: Any, **kwargs: Any) -> Explanation:
    """How calling ``op(*args, **kwargs)`` would dispatch, without calling it.

    Args:
        op: an ``OpOverload`` (``opdispatch.ops.od.add.Tensor``), an
            ``OpOverloadPacket`` (``opdispatch.ops.od.add``: the overload is
            resolved from the arguments, as a call would), a custom op made
            by ``custom_op``, a name "ns::op[.overload]", or a
            :class:`~opdispatch._ops.HigherOrderOperator`
            (``opdispatch.ops.higher_order.cond``, or "higher_order::cond").
        *args: the call's positional arguments (tensors on any device, e.g.
            ``meta`` ones, which cost nothing; tensor subclasses).
        **kwargs: its keyword arguments.

    Returns:
        :class:`Explanation`: the key set with where each key came from (the
        tensor arguments and their classes, the thread-local include set and
        what put keys there — the dispatch modes, the Python dispatcher —;
        keys removed by the exclude set or skipped by a fallthrough kernel),
        each hop (the key, the kernel the dispatch table holds for it, the
        precedence rule that chose it, where the kernel was registered, what
        happens next; at the PythonDispatcher key the py_impl kernel or C++
        kernel it picks, at the Python key the modes and subclasses it asks,
        in order; see Note [Hops] in this file), and for a call that would
        fail, why and what registration would serve it. ``print()`` it for a
        report. What a mode's or subclass's handler does is its own code:
        explain shows where a call below the Python key goes.

    Raises:
        TypeError: the arguments do not bind to the schema (the error the
            call would raise), or ``op`` is not an operator.
        RuntimeError: no such operator or overload.

    The key set is computed as the dispatcher does (docs/architecture.rst, "One call"):
    (the union of the tensor arguments' keys | TLS included) - TLS excluded,
    without the keys whose kernel is a fallthrough; the table entries come
    from the code that builds the dispatch table
    (PyTorch: OperatorEntry::computeDispatchTableEntryWithDebug). Explaining
    may fill the operator's Python-dispatcher cache (``_dispatch_cache``)
    with the decisions the call would cache.
    """
    from ._ops import HigherOrderOperator, _resolve_opoverload, ops

    if isinstance(op, str) and op.startswith("higher_order::"):
        op = getattr(ops.higher_order, op.split("::", 1)[1])
    if isinstance(op, HigherOrderOperator):
        return _explain_higher_order(op, args, kwargs)
    name, overload = _resolve(op, args, kwargs)
    qualname = name + ("." + overload if overload else "")
    schema = str(_C._dispatch_find_schema_or_throw(name, overload).schema())
    tensor_keys = _C._dispatch_argument_key_sets(name, overload, *args, **kwargs)
    call = _Call(qualname, _resolve_opoverload(name, overload), table_entries(qualname),
                 tuple((_argument_label(arg, index), t) for arg, index, _, t in tensor_keys), _modes())
    return _explanation(call, schema, tensor_keys)


def _explain_higher_order(hop: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Explanation:
    """explain() of a HigherOrderOperator call: its key set as its dispatch
    computes it (the tensors among the pytree-flattened arguments), its
    table from its py_impl kernels (Note [Hops])."""
    qualname = f"higher_order::{hop.name()}"
    schema = (f"{qualname}: a HigherOrderOperator (no schema: it takes functions and pytrees of tensors, and is "
              f"dispatched in Python)")
    tensors = _hop_tensors(hop, args, kwargs)
    tensor_keys = [(label, -1, _C._dispatch_keys(t), t) for label, t in tensors]
    call = _Call(qualname, hop, hop_table_entries(hop), tuple(tensors), _modes(), higher_order=True)
    return _explanation(call, schema, tensor_keys)


def _hop_tensors(hop: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, tensor) for each tensor among the call's pytree-flattened
    arguments, in the order dispatch flattens them: "operands[1]" (the
    parameter's name from the operator's ``__call__`` where it names them,
    and the tensor's index among that argument's leaves), "args[0]" else.
    Raises TypeError if the arguments do not bind to that signature."""
    import inspect

    from .utils._pytree import tree_flatten

    params = inspect.signature(hop.__call__).parameters.values()
    named = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    bound = [(named[i] if i < len(named) else f"args[{i}]", a) for i, a in enumerate(args)]
    bound += list(kwargs.items())
    if len(named) and len(args) > len(named) and not any(p.kind == p.VAR_POSITIONAL for p in params):
        raise TypeError(f"{hop.name()}() takes {len(named)} positional arguments but {len(args)} were given")
    out = []
    for name, value in bound:
        if isinstance(value, _C.TensorBase):
            out.append((name, value))
            continue
        leaves = tree_flatten(value)[0]
        out += [(f"{name}[{i}]", t) for i, t in enumerate(leaves) if isinstance(t, _C.TensorBase)]
    return out


def _modes() -> tuple[Any, ...]:
    """This thread's dispatch modes, the innermost (asked first) first."""
    from .utils._python_dispatch import _get_current_dispatch_mode_stack

    return tuple(reversed(_get_current_dispatch_mode_stack()))


def _explanation(call: _Call, schema: str, tensor_keys: list[Any]) -> Explanation:
    default = _names(_C._dispatch_default_included_set())
    included = [k for k in _names(_C._dispatch_tls_local_include_set()) if k not in default]
    excluded = sorted(_names(_C._dispatch_tls_local_exclude_set()), key=_priority, reverse=True)
    keys = _key_sources(call, tensor_keys, included, default, excluded)
    hops, error, fix = _hops(call, [k.key for k in keys if not k.removed])
    return Explanation(call.qualname, schema, keys, tuple(included), tuple(excluded), hops, error, fix)


def _argument_label(arg: str, index: int) -> str:
    return arg if index < 0 else f"{arg}[{index}]"


def _mode_slot(mode: Any) -> Optional[str]:
    """"_TorchDispatchModeKey.FAKE" for the infrastructure mode of that slot, None for a user mode."""
    for slot, key in _C._TorchDispatchModeKey.__members__.items():
        if _C._get_dispatch_mode(key) is mode:
            return f"_TorchDispatchModeKey.{slot}"
    return None


def _mode_name(mode: Any) -> str:
    """The mode's class, and its slot if it is an infrastructure mode ("FakeTensorMode [_TorchDispatchModeKey.FAKE]")."""
    slot = _mode_slot(mode)
    return type(mode).__name__ + (f" [{slot}]" if slot else "")


def _key_sources(call: _Call, tensor_keys: list[Any], included: list[str], default: list[str],
                 excluded: list[str]) -> tuple[KeySource, ...]:
    """Each key the arguments and the TLS include set bring, highest first, with why it may not count.
    A key of the default include set (BackendSelect) is listed only where the
    operator has a kernel for it (a factory), not where it is a fallthrough."""
    sources: dict[str, list[str]] = {}
    for arg, index, keyset, tensor in tensor_keys:
        label = _argument_label(arg, index)
        for key in _names(keyset):
            python_key = key in ("Python", "PythonTLSSnapshot") and type(tensor) is not _C.TensorBase
            sources.setdefault(key, []).append(f"{label} (class {type(tensor).__name__})" if python_key else label)
    for key in included:
        if key in ("Python", "PythonTLSSnapshot") and call.modes:
            origin = "TLS include set: the dispatch mode stack (" + ", ".join(map(_mode_name, call.modes)) + ")"
        elif key == "PythonDispatcher":
            origin = "TLS include set: the Python dispatcher is on (enable_python_dispatcher)"
        else:
            origin = "TLS include set"
        sources.setdefault(key, []).append(origin)
    for key in default:
        entry = call.entries.get(key)
        if entry is not None and not entry.fallthrough:
            sources.setdefault(key, []).append("default include set")
    keys = []
    for key in sorted(sources, key=_priority, reverse=True):
        entry = call.entries[key]
        if key in excluded:
            removed = "excluded by the TLS exclude set"
        elif entry.rule == "fallthrough":
            removed = entry.describe()
        elif entry.fallthrough:
            removed = f"skipped: a fallthrough kernel ({entry.origin}, [{entry.rule}])"
        else:
            removed = ""
        keys.append(KeySource(key, tuple(sources[key]), removed))
    return tuple(keys)


def _python_dispatcher_handler(call: _Call, target: str) -> Handler:
    """What the PythonDispatcher fallback runs for the call's next key
    ``target``: the handler OpOverload._get_dispatch picks (Note [The Python
    dispatcher] in csrc/python/PythonDispatcher.cpp)."""
    op = call.overload
    chosen = op._get_dispatch(_K.__members__[target])
    if target == "Python" and not isinstance(chosen, _C.DispatchKey):
        # The handler of the Python key: the innermost mode's py_impl(ModeClass) kernel, else the key's fallback.
        mode = call.modes[0] if call.modes else None
        kernel = None if mode is None else op.python_key_table.get(type(mode))
        if kernel is not None:
            return Handler("py_impl mode kernel", getattr(kernel, "__qualname__", repr(kernel)), python_site(kernel),
                           f"py_impl({type(mode).__name__}) of {call.qualname}, for the innermost mode; it runs "
                           f"with that mode popped")
        chosen = _K.Python
    if isinstance(chosen, _C.DispatchKey):
        return Handler("C++ kernel", target, "", f"no py_impl kernel of {call.qualname} serves {target}")
    registered = next((k.name for k, fn in op.py_kernels.items() if fn is chosen), target)
    return Handler("py_impl kernel", getattr(chosen, "__qualname__", repr(chosen)), python_site(chosen),
                   f"py_impl({registered}) of {call.qualname}, which resolve_key picks for {target}")


def _class_torch_dispatch(cls: type) -> Any:
    """The ``__torch_dispatch__`` attribute of ``cls`` as the class defines it (unbound), or None."""
    for klass in cls.__mro__:
        if "__torch_dispatch__" in vars(klass):
            return vars(klass)["__torch_dispatch__"]
    return None


def _python_key_handlers(call: _Call) -> tuple[Handler, ...]:
    """The handlers the Python key's fallback asks, in order (Note [The Python
    key] in csrc/python/PythonFallbackKernel.cpp)."""
    from ._ops import _overloaded_args
    from .utils._python_dispatch import _torch_dispatch_rules

    rules = _torch_dispatch_rules.get(call.qualname, {})
    handlers = []
    for depth, mode in enumerate(call.modes):
        cls = type(mode)
        note = ("the innermost mode: asked first, and runs with itself popped" if depth == 0 else
                "asked when the modes above it call func")
        slot = _mode_slot(mode)
        note += f"; an infrastructure mode, in the {slot} slot" if slot else ""
        rule = rules.get(cls)
        if rule is not None:
            handlers.append(Handler("mode rule", f"register_torch_dispatch({call.qualname!r}, {cls.__name__})",
                                    python_site(rule), note + "; replaces its __torch_dispatch__ for this operator"))
        else:
            handlers.append(Handler("mode", f"{cls.__qualname__}.__torch_dispatch__",
                                    python_site(_class_torch_dispatch(cls)), note))
    labels = {id(t): label for label, t in reversed(call.tensors)}
    for tensor in _overloaded_args(tuple(t for _, t in call.tensors), {}):
        cls = type(tensor)
        handler = _class_torch_dispatch(cls)
        if handler is None or handler is _C._disabled_torch_dispatch_impl:
            continue
        note = (f"argument {labels[id(tensor)]}; after the modes, a subclass before its bases, else in argument "
                f"order (PyTorch: append_overloaded_arg)")
        rule = rules.get(cls)
        if rule is not None:
            handlers.append(Handler("subclass rule", f"register_torch_dispatch({call.qualname!r}, {cls.__name__})",
                                    python_site(rule), note + "; its __torch_dispatch__ runs if it returns "
                                                              "NotImplemented"))
        handlers.append(Handler("subclass", f"{cls.__qualname__}.__torch_dispatch__", python_site(handler), note))
    return tuple(handlers)


def _hop_python_handlers(call: _Call) -> tuple[Handler, ...]:
    """The handlers a HigherOrderOperator asks at the Python key, in order
    (Note [Dispatching a higher-order operator] in _ops.py); the last is a
    "no rule" one where the call would raise NotImplementedError."""
    from ._ops import _overloaded_args

    hop = call.overload
    table = hop.python_key_table
    handlers = []
    if call.modes:
        mode = call.modes[0]
        cls = type(mode)
        note = f"the innermost mode ({_mode_name(mode)})"
        if cls in table:
            handlers.append(Handler("mode kernel", function_name(table[cls]), python_site(table[cls]),
                                    f"py_impl({cls.__name__}) of {hop.name()}, for {note}; runs with it popped"))
        elif getattr(mode, "supports_higher_order_operators", False):
            handlers.append(Handler("mode", f"{cls.__qualname__}.__torch_dispatch__",
                                    python_site(_class_torch_dispatch(cls)),
                                    f"{note}, popped while it runs; its class sets supports_higher_order_operators, "
                                    f"so it gets __torch_dispatch__({hop.name()}, (), args, kwargs)"))
        else:
            return (*handlers, Handler("no rule", cls.__qualname__, "", f"{note}: no py_impl({cls.__name__}) "
                                       f"kernel and no supports_higher_order_operators"))
    labels = {id(t): label for label, t in reversed(call.tensors)}
    for tensor in _overloaded_args(tuple(t for _, t in call.tensors), {}):
        cls = type(tensor)
        owner = getattr(tensor, "fake_mode", None)
        note = f"argument {labels[id(tensor)]} (class {cls.__name__})"
        if cls in table:
            handlers.append(Handler("subclass kernel", function_name(table[cls]), python_site(table[cls]),
                                    f"py_impl({cls.__name__}) of {hop.name()}, for {note}"))
        elif owner is not None and type(owner) in table:
            kernel = table[type(owner)]
            handlers.append(Handler("mode kernel", function_name(kernel), python_site(kernel),
                                    f"py_impl({type(owner).__name__}) of {hop.name()}, for {note}: the kernel of "
                                    f"the mode the tensor belongs to"))
        else:
            return (*handlers, Handler("no rule", cls.__qualname__, "", f"{note}: no py_impl({cls.__name__}) kernel"))
    return tuple(handlers)


def _missing(call: _Call, key: str, entry: TableEntry) -> tuple[str, str]:
    """(error, fix) of a call that no kernel serves at ``key``."""
    if not call.higher_order:
        error = (f"no kernel of {call.qualname} serves {key}: none is registered at {key}, no alias-key kernel "
                 f"covers it and {key} has no backend fallback." if not entry.served
                 else f"{call.qualname} at AutogradOther is {entry.describe()}.")
        return error, _fix(call.qualname, key, call.entries)
    name = call.overload.name()
    if entry.rule == "ambiguous autogradother":
        return (f"{call.qualname} at AutogradOther is {entry.describe()}.",
                f"register a kernel at AutogradOther or Autograd: {name}.py_impl(DispatchKey.Autograd).")
    have = ", ".join(k.name for k in call.overload.py_kernels) or "none"
    return (f"no kernel of {call.qualname} serves {key}: no py_impl kernel at {key} or at an alias key that covers "
            f"it (a backend fallback does not serve a higher-order operator).",
            f"register one with {name}.py_impl(DispatchKey.{key}), or {name}.py_impl("
            f"DispatchKey.CompositeExplicitAutograd) for every backend. Its py_impl keys: {have}.")


def _hops(call: _Call, remaining: list[str]) -> tuple[tuple[Hop, ...], Optional[str], Optional[str]]:
    """The hops of a call whose key set is ``remaining`` (highest first), and (error, fix) if it fails."""
    hops: list[Hop] = []
    past_python = False
    while True:
        keyset = tuple(remaining)
        python_dispatcher = "PythonDispatcher" in keyset and not call.higher_order
        below_dispatcher = tuple(k for k in keyset if not (python_dispatcher and k == "PythonDispatcher"))
        key = below_dispatcher[0] if below_dispatcher else "Undefined"
        if python_dispatcher:
            handler = _python_dispatcher_handler(call, key)
            if handler.kind == "C++ kernel":
                then = (f"the C++ kernel of {key} runs next, with PythonDispatcher still in the key set, so each "
                        f"redispatch comes back here")
            else:
                then = (f"the Python kernel runs instead of the C++ kernel of {key}; explain cannot see what it "
                        f"does: the calls it makes dispatch anew (through the Python dispatcher again unless it "
                        f"turns it off with no_python_dispatcher())")
            hops.append(Hop("PythonDispatcher", keyset, call.entries["PythonDispatcher"], then, (handler,)))
            if handler.kind != "C++ kernel":
                return tuple(hops), None, None
        entry = call.entries[key]
        if not entry.served or entry.rule == "ambiguous autogradother":
            hops.append(Hop(key, below_dispatcher, entry, "the call raises NotImplementedError"))
            error, fix = _missing(call, key, entry)
            if past_python:
                error = "if a handler at the Python key calls func on these arguments below it: " + error
            return tuple(hops), error, fix
        handlers: tuple[Handler, ...] = ()
        if key == "Python" and call.higher_order:
            handlers = _hop_python_handlers(call)
            if handlers and handlers[-1].kind == "no rule":
                first = len(handlers) == 1
                hops.append(Hop(key, below_dispatcher, entry, "the call raises NotImplementedError" if first else
                                "the handlers are asked in order; if those before the last return NotImplemented, "
                                "the call raises NotImplementedError", handlers))
                cls = handlers[-1].name
                error = (("" if first else "if the handlers before it return NotImplemented: ") +
                         f"there is no rule for {call.qualname} and {cls} ({handlers[-1].note}).")
                fix = (f"register one with {call.overload.name()}.py_impl({cls}) (for a mode, or set "
                       f"{cls}.supports_higher_order_operators = True and handle it in __torch_dispatch__).")
                return tuple(hops), error, fix
        elif key == "Python" and entry.rule == "backend fallback":
            handlers = _python_key_handlers(call)
        past_python = past_python or key == "Python"
        kind = _hop_kind(key, entry, handlers)
        hops.append(Hop(key, below_dispatcher, entry, kind.then, handlers))
        if kind.below is None:
            return tuple(hops), None, None
        below = set(_names(kind.below))  # PythonDispatcher stays (Note [FULL_AFTER keeps the Python dispatcher])
        remaining = [k for k in keyset if k in below]
