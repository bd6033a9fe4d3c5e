"""Small helpers of the custom-operator machinery: registration handles,
operator names and lookup, and questions about schemas.
PyTorch: torch/_library/utils.py."""
from __future__ import annotations

from typing import Any, Callable, Iterator, Optional, Union

from .. import _C, _ops


class RegistrationHandle:
    """Undoes one registration when destroyed; destroying it again does
    nothing. PyTorch: torch._library.utils.RegistrationHandle."""

    __slots__ = ("_on_destroy",)

    def __init__(self, on_destroy: Callable[[], None]) -> None:
        self._on_destroy: Optional[Callable[[], None]] = on_destroy

    def destroy(self) -> None:
        on_destroy, self._on_destroy = self._on_destroy, None
        if on_destroy is not None:
            on_destroy()


def check_callable(fn: Any, what: str) -> None:
    """TypeError unless ``fn`` is callable; ``what`` names the registration
    and its operator (or key), e.g. "register_fake for mylib::foo". Messages
    keep PyTorch's wording ("Input function is required to be a callable")."""
    if not callable(fn):
        raise TypeError(f"{what}: Input function is required to be a callable but found type {type(fn)}; pass "
                        f"the function itself")


def parse_namespace(qualname: str) -> tuple[str, str]:
    """("ns", "name") of "ns::name" (the name may carry an overload,
    "name.overload"). Raises ValueError otherwise. PyTorch: same name."""
    splits = qualname.split("::")
    if len(splits) != 2 or not splits[0] or not splits[1]:
        raise ValueError(
            f'Expected `qualname` to be of the form "namespace::name", but got {qualname}. The qualname passed '
            f"to the opdispatch.library APIs must consist of a namespace and a name, e.g. mylib::sin"
        )
    return splits[0], splits[1]


def lookup_op(qualname: str) -> _ops.OpOverload:
    """The OpOverload of "ns::name" or "ns::name.overload". Raises ValueError
    if the name is malformed or no such operator is defined. PyTorch: same name."""
    namespace, name = parse_namespace(qualname)
    base, _, overload = name.partition(".")
    try:
        _C._dispatch_find_schema_or_throw(f"{namespace}::{base}", overload)
    except RuntimeError:
        raise ValueError(
            f"operator {qualname} is not defined: define it first (opdispatch.library.define, Library.define, "
            f"custom_op) or load the library that defines it (opdispatch.ops.load_library)"
        ) from None
    return getattr(getattr(getattr(_ops.ops, namespace), base), overload or "default")


def _as_schema(schema: Union[_C.FunctionSchema, str]) -> _C.FunctionSchema:
    return _C.parse_schema(schema) if isinstance(schema, str) else schema


def is_functional_schema(schema: Union[_C.FunctionSchema, str]) -> bool:
    """Whether an operator mutates no argument, returns no view of one (no
    alias annotation on a return) and returns something: the operators an
    autograd formula can be registered for. A schema string needs a name
    ("f(Tensor x) -> Tensor"). PyTorch: torch._library.utils.is_functional_schema."""
    schema = _as_schema(schema)
    if schema.is_mutable or not schema.returns:
        return False
    return all(r.alias_info is None for r in schema.returns)


def is_tensorlist_like_type(type_text: str) -> bool:
    """Whether a schema type (as text: ``Argument.type``) is a list of
    tensors: Tensor[], Tensor?[], optional or not. PyTorch: same name."""
    return type_text.rstrip("?") in ("Tensor[]", "Tensor?[]")


def is_tensor_like_type(type_text: str) -> bool:
    """Whether a schema type holds tensors: Tensor, Tensor?, or a list of them."""
    return type_text.startswith("Tensor")


def has_kwarg_only_args(schema: _C.FunctionSchema) -> bool:
    return any(a.kwarg_only for a in schema.arguments)


def has_kwarg_only_tensors(schema: _C.FunctionSchema) -> bool:
    """Whether a keyword-only argument holds tensors (custom ops and autograd
    formulas do not support that, as in PyTorch)."""
    return any(a.kwarg_only and is_tensor_like_type(a.real_type.str()) for a in schema.arguments)


def has_tensor_arg(schema: _C.FunctionSchema) -> bool:
    return any(is_tensor_like_type(a.real_type.str()) for a in schema.arguments)


def mutated_arg_names(schema: _C.FunctionSchema) -> set[str]:
    """Names of the arguments annotated as written (Tensor(a!))."""
    return {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}


def bind_arguments(schema: _C.FunctionSchema, args: tuple, kwargs: dict) -> dict[str, Any]:
    """{argument name: value} of a call, defaults filled in. Raises TypeError
    for a call that does not fit the schema (the dispatcher's message)."""
    bound: dict[str, Any] = {}
    positional = [a for a in schema.arguments if not a.kwarg_only]
    if len(args) > len(positional):
        raise TypeError(f"{schema.name}() takes {len(positional)} positional arguments but {len(args)} were given")
    for a, value in zip(positional, args):
        bound[a.name] = value
    for a in schema.arguments:
        if a.name in bound:
            continue
        if a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = a.default_value
        else:
            raise TypeError(f"{schema.name}() missing required argument '{a.name}'")
    return bound


def iter_tensors(value: Any) -> Iterator[_C.TensorBase]:
    """The tensors in ``value``: itself, or the items of a list or tuple (one level, as schemas nest)."""
    if isinstance(value, _C.TensorBase):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, _C.TensorBase):
                yield item


def can_generate_trivial_fake_impl(op: _ops.OpOverload) -> bool:
    """Whether an operator without a fake impl still has an obvious one (so
    fake-tensor machinery need not reject it): not a built-in ``od``
    operator, and either tagged ``out`` (it returns its out= arguments),
    tagged ``inplace`` (it returns its mutated first argument), or mutable
    with no returns (it returns None). PyTorch: same name."""
    if op.namespace == "od":
        return False
    tags = op.tags
    if _ops.Tag.out in tags or _ops.Tag.inplace in tags:
        return True
    schema = op._schema
    return bool(mutated_arg_names(schema)) and not schema.returns


def generate_trivial_fake_impl(op: _ops.OpOverload, *args: Any, **kwargs: Any) -> Any:
    """The result of that obvious fake impl (see :func:`can_generate_trivial_fake_impl`):
    the out= keyword arguments in declaration order (one bare) for an ``out``
    operator, the first argument for an ``inplace`` one, else None.
    PyTorch: same name."""
    schema = op._schema
    if _ops.Tag.out in op.tags:
        outs = tuple(kwargs[a.name] for a in schema.arguments
                     if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write)
        return outs[0] if len(outs) == 1 else outs
    if _ops.Tag.inplace in op.tags:
        return args[0]
    return None
