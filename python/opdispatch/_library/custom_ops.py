"""custom_op: a Python function made into an operator, with kernels per
device, a fake impl and an autograd formula registered on the result.
PyTorch: torch/_library/custom_ops.py.

Note [custom_op call path]
A CustomOpDef is an operator object (a ``_C._DispatchOperator``): calling it
is the dispatcher's C call, with no Python frame of ours in between. The
user's functions are registered directly as kernels, with the two per-call
promises of a custom op (outputs do not alias inputs; mutated arguments get
a version bump) kept by the dispatcher (Note [Post-kernel effects]). Everything
that can change later — replacing a kernel, disabling one
(set_kernel_enabled), registering the autograd formula — changes the
registrations themselves instead of adding an indirection that every call
would pay for: a replacement kernel is registered in a library of its own,
over the first kernel of its key (the dispatcher runs the newest kernel of
a key), and the replacement of a replacement resets that library first.
Only the Meta kernel looks the fake impl up per call (FakeImplHolder), as
meta calls are not hot.
"""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import Any, Callable, Iterable, Iterator, NoReturn, Optional, Sequence, Union, overload

from .. import _C, _ops, library
from .._ops import Tag
from . import fake_impl, registry, utils
from .autograd import make_autograd_kernel
from .infer_schema import SchemaSummary, summarize_inferred_schema

__all__ = ["CustomOpDef", "custom_op"]

device_types_t = Union[str, Sequence[str], None]

# qualname -> the CustomOpDef that defines it now (registry.custom_op_defs);
# a new custom_op of the same name destroys it first. PyTorch: OPDEFS and OPDEF_TO_LIB.
OPDEFS: dict[str, "CustomOpDef"] = registry.custom_op_defs


@overload
def custom_op(name: str, fn: None = None, /, *, mutates_args: Union[str, Iterable[str]],
              device_types: device_types_t = None, schema: Optional[str] = None,
              tags: Union[Tag, Sequence[Tag], None] = None) -> Callable[[Callable[..., Any]], CustomOpDef]: ...
@overload
def custom_op(name: str, fn: Callable[..., Any], /, *, mutates_args: Union[str, Iterable[str]],
              device_types: device_types_t = None, schema: Optional[str] = None,
              tags: Union[Tag, Sequence[Tag], None] = None) -> CustomOpDef: ...
