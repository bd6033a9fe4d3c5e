"""The legacy custom-op object behind opdispatch._custom_ops: CustomOp, made
from a prototype function or a schema, with kernels per device, and an
autograd formula given as a "save for backward" function plus a backward
function returning a dict of gradients.
PyTorch: torch/_custom_op/impl.py and torch/_custom_op/autograd.py.
"""
from __future__ import annotations

import collections
import dataclasses
import inspect
from typing import Any, Callable, Iterable, NoReturn, Optional, Union

from .. import _C, _ops, library
from ..autograd.grad_mode import is_grad_enabled
from . import fake_impl, registry, utils
from .autograd import make_autograd_kernel
from .infer_schema import infer_schema

__all__ = ["CustomOp", "custom_op", "get_op", "global_registry"]

SUPPORTED_DEVICE_TYPE_TO_KEY = {"cpu": "CPU", "cuda": "CUDA"}

# Namespaces custom ops may not use: they look like the framework's own.
RESERVED_NS = {"prim", "prims", "aten", "at", "torch", "pytorch", "od"}

# qualname -> its CustomOp (registry.legacy_custom_ops); keeps them alive
# until _destroy. PyTorch: global_registry.
global_registry: dict[str, "CustomOp"] = registry.legacy_custom_ops

# Return types a legacy backward formula supports (as Argument.real_type:
# int and SymInt apart). Compared with ==: types hash by identity.
# PyTorch: torch._custom_op.impl.SUPPORTED_RETURN_TYPES.
_BACKWARD_RETURN_TYPES = (_C.IntType.get(), _C.SymIntType.get(), _C.BoolType.get(), _C.FloatType.get(),
                          _C.TensorType.get(), _C.ListType(_C.TensorType.get()))


@dataclasses.dataclass(frozen=True)
class FuncAndLocation:
    func: Callable[..., Any]
    location: str


def parse_qualname(qualname: str) -> tuple[str, str]:
    """("ns", "name") of "ns::name"; ValueError without a namespace or with an overload."""
    names = qualname.split("::", 1)
    if len(names) != 2:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator name should look "
                         f"something like ns::foo")
    if "." in names[1]:
        raise ValueError(f"The opdispatch._custom_ops APIs do not handle overloads, i.e. operator names with '.' "
                         f"in them. Please name your operator something like ns::foo. Got: {qualname}")
    return names[0], names[1]


def validate_namespace(ns: str) -> None:
    if "." in ns:
        raise ValueError(f'custom_op(..., ns="{ns}"): expected ns to not contain any . (and be a valid variable '
                         f"name)")
    if ns in RESERVED_NS:
        raise ValueError(f"custom_op(..., ns='{ns}'): '{ns}' is a reserved namespace, please choose something else.")


def _parse(qualname: str, schema: str) -> _C.FunctionSchema:
    name = qualname.split("::", 1)[1]
    try:
        return _C.parse_schema(f"{qualname}{schema}")
    except ValueError as e:
        raise ValueError(f"Invalid function schema: {name}{schema}: {e}") from None


def validate_schema(schema: _C.FunctionSchema) -> None:
    """ValueError unless the schema is functional and has no argument named "self"."""
    if not utils.is_functional_schema(schema):
        raise ValueError(
            f"custom_op only supports functional operators (ops that do not mutate any inputs, do not return views "
            f"of the inputs, and has at least one return). Got the following non-functional schema: {schema}"
        )
    if any(a.name == "self" for a in schema.arguments):
        raise ValueError(f"custom_op does not support arguments named 'self'. Please rename your argument. "
                         f"Got: {schema}")


