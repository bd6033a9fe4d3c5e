"""Fake impls: Python functions that compute an operator's output metadata
on meta tensors. Each operator with one has a FakeImplHolder, registered as
its Meta kernel (and kept in registry.fake_holders), which runs the fake impl
with the context get_ctx() returns.
PyTorch: torch/_library/fake_impl.py (which runs them on FakeTensors too).
"""
from __future__ import annotations

import contextlib
import dataclasses
import threading
import warnings
from typing import Any, Callable, Iterator, NoReturn, Optional

from .. import _C
from . import registry
from .utils import check_callable, lookup_op

__all__ = ["FakeImplCtx", "FakeImplHolder", "Kernel", "find", "get_ctx", "missing_fake_impl", "register",
           "shape_env_for_fake_impls"]


@dataclasses.dataclass(frozen=True)
class Kernel:
    """A fake impl and where it was registered ("file:line")."""

    func: Callable[..., Any]
    source: str


# Per thread: ``ctx``, the FakeImplCtx of the fake impl running now (None
# outside one); ``shape_env``, the ShapeEnv of the FakeTensorMode running it (or None).
_local = threading.local()


class FakeImplCtx:
    """The context of a running fake impl (``opdispatch.library.get_ctx()``).
    PyTorch: torch._library.fake_impl.FakeImplCtx."""

    def __init__(self, qualname: str, source: str) -> None:
        self._qualname = qualname
        self._source = source

    def new_dynamic_size(self, *, min: int = 0, max: Optional[int] = None) -> Any:
        """A size that depends on the data of the inputs (e.g. the number of
        nonzero elements), for an output shape: ``[ctx.new_dynamic_size(), x.dim()]``.

        ``min`` and ``max`` are inclusive bounds (``max=None``: unbounded).
        Under FakeTensorMode (and make_fx) it returns a new unbacked
        :class:`~opdispatch._subclasses.symbolic_shapes.SymInt` (``u0``,
        ``u1``, ...), which the fake outputs' shapes and the traced graph carry
        (Note [Symbolic sizes]). Meta tensors have concrete sizes, so on them
        the value is a concrete int: ``max`` when given (an output large
        enough for any data), else ``min`` (PyTorch raises for meta tensors).

        Raises ValueError if ``min`` or ``max`` is not an int, ``min < 0`` or
        ``max < min``. PyTorch: FakeImplCtx.new_dynamic_size.
        """
        for name, value in (("min", min), ("max", max)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise ValueError(f"ctx.new_dynamic_size({name}={value!r}): expected {name} to be an int (a statically "
                                 f"known bound), got {type(value).__name__}")
        if min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, ...): expected min to be greater than or equal to 0: "
                             f"this API can only create non-negative sizes.")
        if max is not None and max < min:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected max >= min")
        shape_env = getattr(_local, "shape_env", None)
        if shape_env is not None:
            return shape_env.create_unbacked_symint(min, max)
        return min if max is None else max

    def create_unbacked_symint(self, *, min: int = 2, max: Optional[int] = None) -> Any:
        """The former name of :meth:`new_dynamic_size`, with its former
        default ``min=2``; warns FutureWarning. PyTorch:
        FakeImplCtx.create_unbacked_symint (deprecated)."""
        warnings.warn("create_unbacked_symint is deprecated, please use new_dynamic_size instead",
                      FutureWarning, stacklevel=2)
        return self.new_dynamic_size(min=min, max=max)


@contextlib.contextmanager
def shape_env_for_fake_impls(shape_env: Any) -> Iterator[None]:
    """Makes ``new_dynamic_size()`` in this thread return symbols of
    ``shape_env`` (a ShapeEnv) during the block: FakeTensorMode runs fake
    impls inside it."""
    prev = getattr(_local, "shape_env", None)
    _local.shape_env = shape_env
    try:
        yield
    finally:
        _local.shape_env = prev


def get_ctx() -> Optional[FakeImplCtx]:
    """The FakeImplCtx of the fake impl running in this thread; None outside
    a fake impl. PyTorch: torch.library.get_ctx (global_ctx_getter)."""
    ctx: Optional[FakeImplCtx] = getattr(_local, "ctx", None)
    return ctx


class FakeImplHolder:
    """The fake impl of one operator; the holder itself is the operator's Meta
    kernel. ``kernel`` is looked up on every call, so registering a fake impl
    later (or replacing a custom op's) needs no new dispatcher registration.
    Without a kernel, ``missing(*args, **kwargs)`` handles the call (it raises,
    or returns the trivial result). PyTorch: FakeImplHolder and construct_meta_kernel."""

    def __init__(self, qualname: str, missing: Optional[Callable[..., Any]] = None) -> None:
        self.qualname = qualname
        self.kernel: Optional[Kernel] = None
        self._missing = missing

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kernel = self.kernel
        if kernel is None:
            if self._missing is None:
                raise RuntimeError(f"{self.qualname}: its fake impl was removed while this call was dispatched")
            return self._missing(*args, **kwargs)
        prev = getattr(_local, "ctx", None)
        _local.ctx = FakeImplCtx(self.qualname, kernel.source)
        try:
            return kernel.func(*args, **kwargs)
        finally:
            _local.ctx = prev


def find(qualname: str) -> Optional[FakeImplHolder]:
    """The FakeImplHolder of an operator ("ns::name[.overload]"), if it has one."""
    return registry.fake_holders.get(qualname)


def register(qualname: str, func: Callable[..., Any], source: str, registrations: registry.Registrations) -> None:
    """Registers ``func`` as the fake impl of ``qualname`` (registered at
    ``source``, "file:line"), undone with ``registrations``. An operator
    without a holder (one not made by custom_op or the legacy API) gets one,
    owned by ``registrations`` too.

    Raises ValueError if the operator is not defined; RuntimeError if it
    already has a fake impl (naming where it was registered), a Meta kernel
    registered another way, or a CompositeImplicitAutograd kernel (it
    decomposes, so its parts need fake impls instead).
    PyTorch: FakeImplHolder.register (allow_override=False).
    """
    check_callable(func, f"register_fake for {qualname}")
    lookup_op(qualname)
    holder = registry.fake_holders.get(qualname)
    if holder is not None and holder.kernel is not None:
        raise RuntimeError(
            f"register_fake(...): the operator {qualname} already has a fake impl registered at "
            f"{holder.kernel.source}. Destroy the Library it was registered with first, or register only one."
        )
    if holder is None:
        if _C._dispatch_has_kernel_for_dispatch_key(qualname, "Meta"):
            raise RuntimeError(
                f"register_fake(...): the operator {qualname} already has a DispatchKey::Meta implementation via "
                f"a pre-existing opdispatch.library or OPDISPATCH_LIBRARY registration. Please either remove that "
                f"registration or don't call register_fake."
            )
        if _C._dispatch_has_kernel_for_dispatch_key(qualname, "CompositeImplicitAutograd"):
            raise RuntimeError(
                f"register_fake(...): the operator {qualname} already has an implementation for this device type "
                f"via a pre-existing registration to DispatchKey::CompositeImplicitAutograd. "
                f"CompositeImplicitAutograd operators do not need a fake impl; instead, the operator will "
                f"decompose into its constituents and those can have fake impls defined on them."
            )
        holder = FakeImplHolder(qualname)
        registrations.add_fake_holder(holder, source)
    registrations.set_fake_kernel(holder, Kernel(func, source))


def missing_fake_impl(message: str) -> Callable[..., NoReturn]:
    """A ``missing`` handler raising NotImplementedError(message)."""

    def missing(*args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError(message)

    return missing
