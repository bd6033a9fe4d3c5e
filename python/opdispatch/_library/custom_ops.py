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
import warnings
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

from .. import _C, _ops, library
from . import fake_impl, utils
from .autograd import make_autograd_kernel
from .infer_schema import infer_schema

__all__ = ["CustomOpDef", "custom_op"]

device_types_t = Union[str, Sequence[str], None]

# qualname -> the CustomOpDef that defines it now; a new custom_op of the
# same name destroys it first. PyTorch: OPDEFS and OPDEF_TO_LIB.
OPDEFS: dict[str, "CustomOpDef"] = {}


def custom_op(
    name: str,
    fn: Optional[Callable[..., Any]] = None,
    /,
    *,
    mutates_args: Union[str, Iterable[str]],
    device_types: device_types_t = None,
    schema: Optional[str] = None,
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

    Example::

        @custom_op("mylib::numpy_sin", mutates_args=())
        def numpy_sin(x: Tensor) -> Tensor:
            return opdispatch.from_numpy(np.sin(x.numpy()))

        y = numpy_sin(x)     # also opdispatch.ops.mylib.numpy_sin(x)
    """

    def inner(fn: Callable[..., Any]) -> CustomOpDef:
        schema_str = infer_schema(fn, mutates_args=mutates_args) if schema is None else schema
        namespace, opname = utils.parse_namespace(name)
        if namespace in library._reserved_namespaces:
            raise ValueError(f"{namespace} is a reserved namespace. Please try creating a custom op with another "
                             f"namespace.")
        # Parsed here only when a check needs it before the definition (a
        # given schema, keyword-only arguments); otherwise from the definition.
        parsed = None
        if schema is not None or "*" in schema_str.partition("->")[0]:
            parsed = _C.parse_schema(f"{name}{schema_str}")
        if schema is not None and not isinstance(mutates_args, str):
            expected = utils.mutated_arg_names(parsed)
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}`. "
                    f"The schema suggests that the op mutates {expected}, which is different from what was "
                    f"provided to us in `mutates_args`. Please make these consistent."
                )
        result = CustomOpDef(namespace, opname, schema_str, fn, parsed)
        result._register_kernels(device_types, fn, result._site)
        return result

    if fn is None:
        return inner
    return inner(fn)


def _device_types(device_types: device_types_t) -> list[Optional[str]]:
    if isinstance(device_types, str):
        return [device_types]
    return list(device_types)


class CustomOpDef(_C._DispatchOperator):
    """An operator made by :func:`custom_op`; calling it calls the operator
    (see Note [custom_op call path]). Register more behaviour with
    :meth:`register_kernel`, :meth:`register_fake`, :meth:`register_autograd`;
    ``_opoverload`` is its ``opdispatch.ops.<ns>.<name>.<overload>``.
    Unlike PyTorch's, ``_schema`` is the parsed FunctionSchema (of the
    operator object), not the schema string. PyTorch: CustomOpDef.
    """

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable[..., Any],
                 parsed: Optional[_C.FunctionSchema]) -> None:
        # (``parsed`` is given whenever the schema has keyword-only arguments.)
        if parsed is not None and utils.has_kwarg_only_tensors(parsed):
            raise NotImplementedError(
                f"custom_op with kwarg-only Tensor args. Please make your tensors not kwarg-only. "
                f"Got: {namespace}::{name}{schema}"
            )
        self._namespace = namespace
        self._name = name
        self._init_fn = fn
        self._backend_fns: dict[Optional[str], Callable[..., Any]] = {}
        self._disabled_kernel: set[Optional[str]] = set()
        self._opoverload_cache: Optional[_ops.OpOverload] = None
        self._has_tensor_arg: Optional[bool] = None  # computed on first need (register_kernel for a device)
        self._qualname = qualname = f"{namespace}::{name}"
        previous = OPDEFS.pop(qualname, None)
        if previous is not None:
            previous._destroy()
        # One FRAGMENT library (lighter than a Library: creating ops is
        # measured, benchmarks/registration.py) holds the definition and the
        # first kernel of each key; a replaced kernel lives in a library of its
        # own (``_overrides``), registered later, so it shadows the first.
        filename, lineno = _C._python_call_site() or ("(unknown)", 0)
        self._site = f"{filename}:{lineno}"
        self._lib = _C._dispatch_library("FRAGMENT", namespace, "", filename, lineno)
        self._lib.define(name + schema, "", ["pt2_compliant_tag"])
        library._defs.add(qualname)
        _ops._sync_packet(qualname)
        base, _, overload = name.partition(".")
        _C._DispatchOperator.__init__(self, f"{namespace}::{base}", overload)
        self._keys: set[str] = set()
        self._overrides: dict[str, Any] = {}
        # Note [Post-kernel effects]: an operator whose schema declares a
        # returned view may alias. An inferred schema (the common case) is
        # read as text: it has no alias annotations on returns, and "!" only
        # on mutated arguments.
        if parsed is None:
            arguments, _, returns = schema.partition(" -> ")
            self._mutable = "!" in arguments
            self._check_aliasing = "Tensor" in returns
            self._trivial_fake = self._mutable and returns == "()"
        else:
            self._mutable = parsed.is_mutable
            rets = parsed.returns
            self._check_aliasing = (any(r.type.startswith("Tensor") for r in rets)
                                    and all(r.alias_info is None for r in rets))
            self._trivial_fake = self._mutable and not rets
        self._fake = fake_impl.add_holder(qualname, self._no_fake_impl)
        self._set_kernel("Meta", self._fake, site=self._site)
        OPDEFS[qualname] = self

    def _set_kernel(self, key: str, fn: Callable[..., Any], *, with_keyset: bool = False,
                    check_aliasing: bool = False, site: Optional[str] = None) -> None:
        """Registers ``fn`` as this op's kernel at dispatch key ``key``,
        replacing the one registered there before (see Note [custom_op call
        path]); ``site``: the user's call site ("file:line"), if known.
        RuntimeError if a Python kernel registered otherwise holds the key."""
        if site is None:
            site = library._call_site()
        if key in self._keys:
            override = self._overrides.pop(key, None)
            if override is not None:
                override.reset()
            override = _C._dispatch_library("FRAGMENT", self._namespace, "")
            override.impl(self._name, key, fn, with_keyset, check_aliasing, site)
            self._overrides[key] = override
            return
        slot = f"{self._qualname}/{key}"
        if slot in library._impls:
            library._check_python_kernel_slot(self._qualname, key)  # raises
        self._lib.impl(self._name, key, fn, with_keyset, check_aliasing, site)
        self._keys.add(key)
        library._impls[slot] = site

    def _destroy(self) -> None:
        """Removes the operator and everything registered for it: what a new
        custom_op of the same name does first, and tests do after themselves.
        PyTorch: the _destroy of the op's library (OPDEF_TO_LIB)."""
        qualname = self._qualname
        for override in self._overrides.values():
            override.reset()
        self._overrides.clear()
        self._lib.reset()
        for key in self._keys:
            library._impls.pop(f"{qualname}/{key}", None)
        self._keys.clear()
        fake_impl.remove_holder(self._fake)
        library._defs.discard(qualname)
        _ops._sync_packet(qualname)
        if OPDEFS.get(qualname) is self:
            del OPDEFS[qualname]

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

    def register_fake(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Registers (or replaces) the fake impl: ``fn`` takes the operator's
        arguments as meta tensors and returns meta tensors with the outputs'
        shapes and dtypes, touching no data; ``opdispatch.library.get_ctx()``
        inside it gives data-dependent sizes. Returns ``fn``.
        PyTorch: CustomOpDef.register_fake."""
        self._fake.kernel = fake_impl.Kernel(fn, library._call_site())
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

def _maybe_get_opdef(op: Union[CustomOpDef, _ops.OpOverload, str]) -> Optional[CustomOpDef]:
    """The CustomOpDef of ``op`` (itself, an OpOverload or a qualname), if custom_op made it."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, _ops.OpOverload):
        op = op._name
    return OPDEFS.get(op)