def validate_function_matches_schema(schema: _C.FunctionSchema, func: Callable[..., Any]) -> None:
    """ValueError unless ``func``'s parameters are the schema's (names and
    keyword-only marker), unannotated and without defaults."""
    sig = inspect.signature(func)
    if not all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in sig.parameters.values()):
        raise ValueError(f"custom_op(..., manual_schema)(func): positional-only args, varargs, and kwargs are not "
                         f"supported. Please rewrite `func` to not have them. Got `func` with signature: {sig}")
    if any(p.annotation is not p.empty for p in sig.parameters.values()) or sig.return_annotation is not sig.empty:
        raise ValueError(f"custom_op(..., manual_schema)(func): When passing in a manual schema, we expect `func` "
                         f"to have no type annotations to avoid ambiguity. Got `func` with signature: {sig}")

    def compare(kind: Any, schema_args: list[Any]) -> None:
        params = [(n, p) for n, p in sig.parameters.items() if p.kind == kind]
        if [n for n, _ in params] != [a.name for a in schema_args]:
            raise ValueError(f"custom_op(..., manual_schema)(func): When passing in a manual schema, we expect "
                             f"`func`'s signature to match `manual_schema` (aside from type annotations). "
                             f"func's signature: {sig}, manual_schema: {schema}")
        if any(p.default is not p.empty for _, p in params) or any(a.has_default_value() for a in schema_args):
            raise ValueError(f"custom_op(..., manual_schema)(func): neither func nor manual_schema should have "
                             f"default arguments. Got func's signature: {sig}, manual_schema: {schema}")

    compare(inspect.Parameter.POSITIONAL_OR_KEYWORD, [a for a in schema.arguments if not a.kwarg_only])
    compare(inspect.Parameter.KEYWORD_ONLY, [a for a in schema.arguments if a.kwarg_only])


def custom_op(qualname: str, manual_schema: Optional[str] = None) -> Callable[[Callable[..., Any]], CustomOp]:
    """A decorator making a prototype function (its body is not used) a
    :class:`CustomOp` named ``qualname``, with the schema inferred from its
    annotations or given as ``manual_schema`` (then the function must have
    the schema's parameters, unannotated). Raises ValueError for a name,
    namespace, schema or signature the API does not accept, RuntimeError if
    the operator is already defined. PyTorch: torch._custom_op.impl.custom_op."""

    def inner(func: Callable[..., Any]) -> CustomOp:
        if not inspect.isfunction(func):
            raise ValueError(f"custom_op(...)(func): Expected `func` to be a Python function, got: {type(func)}")
        ns, name = parse_qualname(qualname)
        validate_namespace(ns)
        if func.__name__ != name:
            raise ValueError(f"custom_op(qualname='{qualname}', ...)(func): expected `func` to have name '{name}' "
                             f"but got '{func.__name__}'. Please either change the name of `func` or the qualname "
                             f"that is passed to `custom_op`")
        schema = infer_schema(func, mutates_args=()) if manual_schema is None else manual_schema
        parsed = _parse(qualname, schema)
        validate_schema(parsed)
        if manual_schema is not None:
            validate_function_matches_schema(parsed, func)
        result = _create(qualname, schema, (_ops.Tag.needs_fixed_stride_order,))
        result.__name__ = func.__name__
        result.__module__ = func.__module__
        result.__doc__ = func.__doc__
        return result

    return inner


def custom_op_with_schema(qualname: str, schema: str) -> _ops.OpOverload:
    """Defines the CustomOp ``qualname`` from a schema string ("(Tensor x) ->
    Tensor") and returns its OpOverload. PyTorch: _custom_op_with_schema."""
    ns, _ = parse_qualname(qualname)
    validate_namespace(ns)
    validate_schema(_parse(qualname, schema))
    _create(qualname, schema, (_ops.Tag.needs_fixed_stride_order,))
    return get_op(qualname)


def _create(qualname: str, schema: str, tags: tuple[_ops.Tag, ...]) -> CustomOp:
    ns, name = qualname.split("::", 1)
    lib = library.Library(ns, "FRAGMENT")
    lib.define(name + schema, tags=tags)
    op = CustomOp(lib, ns, _C.parse_schema(qualname + schema), name, _private_access=True)
    op._install_missing_kernels()
    op._register_autograd_kernel_indirection()
    return op


