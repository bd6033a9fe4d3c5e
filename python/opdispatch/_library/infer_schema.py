"""Schema inference: the operator schema of a Python function, read from its
type annotations, defaults and keyword-only markers.
PyTorch: torch/_library/infer_schema.py."""
from __future__ import annotations

import collections.abc
import functools
import inspect
import types
import typing
from typing import Any, Callable, Iterable, NamedTuple, NoReturn, Optional, Union

from .. import _C
from ..types import Number
from .utils import is_tensor_or_tensorlist_like_type

__all__ = ["SchemaSummary", "infer_schema", "tuple_to_list"]

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


class _SchemaType(NamedTuple):
    """A schema type infer_schema writes: its text (``Argument.real_type``'s)
    and whether it holds tensors (so can be mutated)."""

    text: str
    holds_tensors: bool


def _schema_type(t: _C.Type) -> _SchemaType:
    return _SchemaType(t.str(), is_tensor_or_tensorlist_like_type(t))


@functools.cache
def _supported_types() -> tuple[dict[Any, _SchemaType], dict[Any, _SchemaType]]:
    # Built on first use: opdispatch.Tensor is defined after this module is imported.
    from .._tensor import Tensor

    tensor = _C.TensorType.get()
    # (_C has no constructor for ScalarType's type object; a parsed argument has one.)
    scalar_type = _C.parse_schema("f(ScalarType x) -> ()").arguments[0].real_type
    params: dict[Any, _SchemaType] = {}
    # (annotation, schema type, T[] allowed, T?[] allowed, T[]? allowed)
    for base, typ, lists, optional_items, optional_lists in (
        (Tensor, tensor, True, True, False),
        (int, _C.SymIntType.get(), True, False, True),
        (float, _C.FloatType.get(), True, False, True),
        (bool, _C.BoolType.get(), True, False, True),
        (str, _C.StringType.get(), False, False, False),
        (Number, _C.NumberType.get(), True, False, False),
        (_C.dtype, scalar_type, False, False, False),
        (_C.device, _C.DeviceObjType.get(), False, False, False),
    ):
        params[base] = _schema_type(typ)
        params[Optional[base]] = _schema_type(_C.OptionalType(typ))
        for seq in _sequences(base) if lists else ():
            params[seq] = _schema_type(_C.ListType(typ))
        for seq in _sequences(Optional[base]) if optional_items else ():
            params[seq] = _schema_type(_C.ListType(_C.OptionalType(typ)))
        for seq in _sequences(base) if optional_lists else ():
            params[Optional[seq]] = _schema_type(_C.OptionalType(_C.ListType(typ)))
    tensor_list = _schema_type(_C.ListType(tensor))
    returns: dict[Any, _SchemaType] = {
        Tensor: _schema_type(tensor),
        typing.List[Tensor]: tensor_list,
        list[Tensor]: tensor_list,
        int: _schema_type(_C.SymIntType.get()),
        float: _schema_type(_C.FloatType.get()),
        bool: _schema_type(_C.BoolType.get()),
        Number: _schema_type(_C.NumberType.get()),
    }
    return params, returns


