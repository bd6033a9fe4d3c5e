"""Schema inference: the operator schema of a Python function, read from its
type annotations, defaults and keyword-only markers.
PyTorch: torch/_library/infer_schema.py."""
from __future__ import annotations

import collections.abc
import functools
import inspect
import typing
from typing import Any, Callable, Iterable, NoReturn, Optional, Union

from .. import _C
from ..types import Number

__all__ = ["infer_schema", "tuple_to_list"]

# mutates_args="unknown": every tensor argument may be mutated.
UNKNOWN_MUTATES = "unknown"

_SUPPORTED_TYPES_TEXT = (
    "Tensor, int, float, bool, str, opdispatch.types.Number, opdispatch.dtype, opdispatch.device; Optional[T] of "
    "each of those; Sequence[T] / list[T] of Tensor, Optional[Tensor], int, float, bool and Number; "
    "Optional[Sequence[T]] of int, float and bool"
)
_SUPPORTED_RETURNS_TEXT = "Tensor, list[Tensor], int, float, bool, opdispatch.types.Number, a tuple of those, or None"


def _sequences(t: Any) -> tuple[Any, ...]:
    return typing.Sequence[t], typing.List[t], collections.abc.Sequence[t], list[t]


@functools.lru_cache(maxsize=None)
def _supported_types() -> tuple[dict[Any, str], dict[Any, str]]:
    # Built on first use: opdispatch.Tensor is defined after this module is imported.
    from .._tensor import Tensor

    params: dict[Any, str] = {}
    # (annotation, schema type, T[] allowed, T?[] allowed, T[]? allowed)
    for base, text, lists, optional_items, optional_lists in (
        (Tensor, "Tensor", True, True, False),
        (int, "SymInt", True, False, True),
        (float, "float", True, False, True),
        (bool, "bool", True, False, True),
        (str, "str", False, False, False),
        (Number, "Scalar", True, False, False),
        (_C.dtype, "ScalarType", False, False, False),
        (_C.device, "Device", False, False, False),
    ):
        params[base] = text
        params[Optional[base]] = text + "?"
        for seq in _sequences(base) if lists else ():
            params[seq] = text + "[]"
        for seq in _sequences(Optional[base]) if optional_items else ():
            params[seq] = text + "?[]"
        for seq in _sequences(base) if optional_lists else ():
            params[Optional[seq]] = text + "[]?"
    returns: dict[Any, str] = {
        Tensor: "Tensor",
        typing.List[Tensor]: "Tensor[]",
        list[Tensor]: "Tensor[]",
        int: "SymInt",
        float: "float",
        bool: "bool",
        Number: "Scalar",
    }
    return params, returns


def __getattr__(name: str) -> Any:
    # SUPPORTED_PARAM_TYPES / SUPPORTED_RETURN_TYPES ({annotation: schema type}), as in PyTorch.
    if name == "SUPPORTED_PARAM_TYPES":
        return _supported_types()[0]
    if name == "SUPPORTED_RETURN_TYPES":
        return _supported_types()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tuple_to_list(tuple_type: Any) -> Any:
    """The list annotation suggested for a tuple one: ``Tuple[int, int]`` ->
    ``typing.List[int]``, ``Tuple[int, float]`` -> ``typing.List[Union[int,
    float]]``, ``Tuple[T, ...]`` -> ``typing.List[T]``. PyTorch: same name."""
    args = getattr(tuple_type, "__args__", None)
    if tuple_type in (typing.Tuple, tuple) or not args or args == ((),):
        return typing.List
    if len(args) == 2 and args[1] is Ellipsis:
        return typing.List[args[0]]
    return typing.List[Union[tuple(args)]]


def _default_text(value: Any) -> Optional[str]:
    """The schema text of a default value, or None if it cannot be written."""
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str) and '"' not in value and "\\" not in value:
        return f'"{value}"'
    if isinstance(value, _C.device):
        return f'"{value}"'
    if isinstance(value, _C.dtype):
        return str(value).rsplit(".", 1)[-1]
    return None