class CustomOp:
    """An operator made with the legacy custom-op API (opdispatch._custom_ops),
    or an existing operator wrapped so that API can register for it.
    Calling it calls the operator. PyTorch: torch._custom_op.impl.CustomOp."""

    def __init__(self, lib: library.Library, cpp_ns: str, schema: _C.FunctionSchema, operator_name: str, *,
                 _private_access: bool = False) -> None:
        if not _private_access:
            raise RuntimeError("The CustomOp constructor is private and we do not guarantee BC for it. Please use "
                               "custom_op(...) to create a CustomOp object")
        self._schema = schema
        self._cpp_ns = cpp_ns
        self._lib = lib
        self._opname = operator_name
        self._qualname = f"{cpp_ns}::{operator_name}"
        self._op = _C._DispatchOperator(self._qualname, "")
        self.__name__: Optional[str] = None
        self._impls: dict[str, FuncAndLocation] = {}
        # The device types whose kernel says there is none, until impl() replaces it.
        self._missing: set[str] = set()
        self._autograd_kernel: Optional[Callable[..., Any]] = None
        self._registered_autograd_kernel_indirection = False
        self._output_differentiability: Optional[list[bool]] = None
        lib._registrations.add_custom_op(global_registry, self._qualname, self)

    def __repr__(self) -> str:
        return f'<CustomOp(op="{self._qualname}")>'

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._op(*args, **kwargs)

    def _destroy(self) -> None:
        """Undoes everything registered through this object (the definition
        too, for an operator it defined): its Library's teardown. For tests.
        PyTorch: CustomOp._destroy."""
        self._lib._destroy()

    # --- kernels ---------------------------------------------------------------------------

    def _install_missing_kernels(self) -> None:
        """Kernels that explain what to register, until impl() does: cpu and
        cuda kernels, the Meta fake-impl holder, and for every other key and
        calls without tensors a CompositeExplicitAutograd one.
        PyTorch: report_error_callback."""
        registrations = self._lib._registrations
        site = library._call_site()
        for device_type, key in SUPPORTED_DEVICE_TYPE_TO_KEY.items():
            registrations.impl(self._opname, key, self._no_device_impl(device_type), site=site)
            self._missing.add(device_type)
        registrations.add_fake_holder(fake_impl.FakeImplHolder(self._qualname, fake_impl.missing_fake_impl(
            f"{self}: when running with device='Meta' tensors: there is no fake impl or Meta kernel registered "
            f"for this CustomOp. Please register one via opdispatch._custom_ops.impl_abstract or "
            f"opdispatch.library.register_fake to get this CustomOp to work with Meta tensors")), site)
        registrations.impl(self._opname, "CompositeExplicitAutograd", self._no_impl_for_key, site=site,
                           with_keyset=True)

    def _no_device_impl(self, device: str) -> Callable[..., NoReturn]:
        def kernel(*args: Any, **kwargs: Any) -> NoReturn:
            raise NotImplementedError(
                f"{self}: when running with device='{device}' tensors: there is no {device} impl registered for "
                f"this CustomOp. Please register one via CustomOp.impl(device_type='{device}')"
            )

        return kernel

    def _no_impl_for_key(self, keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> NoReturn:
        keyset = keyset.remove(_C.DispatchKey.PythonDispatcher)  # the Python dispatcher passes calls on, keyset intact
        if keyset.empty():
            raise NotImplementedError(
                f"{self}: There were no Tensor inputs to this operator (e.g. you passed an empty list of Tensors), "
                f"so no device kernel can be chosen. Pass at least one Tensor, or define the operator with "
                f"opdispatch.library.custom_op and device_types=None (a kernel for every device)."
            )
        raise NotImplementedError(
            f"{self}: No implementation for dispatch key {_C._dispatch_key_name(keyset.highestPriorityTypeId())}. It is likely that we "
            f"have not added this functionality yet; register a kernel with the opdispatch.library API."
        )

    def _register_impl(self, kind: str, func: Callable[..., Any]) -> None:
        utils.check_callable(func, f"the {kind} impl of {self._qualname}")
        if kind in self._impls:
            raise RuntimeError(
                f"Attempting to register a {kind} impl for operator {self._qualname} that already has a {kind} "
                f"impl registered from Python at {self._impls[kind].location}. This is not supported."
            )
        self._impls[kind] = FuncAndLocation(func, library._call_site())

    def _check_doesnt_have_library_impl(self, device_type: str) -> None:
        if device_type in self._impls or device_type in self._missing:
            return
        if _C._dispatch_has_computed_kernel_for_dispatch_key(self._qualname, SUPPORTED_DEVICE_TYPE_TO_KEY[device_type]):
            raise RuntimeError(
                f"impl(..., device_types={device_type}): the operator {self._qualname} already has an "
                f"implementation for this device type via a pre-existing opdispatch.library or OPDISPATCH_LIBRARY "
                f"registration."
            )

    def impl(self, device_types: Union[str, Iterable[str]]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator registering its function as the kernel for
        ``device_types`` ("cpu", "cuda" or both). ValueError for other device
        types; RuntimeError if one already has a kernel. PyTorch: CustomOp.impl."""
        types = [device_types] if isinstance(device_types, str) else list(device_types)
        for device_type in types:
            if device_type not in SUPPORTED_DEVICE_TYPE_TO_KEY:
                raise ValueError(f"CustomOp.impl(device_types=[{device_type}, ...]): we only support device_type "
                                 f"in {list(SUPPORTED_DEVICE_TYPE_TO_KEY)}.")

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            unique = list(dict.fromkeys(types))
            for device_type in unique:
                self._check_doesnt_have_library_impl(device_type)
            site = library._call_site()
            for device_type in unique:
                self._register_impl(device_type, f)
                # (Over the kernel saying there is none: a replacement; see Registrations.impl.)
                self._lib._registrations.impl(self._opname, SUPPORTED_DEVICE_TYPE_TO_KEY[device_type], f,
                                              site=site, replace=device_type in self._missing)
                self._missing.discard(device_type)
            return f

        return inner

    def impl_abstract(self) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A decorator registering its function as the fake impl (see
        opdispatch.library.register_fake). PyTorch: CustomOp.impl_abstract."""

        def inner(f: Callable[..., Any]) -> Callable[..., Any]:
            return library.register_fake(self._qualname, f, lib=self._lib)

        return inner

    # --- autograd ------------------------------------------------------------------------

    def _register_autograd_kernel_indirection(self) -> None:
        self._lib.impl(self._opname, self._autograd_indirection, "Autograd", with_keyset=True)
        self._registered_autograd_kernel_indirection = True

    def _autograd_indirection(self, keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        """The Autograd kernel: the formula once both halves are registered.
        Reached only when an input requires grad; records only while grad mode is on."""
        if not is_grad_enabled():
            return self._op._redispatch_below_autograd(keyset, *args, **kwargs)
        if self._autograd_kernel is not None:
            return self._autograd_kernel(keyset, *args, **kwargs)
        if "save_for_backward" in self._impls or "backward" in self._impls:
            found = "backward" if "backward" in self._impls else "save_for_backward"
            missing = "save_for_backward" if found == "backward" else "backward"
            raise RuntimeError(
                f"We found a '{found}' registration for {self} at {self._impls[found].location} but were unable to "
                f"find a '{missing}' registration. To use the CustomOp API to register a backward formula, please "
                f"provide us both a backward function and a 'save for backward' function via `impl_backward` and "
                f"`impl_save_for_backward` respectively."
            )
        raise RuntimeError(
            f"Autograd has not been implemented for operator {self._qualname}: an input requires grad. Register "
            f"a formula with opdispatch._custom_ops.impl_save_for_backward and impl_backward, or call the operator "
            f"under opdispatch.autograd.no_grad()."
        )

    def _check_can_register_backward(self) -> None:
        schema = self._schema

        def error(detail: str) -> NoReturn:
            raise RuntimeError(f"Cannot use opdispatch._custom_ops APIs to register backward formula for {detail}. "
                               f"Got operator {self._qualname} with schema: {schema}")

        if schema.is_mutable:
            error("non-functional operator")
        if not schema.returns:
            error("operator with no returns")
        if any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns):
            error("operator that returns views")
        for r in schema.returns:
            if r.real_type not in _BACKWARD_RETURN_TYPES:
                error(f"operator with return not in {[t.str() for t in _BACKWARD_RETURN_TYPES]} (got "
                      f"{r.real_type.str()})")
        if utils.has_kwarg_only_tensors(schema):
            error("operator with keyword-only Tensor arguments")

    def _check_doesnt_have_library_autograd_impl(self) -> None:
        if self._registered_autograd_kernel_indirection:
            return
        if _C._dispatch_has_kernel_for_dispatch_key(self._qualname, "CompositeImplicitAutograd"):
            raise RuntimeError(
                f"impl_backward/impl_save_for_backward: the operator {self._qualname} already has an implementation "
                f"for this device type via a pre-existing registration to DispatchKey::CompositeImplicitAutograd. "
                f"CompositeImplicitAutograd operators do not need an autograd formula; instead, the operator will "
                f"decompose into its constituents and those can have autograd formulas defined on them."
            )
        for key in ("Autograd", "AutogradCPU", "AutogradCUDA"):
            if _C._dispatch_has_kernel_for_dispatch_key(self._qualname, key):
                raise RuntimeError(
                    f"impl_backward/impl_save_for_backward: the operator {self._qualname} already has an Autograd "
                    f"kernel registered to DispatchKey::{key} via a pre-existing opdispatch.library or "
                    f"OPDISPATCH_LIBRARY registration. Please either remove those registrations or don't use the "
                    f"opdispatch._custom_ops APIs"
                )

    def _prepare_backward_registration(self) -> None:
        self._check_can_register_backward()
        self._check_doesnt_have_library_autograd_impl()
        if not self._registered_autograd_kernel_indirection:
            self._register_autograd_kernel_indirection()

    def impl_save_for_backward(self) -> Callable[[Callable[..., Any]], None]:
        """A decorator registering ``f(inputs, output) -> saved`` (``inputs``
        a namedtuple of the arguments). PyTorch: CustomOp.impl_save_for_backward."""

        def inner(f: Callable[..., Any]) -> None:
            self._prepare_backward_registration()
            self._register_impl("save_for_backward", f)
            if "backward" in self._impls:
                self._register_autograd_kernel()

        return inner

    def impl_backward(self, output_differentiability: Optional[list[bool]] = None
                      ) -> Callable[[Callable[..., Any]], None]:
        """A decorator registering ``f(ctx, saved, *grads) -> {input name:
        gradient}``. ``output_differentiability``: one bool per return (a
        non-Tensor return cannot be differentiable). RuntimeError if it is
        not a list of bools of that length. PyTorch: CustomOp.impl_backward."""
        if output_differentiability is not None:
            if (not isinstance(output_differentiability, list)
                    or not all(isinstance(d, bool) for d in output_differentiability)
                    or len(output_differentiability) != len(self._schema.returns)):
                raise RuntimeError(
                    f"impl_backward(output_differentiability): expected output_differentiability to be a list of "
                    f"bools with length equal to the number of outputs of this CustomOp "
                    f"({len(self._schema.returns)}), got: {output_differentiability}"
                )

        def inner(f: Callable[..., Any]) -> None:
            self._prepare_backward_registration()
            self._register_impl("backward", f)
            self._output_differentiability = output_differentiability
            if "save_for_backward" in self._impls:
                self._register_autograd_kernel()

        return inner

    def _register_autograd_kernel(self) -> None:
        formula = _LegacyFormula(self, self._impls["save_for_backward"].func, self._impls["backward"],
                                 self._output_differentiability)
        self._autograd_kernel = make_autograd_kernel(self._op, formula.backward, formula.setup_context)


class _LegacyFormula:
    """A legacy (save_for_backward, backward-returning-a-dict) pair as the
    (setup_context, backward) of an autograd formula. PyTorch:
    torch._custom_op.autograd.construct_autograd_kernel."""

    def __init__(self, op: CustomOp, save_for_backward: Callable[..., Any], backward: FuncAndLocation,
                 output_differentiability: Optional[list[bool]]) -> None:
        schema = op._schema
        self.op = op
        self.save_for_backward_fn = save_for_backward
        self.backward_fn = backward
        self.output_differentiability = output_differentiability
        self.names = [a.name for a in schema.arguments]
        self.positional = [a.name for a in schema.arguments if not a.kwarg_only]
        self.tensor_like = {a.name for a in schema.arguments if utils.is_tensor_or_tensorlist_like_type(a.type)}
        self.args_cls = collections.namedtuple(f"{op._opname}_args", self.names)  # type: ignore[misc]

    def setup_context(self, ctx: Any, inputs: tuple[Any, ...], keyword_only_inputs: dict[str, Any],
                      output: Any) -> None:
        values = dict(zip(self.positional, inputs), **keyword_only_inputs)
        args = self.args_cls(**{n: values[n] for n in self.names})
        ctx.legacy_saved = self.save_for_backward_fn(args, output)
        ctx.legacy_arg_types = {n: [type(v) for v in values[n]] if isinstance(values[n], list) else type(values[n])
                                for n in self.names}
        if self.output_differentiability is not None:
            outputs = output if isinstance(output, tuple) else (output,)
            for idx, (differentiable, out) in enumerate(zip(self.output_differentiability, outputs)):
                if isinstance(out, (_C.TensorBase, list)):
                    if not differentiable:
                        ctx.mark_non_differentiable(*(out if isinstance(out, list) else [out]))
                elif differentiable:
                    raise RuntimeError(
                        f"With output_differentiability={self.output_differentiability}. At idx {idx}, we received "
                        f"an object of type {type(out)} that is not a Tensor, so it cannot have be marked as "
                        f"differentiable in output_differentiability."
                    )

    def backward(self, ctx: Any, *grads: Any) -> tuple[Any, ...]:
        grad_inputs = self.backward_fn.func(ctx, ctx.legacy_saved, *grads)
        self._validate(grad_inputs, ctx.legacy_arg_types)
        return tuple(grad_inputs.get(n) for n in self.positional)

    def _validate(self, grad_inputs: Any, arg_types: dict[str, Any]) -> None:
        def error(what: str) -> NoReturn:
            raise RuntimeError(f"In the backward function defined for {self.op} at {self.backward_fn.location} "
                               f"using the CustomOp API, {what}")

        if not isinstance(grad_inputs, dict):
            error(f"expected the output of the backward function to be a dict but got {type(grad_inputs)}")
        if set(grad_inputs) != self.tensor_like:
            error(f"expected the returned grad_input dict to have keys {self.tensor_like} but got "
                  f"{set(grad_inputs)}. The backward function must return a gradient (can be None) for each arg to "
                  f"the CustomOp that may be a Tensor or Sequence[Tensor]. Args declared to be non-Tensor-like "
                  f"types should not appear in the grad_input dict")
        for name, grad in grad_inputs.items():
            info = arg_types[name]
            if isinstance(info, list):
                if not isinstance(grad, (tuple, list)):
                    error(f"for input '{name}' expected the grad_input dict to hold a list of gradients but got "
                          f"object of type {type(grad)}.")
                if len(grad) != len(info):
                    error(f"for input '{name}' expected the grad_input dict to hold a list of {len(info)} gradients "
                          f"but got {len(grad)}")
                for idx, (g, t) in enumerate(zip(grad, info)):
                    if g is None:
                        continue
                    if not isinstance(g, _C.TensorBase):
                        error(f"for input '{name}' expected the grad_input dict to hold a list of None or Tensor "
                              f"gradients but got object of {type(g)} at index {idx}")
                    if not issubclass(t, _C.TensorBase):
                        error(f"for input '{name}', got a Tensor as the gradient for the {idx}-th value but expected "
                              f"None because the {idx}-th value was not a Tensor (it was type {t})")
                continue
            if grad is None:
                continue
            if not isinstance(grad, _C.TensorBase):
                error(f"got object of type {type(grad)} as the gradient for input '{name}', but expected the "
                      f"gradient to be either None or a Tensor")
            if not issubclass(info, _C.TensorBase):
                error(f"got a Tensor as the gradient for input '{name}' but expected None as the gradient because "
                      f"input '{name}' was not a Tensor (it was type {info}).")


def get_op(qualname: str) -> _ops.OpOverload:
    """``opdispatch.ops.<ns>.<name>.default``; ValueError if not defined. PyTorch: same name."""
    ns, name = parse_qualname(qualname)
    try:
        return utils.lookup_op(f"{ns}::{name}")
    except ValueError:
        raise ValueError(f"Could not find the operator {qualname}. Please make sure you have already registered "
                         f"the operator and (if registered from C++) loaded it via "
                         f"opdispatch.ops.load_library.") from None


def _custom_op_from_existing(op: _ops.OpOverload) -> CustomOp:
    lib = library.Library(op.namespace, "FRAGMENT")
    return CustomOp(lib, op.namespace, op._schema, op._name.split("::", 1)[1], _private_access=True)


def find_custom_op(qualname: str, also_check_library: bool = False) -> CustomOp:
    """The CustomOp of ``qualname``; with ``also_check_library``, an operator
    defined another way gets one (so the legacy API can register for it).
    RuntimeError / ValueError if there is none. PyTorch: _find_custom_op."""
    if qualname in global_registry:
        return global_registry[qualname]
    if not also_check_library:
        raise RuntimeError(f'Could not find custom op "{qualname}". Did you register it via the '
                           f"opdispatch._custom_ops API?")
    return _custom_op_from_existing(get_op(qualname))
