"""Small helpers of the custom-operator machinery: registration handles,
operator names and lookup, and questions about schemas.
PyTorch: torch/_library/utils.py."""
from __future__ import annotations

from typing import Any, Iterator, Union

from .. import _C, _ops
from .._tensor_type import Tensor
from .registry import RegistrationHandle  # noqa: F401  (PyTorch's home of the name)


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
    found: _ops.OpOverload = getattr(getattr(getattr(_ops.ops, namespace), base), overload or "default")
    return found


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


_TENSOR = _C.TensorType.get()
# (Tuples, not sets: types compare by structure, hash by identity.)
_TENSOR_LIKE_TYPES = (_TENSOR, _C.OptionalType(_TENSOR))
_TENSORLIST_LIKE_TYPES = (
    _C.ListType(_TENSOR),
    _C.ListType(_C.OptionalType(_TENSOR)),
    _C.OptionalType(_C.ListType(_TENSOR)),
    _C.OptionalType(_C.ListType(_C.OptionalType(_TENSOR))),
)


def is_tensor_like_type(typ: _C.Type) -> bool:
    """Whether a schema type (``Argument.type``) is Tensor or Tensor?.
    PyTorch: same name."""
    return typ in _TENSOR_LIKE_TYPES


def is_tensorlist_like_type(typ: _C.Type) -> bool:
    """Whether a schema type is a list of tensors: Tensor[] or Tensor?[],
    optional or not. PyTorch: same name."""
    return typ in _TENSORLIST_LIKE_TYPES


def is_tensor_or_tensorlist_like_type(typ: _C.Type) -> bool:
    """Whether a schema type holds tensors: :func:`is_tensor_like_type` or
    :func:`is_tensorlist_like_type` (what PyTorch's has_tensor_arg asks)."""
    return typ in _TENSOR_LIKE_TYPES or typ in _TENSORLIST_LIKE_TYPES


def has_kwarg_only_args(schema: _C.FunctionSchema) -> bool:
    return any(a.kwarg_only for a in schema.arguments)


def has_kwarg_only_tensors(schema: _C.FunctionSchema) -> bool:
    """Whether a keyword-only argument holds tensors (custom ops and autograd
    formulas do not support that, as in PyTorch). PyTorch: same name."""
    return any(a.kwarg_only and is_tensor_or_tensorlist_like_type(a.type) for a in schema.arguments)


def has_tensor_arg(schema: _C.FunctionSchema) -> bool:
    """Whether an argument holds tensors. PyTorch: same name."""
    return any(is_tensor_or_tensorlist_like_type(a.type) for a in schema.arguments)


def mutated_arg_names(schema: _C.FunctionSchema) -> set[str]:
    """Names of the arguments annotated as written (Tensor(a!))."""
    return {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}


def bind_arguments(schema: _C.FunctionSchema, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
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


def iter_tensors(value: Any) -> Iterator[Tensor]:
    """The tensors in ``value``: itself, or the items of a list or tuple (one level, as schemas nest)."""
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, Tensor):
                yield item


def is_builtin(op: _ops.OpOverload) -> bool:
    """Whether ``op`` is one of opdispatch's built-in operators (namespace
    ``od``). PyTorch: same name (namespace ``aten``)."""
    return op.namespace == "od"


def is_out(op: _ops.OpOverload) -> bool:
    """Whether ``op`` is tagged ``out``: it writes its out= arguments and
    returns them. PyTorch: same name."""
    return _ops.Tag.out in op.tags


def is_inplace(op: _ops.OpOverload) -> bool:
    """Whether ``op`` is tagged ``inplace``: it mutates its first positional
    argument and returns it. PyTorch: same name."""
    return _ops.Tag.inplace in op.tags


def can_generate_trivial_fake_impl(op: _ops.OpOverload) -> bool:
    """Whether an operator without a fake impl still has an obvious one (so
    fake-tensor machinery need not reject it): not a built-in operator, and
    either :func:`is_out` (it returns its out= arguments), :func:`is_inplace`
    (it returns its mutated first argument), or mutable with no returns (it
    returns None). PyTorch: same name."""
    if is_builtin(op):
        return False
    if is_out(op) or is_inplace(op):
        return True
    schema = op._schema
    return schema.is_mutable and not schema.returns


def generate_trivial_fake_impl(op: _ops.OpOverload, *args: Any, **kwargs: Any) -> Any:
    """The result of that obvious fake impl (see :func:`can_generate_trivial_fake_impl`):
    the out= keyword arguments in declaration order (one bare) for an ``out``
    operator, the first argument for an ``inplace`` one, else None.
    PyTorch: same name."""
    if is_out(op):
        outs = tuple(kwargs[a.name] for a in op._schema.arguments
                     if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write)
        return outs[0] if len(outs) == 1 else outs
    if is_inplace(op):
        return args[0]
    return None