def __getattr__(name: str) -> Any:
    # SUPPORTED_PARAM_TYPES / SUPPORTED_RETURN_TYPES ({annotation: schema type text}), as in PyTorch.
    if name == "SUPPORTED_PARAM_TYPES":
        return {annotation: t.text for annotation, t in _supported_types()[0].items()}
    if name == "SUPPORTED_RETURN_TYPES":
        return {annotation: t.text for annotation, t in _supported_types()[1].items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def tuple_to_list(tuple_type: Any) -> Any:
    """The list annotation suggested for a tuple one: ``Tuple[int, int]`` ->
    ``typing.List[int]``, ``Tuple[int, float]`` -> ``typing.List[Union[int,
    float]]``, ``Tuple[T, ...]`` -> ``typing.List[T]``. PyTorch: same name."""
    args = getattr(tuple_type, "__args__", None)
    if tuple_type in (typing.Tuple, tuple) or not args or args == ((),):
        return typing.List
    if len(args) == 2 and args[1] is Ellipsis:
        return typing.List[args[0]]  # type: ignore[valid-type]  # an annotation built at run time
    return typing.List[Union[tuple(args)]]  # type: ignore[misc]  # an annotation built at run time


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


_EMPTY = inspect.Parameter.empty
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
_POSITIONAL_OR_KEYWORD = inspect.Parameter.POSITIONAL_OR_KEYWORD
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD

# (name, kind, annotation, default) of one parameter, as inspect.Parameter has them.
Param = tuple[str, Any, Any, Any]


def _parameters(fn: Callable[..., Any]) -> tuple[list[Param], Any]:
    """The parameters of ``fn`` in signature order and its return annotation
    (``_EMPTY`` where absent). A plain function (not a wrapper, no
    ``__signature__``) is read from its code object directly:
    inspect.signature costs more than the rest of custom_op."""
    if type(fn) is not types.FunctionType or hasattr(fn, "__wrapped__") or hasattr(fn, "__signature__"):
        sig = inspect.signature(fn)
        return [(p.name, p.kind, p.annotation, p.default) for p in sig.parameters.values()], sig.return_annotation
    code = fn.__code__
    names = code.co_varnames
    nargs, nkwonly = code.co_argcount, code.co_kwonlyargcount
    annotations = fn.__annotations__
    defaults = fn.__defaults__ or ()
    kwdefaults = fn.__kwdefaults__ or {}
    first_default = nargs - len(defaults)
    params: list[Param] = []
    for i in range(nargs):
        kind = _POSITIONAL_ONLY if i < code.co_posonlyargcount else _POSITIONAL_OR_KEYWORD
        default = defaults[i - first_default] if i >= first_default else _EMPTY
        params.append((names[i], kind, annotations.get(names[i], _EMPTY), default))
    extra = nargs + nkwonly
    if code.co_flags & inspect.CO_VARARGS:
        params.append((names[extra], _VAR_POSITIONAL, _EMPTY, _EMPTY))
        extra += 1
    for name in names[nargs:nargs + nkwonly]:
        params.append((name, _KEYWORD_ONLY, annotations.get(name, _EMPTY), kwdefaults.get(name, _EMPTY)))
    if code.co_flags & inspect.CO_VARKEYWORDS:
        params.append((names[extra], _VAR_KEYWORD, _EMPTY, _EMPTY))
    return params, annotations.get("return", _EMPTY)


# Compiled string annotations ("from __future__ import annotations"), by text.
_compiled_annotations: dict[str, Any] = {}


@functools.cache
def _annotation_names() -> dict[str, Any]:
    """The names a string annotation may use besides the function's module
    globals (PyTorch evaluates them in its own namespace, which has them)."""
    import builtins

    import opdispatch
    from .._tensor import Tensor

    names: dict[str, Any] = {name: getattr(typing, name) for name in ("List", "Optional", "Sequence", "Tuple", "Union")}
    names.update(__builtins__=builtins, typing=typing, opdispatch=opdispatch, Tensor=Tensor, Number=Number,
                 dtype=_C.dtype, device=_C.device)
    return names


class SchemaSummary(NamedTuple):
    """A custom op's schema text and what its per-call checks need to know of
    it (Note [Post-kernel effects]), known without parsing the text when
    :func:`summarize_inferred_schema` made it."""

    text: str
    mutates: bool  # an argument is written (Tensor(a!))
    returns: int  # the number of returns
    returns_tensors: bool  # a return holds tensors
    returns_views: bool  # a return has an alias annotation
    kwarg_only_tensors: bool  # a keyword-only argument holds tensors

    @staticmethod
    def of(text: str, schema: _C.FunctionSchema) -> SchemaSummary:
        """The summary of ``text``, parsed as ``schema``."""
        rets = schema.returns
        return SchemaSummary(
            text, schema.is_mutable, len(rets), any(is_tensor_or_tensorlist_like_type(r.type) for r in rets),
            any(r.alias_info is not None for r in rets),
            any(a.kwarg_only and is_tensor_or_tensorlist_like_type(a.type) for a in schema.arguments))


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
    annotations``) are evaluated in the function's module, where names it
    does not define fall back to ``Tensor``, ``Number``, ``dtype``,
    ``device``, ``opdispatch`` and typing's ``List``, ``Optional``,
    ``Sequence``, ``Tuple``, ``Union``.

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
    return summarize_inferred_schema(prototype_function, mutates_args=mutates_args, op_name=op_name).text