def custom_op(
    name: str,
    fn: Optional[Callable[..., Any]] = None,
    /,
    *,
    mutates_args: Union[str, Iterable[str]],
    device_types: device_types_t = None,
    schema: Optional[str] = None,
    tags: Union[Tag, Sequence[Tag], None] = None,
) -> Union[CustomOpDef, Callable[[Callable[..., Any]], CustomOpDef]]:
    """Makes ``fn`` an operator ``name`` ("namespace::name", or
    "namespace::name.overload") and returns its :class:`CustomOpDef`; used as
    a decorator when ``fn`` is omitted.

    Args:
        name (str): the operator's qualified name. Defining a name again
            replaces the earlier custom op (its kernels and formula go with it).
        mutates_args (Iterable[str] | "unknown"): the names of the arguments
            ``fn`` writes to (they get ``Tensor(a!)`` annotations and a version
            bump after every call); "unknown" marks every tensor argument.
        device_types (None | str | Sequence[str]): the device types ``fn``
            serves ("cpu", "cuda", ...); None: all of them
            (CompositeExplicitAutograd).
        schema (str | None): "(Tensor x) -> Tensor" to use instead of the one
            :func:`infer_schema` reads from ``fn``'s annotations; its mutable
            arguments must be exactly ``mutates_args``.
        tags (Tag | Sequence[Tag] | None): the operator's tags, after
            ``pt2_compliant_tag`` (which every custom op has), duplicates
            dropped (PyTorch: the same order).

    The operator's tensor outputs may not alias its inputs or each other:
    every call checks it (RuntimeError). Without a fake impl, calling it on
    meta tensors raises RuntimeError (operators that mutate and return
    nothing get a trivial one). Without an autograd formula, gradients
    through it raise at backward.

    Raises ValueError for a malformed name or schema, a schema that cannot
    be inferred (see infer_schema), mutable arguments that disagree with
    ``schema``, or a device-specific kernel for an operator without tensor
    arguments; NotImplementedError for keyword-only tensor arguments.
    PyTorch: torch.library.custom_op.

    Example:

    >>> import numpy as np
    >>> from opdispatch.library import custom_op
    >>> @custom_op("mylib::numpy_cos", mutates_args=())
    ... def numpy_cos(x: opdispatch.Tensor) -> opdispatch.Tensor:
    ...     return opdispatch.from_numpy(np.cos(x.numpy()))
    >>> numpy_cos(opdispatch.tensor([0.0]))     # also opdispatch.ops.mylib.numpy_cos(...)
    tensor([1.], dtype=opdispatch.float32)
    """

    def inner(fn: Callable[..., Any]) -> CustomOpDef:
        utils.check_callable(fn, f"custom_op {name}")
        # (An inferred schema is summarized as it is written: parsing it again costs ~5 us per op.)
        summary = summarize_inferred_schema(fn, mutates_args=mutates_args) if schema is None else None
        namespace, opname = utils.parse_namespace(name)
        if namespace in library._reserved_namespaces:
            raise ValueError(f"{namespace} is a reserved namespace. Please try creating a custom op with another "
                             f"namespace.")
        if schema is not None:
            parsed = _C.parse_schema(f"{name}{schema}")
            summary = SchemaSummary.of(schema, parsed)
            if not isinstance(mutates_args, str):
                expected = utils.mutated_arg_names(parsed)
                if expected != set(mutates_args):
                    raise ValueError(
                        f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}`. "
                        f"The schema suggests that the op mutates {expected}, which is different from what was "
                        f"provided to us in `mutates_args`. Please make these consistent."
                    )
        assert summary is not None
        result = CustomOpDef(namespace, opname, summary, fn, _tag_names(name, tags))
        try:
            result._register_kernels(device_types, fn, result._site)
            if not summary.mutates and summary.returns and not summary.returns_views:  # is_functional_schema
                result._register_default_autograd()
            return result
        except BaseException:  # (all or nothing: Note [Destruction runs to completion] in _library/registry.py)
            result._destroy()
            raise

    if fn is None:
        return inner
    return inner(fn)


def _tag_names(name: str, tags: Union[Tag, Sequence[Tag], None]) -> list[str]:
    """The names of custom_op ``name``'s ``tags`` besides pt2_compliant_tag,
    in order, without duplicates; TypeError for one that is not a Tag.
    PyTorch: _normalize_tags and _with_pt2_compliant_tag."""
    names = [] if tags is None else library._tag_names(name, tags)
    return [n for n in dict.fromkeys(names) if n != "pt2_compliant_tag"]


def _device_types(device_types: Union[str, Sequence[str]]) -> list[Optional[str]]:
    if isinstance(device_types, str):
        return [device_types]
    types: list[Optional[str]] = list(device_types)
    return types


class CustomOpDef(_C._DispatchOperator):
    """An operator made by :func:`custom_op`; calling it calls the operator
    (see Note [custom_op call path]). Register more behaviour with
    :meth:`register_kernel`, :meth:`register_fake`, :meth:`register_autograd`;
    ``_opoverload`` is its ``opdispatch.ops.<ns>.<name>.<overload>``.
    Unlike PyTorch's, ``_schema`` is the parsed FunctionSchema (of the
    operator object), not the schema string. PyTorch: CustomOpDef.
    """

    def __init__(self, namespace: str, name: str, schema: SchemaSummary, fn: Callable[..., Any],
                 tags: Sequence[str] = ()) -> None:
        if schema.kwarg_only_tensors:
            raise NotImplementedError(
                f"custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. "
                f"Got: {namespace}::{name}{schema.text}"
            )
        self._namespace = namespace
        self._name = name
        self._init_fn = fn
        self._backend_fns: dict[Optional[str], Callable[..., Any]] = {}
        self._disabled_kernel: set[Optional[str]] = set()
        self._opoverload_cache: Optional[_ops.OpOverload] = None
        self._has_tensor_arg: Optional[bool] = None  # computed on first need (register_kernel for a device)
        self._default_autograd: Optional[Callable[..., Any]] = None  # Note [The default autograd kernel]
        self._torch_dispatch_fns: dict[Any, Callable[..., Any]] = {}  # class -> rule (register_torch_dispatch)
        self._qualname = qualname = f"{namespace}::{name}"
        previous = OPDEFS.get(qualname)
        if previous is not None:
            previous._destroy()
        # One Registrations (see Note [The Python registry]) holds the
        # definition, the kernels and the table entries; a replaced kernel is
        # registered over the first (Registrations.impl(replace=True)).
        filename, lineno = library._call_site_frame() or ("(unknown)", 0)
        self._site = f"{filename}:{lineno}"
        self._registrations = registrations = registry.Registrations("FRAGMENT", namespace, "", filename, lineno)
        try:
            registrations.define(name + schema.text, "", ["pt2_compliant_tag", *tags])
            base, _, overload = name.partition(".")
            _C._DispatchOperator.__init__(self, f"{namespace}::{base}", overload)
            # Note [Post-kernel effects]: an operator whose schema declares
            # a returned view may alias.
            self._check_aliasing = schema.returns_tensors and not schema.returns_views
            self._trivial_fake = schema.mutates and not schema.returns
            self._fake = fake_impl.FakeImplHolder(qualname, self._no_fake_impl)
            registrations.add_fake_holder(self._fake, self._site)
            registrations.add_custom_op(OPDEFS, qualname, self)
        except BaseException:
            registrations.destroy()
            raise

    def _set_kernel(self, key: str, fn: Callable[..., Any], *, with_keyset: bool = False,
                    check_aliasing: bool = False, site: Optional[str] = None) -> None:
        """Registers ``fn`` as this op's kernel at dispatch key ``key``,
        replacing the one registered there before (see Note [custom_op call
        path]); ``site``: the user's call site ("file:line"), if known.
        RuntimeError if a Python kernel registered otherwise holds the key."""
        self._registrations.impl(self._name, key, fn, site=library._call_site() if site is None else site,
                                 with_keyset=with_keyset, check_aliasing=check_aliasing, replace=True)

    def _destroy(self) -> None:
        """Removes the operator and everything registered for it: what a new
        custom_op of the same name does first, and tests do after themselves.
        PyTorch: the _destroy of the op's library (OPDEF_TO_LIB)."""
        self._registrations.destroy()

    @property
    def _opoverload(self) -> _ops.OpOverload:
        """``opdispatch.ops.<ns>.<name>.<overload>`` (looked up on first use:
        listing a namespace's operators costs more than defining one)."""
        if self._opoverload_cache is None:
            self._opoverload_cache = utils.lookup_op(self._qualname)
        return self._opoverload_cache

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._qualname})>"

    def _no_fake_impl(self, *args: Any, **kwargs: Any) -> None:
        if self._trivial_fake:
            return None
        raise RuntimeError(
            f"There was no fake impl registered for {self}. A fake impl computes the operator's output metadata "
            f"on meta tensors (any call with meta tensors, and opcheck's fake check, needs one). Please use "
            f"`{getattr(self._init_fn, '__name__', 'op')}.register_fake` to add a fake impl."
        )

    def register_kernel(self, device_types: device_types_t, fn: Optional[Callable[..., Any]] = None, /
                        ) -> Callable[..., Any]:
        """Registers ``fn`` as this operator's kernel for ``device_types``
        ("cpu", "cuda", a sequence of them, or None for every device:
        CompositeExplicitAutograd), replacing a kernel registered before for
        the same device type. A decorator when ``fn`` is omitted; returns
        ``fn``. Raises ValueError for an unknown device type, for "meta"
        (use register_fake), or for a device type when the operator has no
        tensor arguments (its calls never carry a device; register with
        None). PyTorch: CustomOpDef.register_kernel.
        """

        def inner(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._register_kernels(device_types, fn)
            return fn

        if fn is None:
            return inner
        return inner(fn)

    def _register_kernels(self, device_types: device_types_t, fn: Callable[..., Any],
                          site: Optional[str] = None) -> None:
        if device_types is None:  # every device: what most custom ops have
            self._backend_fns[None] = fn
            self._install_kernel(None, site)
            return
        types = _device_types(device_types)
        for device_type in types:
            if device_type is not None:
                if library._device_type_to_key(device_type) == "Meta":
                    raise ValueError(
                        f"{self}: the Meta kernel of a custom op is its fake impl: register it with "
                        f"register_fake, not register_kernel('meta')."
                    )
                if self._has_tensor_arg is None:
                    self._has_tensor_arg = utils.has_tensor_arg(self._schema)
                if not self._has_tensor_arg:
                    raise ValueError(
                        f"{self}: a kernel for device type '{device_type}' is never reached, because the "
                        f"operator has no Tensor arguments to dispatch on; register it with device_types=None "
                        f"(every device) instead."
                    )
        for device_type in types:
            self._backend_fns[device_type] = fn
            self._install_kernel(device_type, site)

    def _register_default_autograd(self) -> None:
        """Gives a functional custom op the autograd kernel PyTorch's custom_op
        always has: with an input that requires grad (and grad mode on), the
        kernel runs with grad mode off, the outputs require grad, and backward
        raises until register_autograd supplies a formula (see Note [The
        default autograd kernel]). PyTorch: CustomOpDef._register_to_dispatcher
        (autograd.make_autograd_impl)."""
        self._set_kernel("Autograd", functools.partial(_default_autograd_kernel, self), with_keyset=True,
                         site=self._site)

    def _no_formula(self, ctx: Any, *grads: Any) -> NoReturn:
        ns, name = self._qualname.split("::", 1)
        base, _, overload = name.partition(".")
        raise RuntimeError(f"Trying to backward through {ns}.{base}.{overload or 'default'} but no autograd formula "
                           f"was registered. Please use register_autograd to add one.")

    def _install_kernel(self, device_type: Optional[str], site: Optional[str] = None) -> None:
        """(Re)registers the kernel of ``device_type``: its function, or the
        operator's original function while disabled (``site``: see _set_kernel)."""
        fn = self._init_fn if device_type in self._disabled_kernel else self._backend_fns[device_type]
        key = "CompositeExplicitAutograd" if device_type is None else library._device_type_to_key(device_type)
        self._set_kernel(key, fn, check_aliasing=self._check_aliasing, site=site)

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type: str, enabled: bool = True) -> Iterator[None]:
        """``with op.set_kernel_enabled("cpu", False):`` runs the operator's
        original function instead of the kernel registered for
        ``device_type`` during the block (``enabled=True`` re-enables a
        disabled one); the previous state returns after it. Warns
        (UserWarning) when there is nothing to change. PyTorch: CustomOpDef.set_kernel_enabled.
        """
        originally_disabled = device_type in self._disabled_kernel
        if device_type not in self._backend_fns:
            warnings.warn(f"{self}: set_kernel_enabled({device_type!r}, {enabled}): no kernel was registered for "
                          f"this device type", stacklevel=3)
        if originally_disabled != enabled:
            warnings.warn(f"{self}: the kernel for {device_type!r} is already "
                          f"{'enabled' if enabled else 'disabled'}", stacklevel=3)
        self._set_disabled(device_type, not enabled)
        try:
            yield
        finally:
            self._set_disabled(device_type, originally_disabled)

    def _set_disabled(self, device_type: str, disabled: bool) -> None:
        if (device_type in self._disabled_kernel) == disabled:
            return
        if disabled:
            self._disabled_kernel.add(device_type)
        else:
            self._disabled_kernel.discard(device_type)
        if device_type in self._backend_fns:
            self._install_kernel(device_type)

    def register_torch_dispatch(self, torch_dispatch_class: Any, fn: Optional[Callable[..., Any]] = None, /
                                ) -> Callable[..., Any]:
        """Registers ``fn(mode_or_cls, func, types, args, kwargs)`` as how
        ``torch_dispatch_class`` (a TorchDispatchMode class or a tensor
        subclass) handles this operator (see
        :func:`opdispatch.library.register_torch_dispatch`); registering
        again for the same class replaces the rule. A decorator when ``fn`` is
        omitted; returns ``fn``. PyTorch: CustomOpDef.register_torch_dispatch."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if torch_dispatch_class not in self._torch_dispatch_fns:
                fns = self._torch_dispatch_fns

                def rule(*args: Any, **kwargs: Any) -> Any:
                    return fns[torch_dispatch_class](*args, **kwargs)

                library.Library._register_torch_dispatch_rule_for(self._registrations, self._name,
                                                                  torch_dispatch_class, rule)
            self._torch_dispatch_fns[torch_dispatch_class] = fn
            return fn

        return register if fn is None else register(fn)

    def register_fake(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Registers (or replaces) the fake impl: ``fn`` takes the operator's
        arguments as meta tensors and returns meta tensors with the outputs'
        shapes and dtypes, touching no data; ``opdispatch.library.get_ctx()``
        inside it gives data-dependent sizes. Returns ``fn``.
        PyTorch: CustomOpDef.register_fake."""
        utils.check_callable(fn, f"register_fake for {self}")
        self._registrations.set_fake_kernel(self._fake, fake_impl.Kernel(fn, library._call_site()))
        return fn

    def register_autograd(self, backward: Callable[..., Any], /, *,
                          setup_context: Optional[Callable[..., Any]] = None) -> None:
        """Registers (or replaces) the autograd formula: ``backward(ctx,
        *grads)`` returns one gradient per input (None for non-tensors and
        inputs without one); ``setup_context(ctx, inputs, output)`` — or
        ``(ctx, inputs, keyword_only_inputs, output)`` — saves what it needs
        (``ctx.save_for_backward``, attributes). See
        opdispatch.library.register_autograd. Raises RuntimeError for an
        operator that mutates its inputs, returns views or returns nothing.
        PyTorch: CustomOpDef.register_autograd.
        """
        schema = self._schema
        if not utils.is_functional_schema(schema):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with schema {schema}. "
                f"Please create a functional operator and register an autograd formula for that."
            )
        self._set_kernel("Autograd", make_autograd_kernel(self, backward, setup_context), with_keyset=True)

# Note [The default autograd kernel]
# Every functional custom op gets an Autograd kernel when it is created, but
# most are never called with an input that requires grad, and building an
# autograd kernel (make_autograd_kernel: the schema's layout, the formula,
# the recording kernel) costs about as much as the rest of custom_op. So
# the kernel registered is one shared function bound to the op
# (functools.partial, nothing per op but the binding), which builds the op's
# autograd kernel on its first call and keeps it on the op. register_autograd
# replaces the registration itself, as before.


def _default_autograd_kernel(op: CustomOpDef, keyset: _C.DispatchKeySet, /, *args: Any, **kwargs: Any) -> Any:
    """The Autograd kernel of ``op`` without a formula (Note [The default autograd kernel])."""
    kernel = op._default_autograd
    if kernel is None:
        kernel = op._default_autograd = make_autograd_kernel(op, op._no_formula)
    return kernel(keyset, *args, **kwargs)


def _maybe_get_opdef(op: Union[CustomOpDef, _ops.OpOverload, str]) -> Optional[CustomOpDef]:
    """The CustomOpDef of ``op`` (itself, an OpOverload or a qualname), if custom_op made it."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, _ops.OpOverload):
        op = op._name
    return OPDEFS.get(op)