def infer_schema(
    prototype_function: Callable[..., Any],
    /,
    *,
    mutates_args: Union[str, Iterable[str]],
    op_name: Optional[str] = None,
) -> str:
    """The schema of ``prototype_function`` from its type annotations:
    ``def f(x: Tensor, *, n: int = 2) -> Tensor`` gives ``"(Tensor x, *,
    SymInt n=2) -> Tensor"`` (``"op_name(...) -> ..."`` with ``op_name``).

    Parameters are positional-or-keyword or keyword-only (after ``*``), each
    annotated with one of: Tensor, int (SymInt), float, bool, str,
    opdispatch.types.Number (Scalar), opdispatch.dtype (ScalarType),
    opdispatch.device (Device); ``Optional[T]`` of those; ``Sequence[T]`` or
    ``list[T]`` of Tensor, Optional[Tensor], int, float, bool, Number; and
    ``Optional[Sequence[T]]`` of int, float, bool. Defaults may be None,
    bool, int, float, str, a dtype or a device. The return annotation is one
    of Tensor, list[Tensor], int, float, bool, Number, a tuple of those, or
    None (no return). String annotations (``from __future__ import
    annotations``) are evaluated in the function's module.

    ``mutates_args`` names the arguments the function writes to; they must be
    tensors (or lists of tensors) and get alias annotations ``Tensor(a<i>!)``.
    ``"unknown"`` marks every tensor argument as mutated.

    Raises ValueError naming the parameter for varargs, positional-only
    parameters, a missing or unsupported annotation (for a tuple, suggesting
    the list type to use), an unsupported default, a mutated argument that is
    not a tensor or is not a parameter, or an unsupported return type. The
    function's outputs are assumed not to alias its inputs (custom_op checks
    that on every call). PyTorch: torch.library.infer_schema.
    """
    sig = inspect.signature(prototype_function)

    def error_fn(what: str) -> NoReturn:
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(annotation: Any) -> Any:
        if not isinstance(annotation, str):
            return annotation
        try:
            return eval(annotation, getattr(prototype_function, "__globals__", {}))
        except Exception:
            error_fn(f"Unsupported type annotation {annotation}: it does not name a type in the function's module.")

    params_types, return_types = _supported_types()
    if isinstance(mutates_args, str):
        if mutates_args != UNKNOWN_MUTATES:
            raise ValueError(
                f"mutates_args must either be a sequence of the names of the arguments that are mutated or the "
                f"string 'unknown', got the string {mutates_args!r}."
            )
        mutated: Optional[set[str]] = None
    else:
        mutated = set(mutates_args)

    params: list[str] = []
    seen: set[str] = set()
    saw_kwarg_only = False
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            error_fn(f"Parameter *{name}: we do not support varargs (*args); name each parameter.")
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            error_fn(f"Parameter **{name}: we do not support varkwargs (**kwargs); name each parameter.")
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            error_fn(f"Parameter {name}: we do not support positional-only parameters (before '/').")
        if param.kind is inspect.Parameter.KEYWORD_ONLY and not saw_kwarg_only:
            params.append("*")
            saw_kwarg_only = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation = resolve(param.annotation)
        schema_type = params_types.get(annotation) if _hashable(annotation) else None
        if schema_type is None:
            hint = ""
            if typing.get_origin(annotation) is tuple:
                suggestion = tuple_to_list(annotation)
                hint = "We do not support Tuple inputs in schema. As a workaround, please try to use List instead. "
                if suggestion in params_types:
                    hint += f"For example, {suggestion}. "
            error_fn(f"Parameter {name} has unsupported type {param.annotation}. {hint}"
                     f"The valid types are: {_SUPPORTED_TYPES_TEXT}.")
        if mutated is None or name in mutated:
            if schema_type.startswith("Tensor"):
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
            elif mutated is not None:
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                         f"mutated.")
        seen.add(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{schema_type} {name}")
            continue
        default = _default_text(param.default)
        if default is None:
            error_fn(f"Parameter {name} has an unsupported default value {param.default!r} (supported: None, "
                     f"bool, int, float, str without quotes or backslashes, opdispatch.dtype, opdispatch.device).")
        params.append(f"{schema_type} {name}={default}")
    if mutated is not None and mutated - seen:
        error_fn(f"{mutated - seen} in mutates_args were not found in the custom op's signature. mutates_args "
                 f"should contain the names of all args that the custom op mutates, or just the string 'unknown' "
                 f"if you don't know.")
    returns = _parse_return(resolve(sig.return_annotation), return_types, error_fn)
    return f"{op_name or ''}({', '.join(params)}) -> {returns}"


def _hashable(annotation: Any) -> bool:
    try:
        hash(annotation)
    except TypeError:
        return False
    return True


def _parse_return(annotation: Any, return_types: dict[Any, str], error_fn: Callable[[str], NoReturn]) -> str:
    if annotation is None or annotation is type(None):
        return "()"
    if annotation is inspect.Signature.empty:
        error_fn("The return type must have a type annotation (use None for no return).")

    def one(t: Any) -> str:
        text = return_types.get(t) if _hashable(t) else None
        if text is None:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {_SUPPORTED_RETURNS_TEXT}.")
        return text

    if typing.get_origin(annotation) is not tuple:
        return one(annotation)
    items = typing.get_args(annotation)
    if not items or Ellipsis in items:
        error_fn(f"Return has unsupported type {annotation}: a tuple return needs one type per element. The valid "
                 f"types are: {_SUPPORTED_RETURNS_TEXT}.")
    return "(" + ", ".join(one(t) for t in items) + ")"
