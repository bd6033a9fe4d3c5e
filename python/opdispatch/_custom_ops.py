"""The older custom-op API: define an operator from a prototype function or
a schema, then register kernels per device, a fake impl, and an autograd
formula in two halves (what to save; a backward returning a dict of
gradients). New code should use opdispatch.library.custom_op.
PyTorch: torch/_custom_ops.py (seed 001).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Optional, Union

from ._library import legacy_custom_op as _impl
from ._library.infer_schema import infer_schema
from .library import get_ctx, register_fake

__all__ = ["custom_op", "get_ctx", "impl", "impl_abstract", "impl_backward", "impl_save_for_backward"]


def custom_op(qualname: str, func_or_schema: Union[Callable[..., Any], str, None] = None) -> Any:
    """Defines the operator ``qualname`` ("namespace::name", no overload).

    ``func_or_schema`` is a schema string ("(Tensor x) -> Tensor"), or a
    prototype function (whose body is not used) named like the operator,
    whose annotations give the schema (see opdispatch.library.infer_schema);
    without it, ``custom_op`` returns a decorator taking the function. The
    function form returns the function. Only functional operators are
    supported (no mutation, no returned views, at least one return), with no
    argument named ``self``.

    Raises ValueError for a malformed or reserved name ("aten", "prim",
    "od", ...), a function of another name, an unsupported or invalid schema;
    RuntimeError if the operator is already defined (it can be defined once).
    PyTorch: torch._custom_ops.custom_op.

    Example::

        @custom_op("mylib::numpy_sin")
        def numpy_sin(x: Tensor) -> Tensor:
            ...

        @impl("mylib::numpy_sin")
        def numpy_sin_impl(x):
            return opdispatch.from_numpy(np.sin(x.numpy()))
    """
    ns, name = _impl.parse_qualname(qualname)
    _impl.validate_namespace(ns)

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        if not inspect.isfunction(func):
            raise ValueError(f"custom_op(...)(func): Expected `func` to be a Python function, got: {type(func)}")
        if func.__name__ != name:
            raise ValueError(f"custom_op(qualname='{qualname}', ...)(func): expected `func` to have name '{name}' "
                             f"but got '{func.__name__}'. Please either change the name of `func` or the qualname "
                             f"that is passed to `custom_op`")
        _impl.custom_op_with_schema(qualname, infer_schema(func, mutates_args=()))
        return func

    if func_or_schema is None:
        return inner
    if isinstance(func_or_schema, str):
        _impl.custom_op_with_schema(qualname, func_or_schema)
        return None
    return inner(func_or_schema)


def impl(qualname: str, *, device_types: Union[str, Iterable[str]] = ("cpu", "cuda"),
         func: Optional[Callable[..., Any]] = None) -> Any:
    """Registers ``func`` (or, as a decorator, the decorated function) as the
    operator's kernel for ``device_types`` ("cpu", "cuda" or both). Works on
    operators defined by :func:`custom_op` or otherwise (opdispatch.library).
    Raises ValueError for other device types or an undefined operator;
    RuntimeError if a device type already has a kernel.
    PyTorch: torch._custom_ops.impl."""

    def inner(f: Callable[..., Any]) -> Callable[..., Any]:
        _impl.find_custom_op(qualname, also_check_library=True).impl(device_types)(f)
        return f

    return inner if func is None else inner(func)


def impl_abstract(qualname: str, *, func: Optional[Callable[..., Any]] = None) -> Any:
    """Registers the fake impl ("abstract impl") of the operator: its output
    metadata from the inputs' on meta tensors. Same as
    opdispatch.library.register_fake. PyTorch: torch._custom_ops.impl_abstract."""
    return register_fake(qualname, func)


def impl_save_for_backward(qualname: str, *, func: Optional[Callable[..., Any]] = None) -> Any:
    """Registers ``func(inputs, output) -> saved``: what backward needs,
    computed after the forward (``inputs`` is a namedtuple of the arguments by
    name). See :func:`impl_backward`. Raises RuntimeError for operators that
    cannot have a formula this way (mutating, returning views or nothing,
    CompositeImplicitAutograd, or with an Autograd kernel registered another
    way). PyTorch: torch._custom_ops.impl_save_for_backward."""

    def inner(f: Callable[..., Any]) -> Callable[..., Any]:
        _impl.find_custom_op(qualname, also_check_library=True).impl_save_for_backward()(f)
        return f

    return inner if func is None else inner(func)


def impl_backward(qualname: str, output_differentiability: Optional[list[bool]] = None, *,
                  func: Optional[Callable[..., Any]] = None) -> Any:
    """Registers the backward function ``func(ctx, saved, *grads) -> dict``:
    ``saved`` is what the :func:`impl_save_for_backward` function returned,
    ``grads`` one gradient per output; the dict maps the name of every
    Tensor (or Tensor list) argument to its gradient (None, a Tensor, or a
    list for a list argument) and names nothing else.
    ``output_differentiability`` (one bool per output) marks outputs that get
    no gradient. The formula takes effect once both halves are registered;
    calling the operator with inputs that require grad before that raises
    RuntimeError. Mistakes in the dict raise RuntimeError at backward,
    naming the input. PyTorch: torch._custom_ops.impl_backward."""

    def inner(f: Callable[..., Any]) -> Callable[..., Any]:
        _impl.find_custom_op(qualname, also_check_library=True).impl_backward(output_differentiability)(f)
        return f

    return inner if func is None else inner(func)


def _destroy(qualname: str) -> None:
    """Removes a CustomOp and its registrations (for tests). PyTorch: same name."""
    _impl.find_custom_op(qualname)._destroy()