def summarize_inferred_schema(
    prototype_function: Callable[..., Any],
    /,
    *,
    mutates_args: Union[str, Iterable[str]],
    op_name: Optional[str] = None,
) -> SchemaSummary:
    """:func:`infer_schema`'s result as a :class:`SchemaSummary` (same
    arguments and errors)."""
    parameters, return_annotation = _parameters(prototype_function)

    def error_fn(what: str) -> NoReturn:
        raise ValueError(f"infer_schema(func): {what} Got func with signature "
                         f"{inspect.signature(prototype_function)})")

    fallback_names, module_names = _annotation_names(), getattr(prototype_function, "__globals__", {})

    def resolve(annotation: Any) -> Any:
        if not isinstance(annotation, str):
            return annotation
        try:
            code = _compiled_annotations.get(annotation)
            if code is None:
                code = _compiled_annotations[annotation] = compile(annotation, "<annotation>", "eval")
            # The function's module globals first, then _annotation_names().
            return eval(code, fallback_names, module_names)
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
    mutates = kwarg_only_tensors = False
    for idx, (name, kind, annotation_text, default_value) in enumerate(parameters):
        if kind is _VAR_POSITIONAL:
            error_fn(f"Parameter *{name}: we do not support varargs (*args); name each parameter.")
        if kind is _VAR_KEYWORD:
            error_fn(f"Parameter **{name}: we do not support varkwargs (**kwargs); name each parameter.")
        if kind is _POSITIONAL_ONLY:
            error_fn(f"Parameter {name}: we do not support positional-only parameters (before '/').")
        if kind is _KEYWORD_ONLY and not saw_kwarg_only:
            params.append("*")
            saw_kwarg_only = True
        if annotation_text is _EMPTY:
            error_fn(f"Parameter {name} must have a type annotation.")
        annotation = resolve(annotation_text)
        entry = _lookup(params_types, annotation)
        if entry is None:
            hint = ""
            if typing.get_origin(annotation) is tuple:
                suggestion = tuple_to_list(annotation)
                hint = "We do not support Tuple inputs in schema. As a workaround, please try to use List instead. "
                if suggestion in params_types:
                    hint += f"For example, {suggestion}. "
            error_fn(f"Parameter {name} has unsupported type {annotation_text}. {hint}"
                     f"The valid types are: {_SUPPORTED_TYPES_TEXT}.")
        schema_type = entry.text
        kwarg_only_tensors = kwarg_only_tensors or (saw_kwarg_only and entry.holds_tensors)
        if mutated is None or name in mutated:
            if entry.holds_tensors:
                # The alias annotation goes on the Tensor: Tensor(a0!), Tensor(a0!)?[], ...
                schema_type = f"Tensor(a{idx}!){schema_type[len('Tensor'):]}"
                mutates = True
            elif mutated is not None:
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                         f"mutated.")
        seen.add(name)
        if default_value is _EMPTY:
            params.append(f"{schema_type} {name}")
            continue
        default = _default_text(default_value)
        if default is None:
            error_fn(f"Parameter {name} has an unsupported default value {default_value!r} (supported: None, "
                     f"bool, int, float, str without quotes or backslashes, opdispatch.dtype, opdispatch.device).")
        params.append(f"{schema_type} {name}={default}")
    if mutated is not None and mutated - seen:
        error_fn(f"{mutated - seen} in mutates_args were not found in the custom op's signature. mutates_args "
                 f"should contain the names of all args that the custom op mutates, or just the string 'unknown' "
                 f"if you don't know.")
    text, returns = _parse_return(resolve(return_annotation), return_types, error_fn)
    return SchemaSummary(f"{op_name or ''}({', '.join(params)}) -> {text}", mutates, len(returns),
                         any(t.holds_tensors for t in returns), False, kwarg_only_tensors)


def _lookup(table: dict[Any, _SchemaType], annotation: Any) -> Optional[_SchemaType]:
    """``table[annotation]``, or None if absent or unhashable (e.g. a list)."""
    try:
        return table.get(annotation)
    except TypeError:
        return None


def _parse_return(annotation: Any, return_types: dict[Any, _SchemaType], error_fn: Callable[[str], NoReturn]
                  ) -> tuple[str, list[_SchemaType]]:
    """The schema text of a return annotation and its returns: none for
    None, one, or one per element of a tuple."""
    if annotation is None or annotation is type(None):
        return "()", []
    entry = _lookup(return_types, annotation)
    if entry is not None:
        return entry.text, [entry]
    if annotation is _EMPTY:
        error_fn("The return type must have a type annotation (use None for no return).")

    def one(t: Any) -> _SchemaType:
        entry = _lookup(return_types, t)
        if entry is None:
            error_fn(f"Return has unsupported type {annotation}. The valid types are: {_SUPPORTED_RETURNS_TEXT}.")
        return entry

    if typing.get_origin(annotation) is not tuple:
        entry = one(annotation)
        return entry.text, [entry]
    items = typing.get_args(annotation)
    if not items or Ellipsis in items:
        error_fn(f"Return has unsupported type {annotation}: a tuple return needs one type per element. The valid "
                 f"types are: {_SUPPORTED_RETURNS_TEXT}.")
    entries = [one(t) for t in items]
    return "(" + ", ".join(e.text for e in entries) + ")", entries
