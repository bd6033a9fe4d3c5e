"""The Python registry: what opdispatch.library, custom_op and the legacy
custom-op API have registered (definitions, Python kernels, fake-impl
holders, custom ops), and :class:`Registrations`, the one way to register
and to undo. PyTorch: torch.library._defs / _impls,
torch/_library/simple_registry.py, custom_ops.OPDEFS, _custom_op global_registry.

Note [The Python registry]
Every registration made from Python belongs to one :class:`Registrations`:
a Library has one, a CustomOpDef has one, a legacy CustomOp uses its
Library's. Its methods are the only code that writes the tables below or
registers with the dispatcher on Python's behalf (Library.define and .impl
make the same calls as its define and impl: ``_C._library_define`` and
``_C._library_impl``, which keep the tables, see Note [Registration fast
path] in csrc/python/python_dispatch.cpp), and
:meth:`Registrations.destroy` (run by ``Library._destroy``, the Library's
finalizer, ``_scoped_library``'s exit, ``CustomOpDef._destroy`` and the
legacy ``CustomOp._destroy``) the only code that undoes: it resets the _C
library holding the dispatcher registrations, runs the undo steps of the
registrations with a lifetime of their own (replacement kernels, fake
kernels, table entries) newest first, and removes the definitions and
kernel slots it added. So a teardown leaves the dispatcher and every table
here exactly as before (tests/test_registry.py checks each way of
registering).

This module is the bottom of the Python layer (it imports only _C):
``opdispatch._ops`` reads :data:`defs` for ``OpOverload._defined_in_python``
and listens to definition changes to keep its packets current
(:func:`set_definition_listener`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

from .. import _C

if TYPE_CHECKING:
    from .fake_impl import FakeImplHolder, Kernel

__all__ = [
    "RegistrationHandle",
    "Registrations",
    "custom_op_defs",
    "defs",
    "fake_holders",
    "impls",
    "impls_key",
    "legacy_custom_ops",
    "set_definition_listener",
]

# Qualified names ("ns::op" or "ns::op.overload") of the operators defined
# from Python. PyTorch: torch.library._defs.
defs: set[str] = set()

# The Python kernels registered from Python, as seed 000 keys them:
# "<namespace>/<op name[.overload]>/<dispatch key as passed, "" for none>".
# At most one per (operator, key), so that two libraries cannot silently
# override each other; real code tests membership to register only once.
# PyTorch: torch.library._impls.
impls: set[str] = set()

# qualname -> the FakeImplHolder registered as that operator's Meta kernel.
# PyTorch: simple_registry.singleton.find(qualname).fake_impl.
fake_holders: dict[str, FakeImplHolder] = {}

# qualname -> the CustomOpDef (custom_op) that defines it now. PyTorch: custom_ops.OPDEFS.
custom_op_defs: dict[str, Any] = {}

# qualname -> the legacy CustomOp (opdispatch._custom_ops) of it. PyTorch: torch._custom_op.impl.global_registry.
legacy_custom_ops: dict[str, Any] = {}

# Called with a qualname after it was defined or its definition undone.
_definition_listener: Optional[Callable[[str], None]] = None

def set_definition_listener(listener: Optional[Callable[[str], None]],
                            watched: Optional[dict[str, Any]] = None) -> None:
    """Makes ``listener(qualname)`` run after an operator is defined from
    Python or that definition is undone (opdispatch.ops refreshes its
    packet). With ``watched``, definitions run it only for namespaces that
    are keys of that dict (those opdispatch.ops has looked up)."""
    global _definition_listener
    _definition_listener = listener
    _C._set_definition_listener(listener, watched)


def _definitions_changed(qualnames: Iterable[str]) -> None:
    if _definition_listener is not None:
        for qualname in qualnames:
            _definition_listener(qualname)


def impls_key(ns: str, op_name: str, dispatch_key: str) -> str:
    """The :data:`impls` key of a Python kernel that a library of namespace
    ``ns`` registers for ``op_name`` ("name[.overload]", optionally
    "ns::"-qualified) at ``dispatch_key`` (as passed; "" for none):
    "<ns>/<name[.overload]>/<dispatch_key>", made by ``_C`` (which keeps
    :data:`impls` by the same rule). PyTorch: the key computed in Library.impl."""
    return _C._python_kernel_slot(ns, op_name, dispatch_key)


def _has_kernel_for_dispatch_key(qualname: str, key: str) -> bool:
    """Whether operator ``qualname`` exists and has a kernel registered at ``key``."""
    try:
        return _C._dispatch_has_kernel_for_dispatch_key(qualname, key)
    except RuntimeError:  # no such operator
        return False


def _check_kernel_slot(key: str, ns: str, op_name: str, dispatch_key: str, site: Optional[str]) -> None:
    """RuntimeError (naming both registration sites) if a Python kernel holds
    :data:`impls` key ``key`` (of ``op_name`` at ``dispatch_key`` in ``ns``).
    "" and "CompositeImplicitAutograd" are two keys, as in PyTorch (both
    register at CompositeImplicitAutograd: the second overrides the first,
    with the override warning)."""
    if key in impls:
        name = f"{ns}::{op_name.split('::')[-1]}"
        if site is None:  # the caller's, as _C would record it
            site = _C._python_call_site_text() or "(unknown)"
        raise RuntimeError(
            f"This is not allowed since there's already a kernel registered from python overriding "
            f"{name}'s behavior for {dispatch_key or 'CompositeImplicitAutograd'} dispatch key and {ns} "
            f"namespace. The existing kernel was registered at {_kernel_site(ns, op_name, key)}; this "
            f"registration is at {site}. Destroy the Library holding the existing kernel first (drop the "
            f"Library object, or call its _destroy() to do it at once; re-running a notebook cell that made it "
            f"leaves the first one alive), register at another dispatch key, or pass allow_override=True to "
            f"Library.impl to override it."
        )


def _kernel_site(ns: str, op_name: str, key: str) -> str:
    """"file:line" of the Python kernel holding :data:`impls` key ``key`` (of
    ``op_name`` in ``ns``): the newest kernel at its dispatch key, whose
    registration recorded it (the dispatcher keeps it; no table here repeats
    it per kernel)."""
    qualname = f"{ns}::{op_name.rpartition('::')[2]}"
    try:
        debug = _C._dispatch_kernel_debug(qualname, key.rpartition("/")[2] or "CompositeImplicitAutograd")
    except ValueError:  # not a key name
        debug = None
    return debug.removeprefix("registered at ") if debug else "(unknown)"


def _check_new_kernel(key: str, ns: str, op_name: str, dispatch_key: str, site: Optional[str]) -> None:
    """The registry's checks of a Python kernel about to take :data:`impls`
    slot ``key`` (``op_name`` at ``dispatch_key`` in ``ns``), which
    ``_C._library_impl`` runs where one may fail (the slot may be taken; a
    Meta kernel): RuntimeError (naming both registration sites) if another
    Python kernel holds the slot (PyTorch: the ``_impls`` check in
    Library.impl with allow_override=False); what :func:`_check_meta_kernel`
    raises."""
    if key in impls:
        _check_kernel_slot(key, ns, op_name, dispatch_key, site)
    _check_meta_kernel(ns, op_name, dispatch_key)


def _check_meta_kernel(ns: str, op_name: str, dispatch_key: str) -> None:
    """RuntimeError for a Meta kernel (``dispatch_key`` "Meta") of ``op_name``
    (in ``ns``) if the operator has a CompositeImplicitAutograd kernel.
    PyTorch rule (Library.impl): let it decompose, and give the operators it
    decomposes into meta kernels."""
    if dispatch_key == "Meta":
        qualname = op_name if "::" in op_name else f"{ns}::{op_name}"
        if _has_kernel_for_dispatch_key(qualname, "CompositeImplicitAutograd"):
            raise RuntimeError(
                f"We should not register a meta kernel directly to the operator '{qualname}', because it has "
                f"a CompositeImplicitAutograd kernel. Instead let the operator decompose, and make sure the "
                f"operators it decomposes into have meta kernels."
            )


# The dispatch keys (as passed) whose kernels _check_new_kernel checks even where their slot is free.
_CHECKED_KEYS = frozenset({"Meta"})

_C._set_python_registry(defs, impls, _check_new_kernel, _CHECKED_KEYS)


# Note [Destruction runs to completion]
# A KeyboardInterrupt (or any exception a hook raises) may arrive at any
# call of a destruction. Registrations.destroy therefore runs its steps
# (reset the _C library, undo the handles newest first, drop the table
# entries, drop the kernel slots and definitions) each to completion: a
# step that raised runs again (each is idempotent: a handle is removed from
# the list only after its undo returned, and an undo run twice does nothing
# the second time), and the first exception is raised once every step is
# done. ``m`` is cleared last, once every step has finished, so an
# exception outside the steps (or in every attempt of one) leaves the owner
# destroyable again: the next destroy, or the finalizer's, finishes it. Library._destroy calls it directly, not through
# weakref.finalize, which marks itself dead before it calls. (issue 29, item 7)

#: How often destroy runs a step that raised before giving up on it (each
#: attempt can only be interrupted by a further signal).
_ATTEMPTS = 3


class RegistrationHandle:
    """Undoes one registration when destroyed; destroying it again does
    nothing. PyTorch: torch._library.utils.RegistrationHandle."""

    __slots__ = ("_on_destroy",)

    def __init__(self, on_destroy: Callable[[], None]) -> None:
        self._on_destroy: Optional[Callable[[], None]] = on_destroy

    def destroy(self) -> None:
        """Runs the undo step unless it ran to its end before (an undo that
        raised runs again next time: Note [Destruction runs to completion])."""
        on_destroy = self._on_destroy
        if on_destroy is not None:
            on_destroy()
            self._on_destroy = None


class Registrations:
    """Everything one owner (a Library, a custom op) registered from Python,
    and the one way to undo it: :meth:`destroy` (see Note [The Python registry]).

    Args:
        kind (str): "DEF", "FRAGMENT" or "IMPL", as for ``_C._dispatch_library``.
        ns (str): the namespace.
        dispatch_key (str): the default key of :meth:`impl` ("" for none).
        file, line: where the owner was created (shown for its definitions).

    Raises what ``_C._dispatch_library`` raises (ValueError for an unknown
    kind or key, RuntimeError for a second DEF library of ``ns``).

    Attributes (seed 000 names them Library.m, _op_defs, _op_impls,
    _registration_handles): ``m``, the _C library holding this owner's
    dispatcher registrations (None once destroyed); ``defs``, the qualnames
    it defined; ``impls``, the :data:`impls` keys of its kernels;
    ``entries``, the (table, key, value) it put in :data:`fake_holders` or a
    custom-op table; ``handles``, the undo steps of registrations with a
    lifetime of their own; ``replacements``, the handle of the newest
    replacement per slot (an :data:`impls` key whose first kernel was
    replaced, see :meth:`impl`; "ns::op/fake" for the fake impl set last,
    see :meth:`set_fake_kernel`).

    Registering after :meth:`destroy` raises RuntimeError.
    """

    __slots__ = ("ns", "dispatch_key", "m", "defs", "impls", "entries", "handles", "replacements", "_undefined")

    def __init__(self, kind: str, ns: str, dispatch_key: str = "", file: str = "/dev/null", line: int = 0) -> None:
        self.m: Any = _C._dispatch_library(kind, ns, dispatch_key, file, line)
        self.ns = ns
        self.dispatch_key = dispatch_key
        self.defs: set[str] = set()
        self.impls: set[str] = set()
        self.entries: list[tuple[dict[str, Any], str, Any]] = []
        self.handles: list[RegistrationHandle] = []
        self.replacements: dict[str, RegistrationHandle] = {}
        self._undefined: list[str] = []  # (destroy's, between its steps)

    def define(self, schema: str, alias_analysis: str = "", tags: Iterable[str] = (),
               site: Optional[str] = "") -> str:
        """Defines an operator ("name[.overload](args) -> returns", the
        namespace optional), registered at ``site`` ("file:line"; default:
        the owner's own site; None: the caller's, the innermost Python frame
        outside opdispatch); returns its qualified name. Raises RuntimeError
        for an invalid ``alias_analysis`` (not "", "FROM_SCHEMA" or
        "CONSERVATIVE"), plus what ``_C`` raises (ValueError for a malformed schema, RuntimeError for
        an operator already defined or a namespace mismatch)."""
        return _C._library_define(self._live() if self.m is None else self.m, schema, alias_analysis, tags, site,
                                  self.defs)

    def impl(
        self,
        op_name: str,
        dispatch_key: str,
        fn: Callable[..., Any],
        site: Optional[str],
        with_keyset: bool = False,
        check_aliasing: bool = False,
        replace: bool = False,
    ) -> None:
        """Registers ``fn`` as the Python kernel of ``op_name`` ("name[.overload]",
        optionally "ns::"-qualified) at ``dispatch_key`` ("": this owner's
        default key), registered at ``site`` ("file:line"; None: the caller's,
        the innermost Python frame outside opdispatch); see ``_C``'s
        ``impl`` for ``with_keyset`` and ``check_aliasing``.

        With ``replace``, a kernel this owner registered at the same key
        before is replaced: the new one is registered in a _C library of its
        own, above the first (the dispatcher runs the newest kernel of a
        key), and the replacement it supersedes is undone.

        Raises RuntimeError if another Python kernel holds the (operator,
        key) slot (naming both sites; PyTorch: the ``_impls`` check in
        Library.impl), or for a Meta kernel on an operator with a
        CompositeImplicitAutograd kernel (PyTorch rule: let it decompose);
        plus what ``_C`` raises (ValueError for an unknown key).
        """
        m = self._live() if self.m is None else self.m
        dispatch_key = dispatch_key or self.dispatch_key
        if replace:
            key = impls_key(self.ns, op_name, dispatch_key)
            if key in self.impls:
                self._replace(key, op_name, dispatch_key, fn, site, with_keyset, check_aliasing)
                return
        # (_C checks the slot with _check_new_kernel and adds it to the tables: Note [Registration fast path].)
        _C._library_impl(m, op_name, dispatch_key, fn, with_keyset, check_aliasing, site, self.impls)

    def _live(self) -> Any:
        if self.m is None:
            raise RuntimeError(f"registering for namespace {self.ns!r} through registrations that were destroyed "
                               f"(Library._destroy, CustomOpDef._destroy): create a new Library or custom op")
        return self.m

    def _replace(self, key: str, op_name: str, dispatch_key: str, fn: Callable[..., Any], site: Optional[str],
                 with_keyset: bool, check_aliasing: bool) -> None:
        library = _C._dispatch_library("FRAGMENT", self.ns, "")
        _C._library_impl(library, op_name, dispatch_key, fn, with_keyset, check_aliasing, site, None)  # (slot held)
        self._supersede(key)
        self.replacements[key] = self.add_handle(library.reset)

    def add_fake_holder(self, holder: FakeImplHolder, site: str) -> None:
        """Registers ``holder`` as its operator's Meta kernel and makes it the
        operator's entry in :data:`fake_holders`, both until :meth:`destroy`.
        Raises what :meth:`impl` raises."""
        self.impl(holder.qualname, "Meta", holder, site=site)
        self._add_entry(fake_holders, holder.qualname, holder)

    def set_fake_kernel(self, holder: FakeImplHolder, kernel: Kernel) -> None:
        """Makes ``kernel`` the fake impl ``holder`` runs, replacing one this
        owner set before, until :meth:`destroy` (the holder may belong to
        another owner: a fake impl registered for a legacy custom op)."""
        self._live()
        slot = f"{holder.qualname}/fake"
        holder.kernel = kernel
        self._supersede(slot)

        def remove() -> None:
            if holder.kernel is kernel:
                holder.kernel = None

        self.replacements[slot] = self.add_handle(remove)

    def add_custom_op(self, table: dict[str, Any], qualname: str, op: Any) -> None:
        """Makes ``op`` the entry of ``qualname`` in ``table``
        (:data:`custom_op_defs` or :data:`legacy_custom_ops`) until :meth:`destroy`."""
        self._add_entry(table, qualname, op)

    def _add_entry(self, table: dict[str, Any], key: str, value: Any) -> None:
        # (Kept as data rather than an undo closure: a custom op makes two, and closures cost ~0.5 KiB.)
        self._live()
        table[key] = value
        self.entries.append((table, key, value))

    def add_handle(self, undo: Callable[[], None]) -> RegistrationHandle:
        """A handle running ``undo`` once, at :meth:`destroy` (or before,
        through :meth:`_supersede`)."""
        self._live()
        handle = RegistrationHandle(undo)
        self.handles.append(handle)
        return handle

    def _supersede(self, slot: str) -> None:
        """Undoes the replacement registered for ``slot`` now, if any."""
        handle = self.replacements.pop(slot, None)
        if handle is not None:
            self.handles.remove(handle)
            handle.destroy()

    def destroy(self) -> None:
        """Undoes every registration of this owner (idempotent): the
        dispatcher's (the _C library is reset), then the undo steps newest
        first, then its kernel slots and definitions, then tells the
        definition listener. Runs to completion even if an exception (a
        KeyboardInterrupt) interrupts a step, and then raises it (Note
        [Destruction runs to completion])."""
        m = self.m
        if m is None:
            return
        first: Optional[BaseException] = None
        done = 0
        for step in (m.reset, self._undo_handles, self._drop_entries, self._drop_slots):
            for _ in range(_ATTEMPTS):
                try:
                    step()
                    done += 1
                    break
                except BaseException as e:  # (run the step again; raised after the rest)
                    first = first or e
        if done == 4:  # (else a later destroy, e.g. the finalizer's, finishes the steps)
            self.m = None
        undefined = self._undefined
        self._undefined = []
        if first is None:
            _definitions_changed(undefined)
        else:
            try:
                _definitions_changed(undefined)
            finally:
                raise first

    def _undo_handles(self) -> None:
        while self.handles:
            self.handles[-1].destroy()  # (then removed: an interrupted undo runs again)
            del self.handles[-1]
        self.replacements.clear()

    def _drop_entries(self) -> None:
        while self.entries:
            table, key, value = self.entries[-1]
            if table.get(key) is value:
                del table[key]
            del self.entries[-1]

    def _drop_slots(self) -> None:
        impls.difference_update(self.impls)
        self.impls.clear()
        defs.difference_update(self.defs)
        self._undefined.extend(self.defs)
        self.defs.clear()
