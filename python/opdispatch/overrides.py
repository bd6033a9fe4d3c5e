"""The function layer above the dispatcher: ``__torch_function__`` overrides
of public functions and Tensor methods, and ``TorchFunctionMode``. PyTorch:
torch/overrides.py (same names).

A call of a public function (``opdispatch.add``) or of a Tensor method or
property (``x.add``, ``x.grad``) whose arguments include an object with
``__torch_function__`` (a tensor subclass that does not set it to
``_disabled_torch_function_impl``, or a tensor-like object), or made inside
``with SomeTorchFunctionMode():``, goes to :func:`handle_torch_function`
before any operator runs: the innermost mode first (popped while it runs),
then the overriding arguments, subclasses before their bases. The check is
made in C (Note [The function layer] in csrc/python/TorchFunction.cpp); the
dispatcher (autograd, the Python key, the backends) runs afterwards.

    class LogFunctions(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            print(func.__name__)                    # add, sum, ...
            return func(*args, **(kwargs or {}))    # runs with this mode popped
"""
from __future__ import annotations

import contextlib
import functools
import warnings
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional

from . import _C
from ._C import (
    DisableTorchFunction,
    DisableTorchFunctionSubclass,
    _disabled_torch_function_impl,
    _get_function_stack_at,
    _is_torch_function_enabled,
    _is_torch_function_mode_enabled,
    _len_torch_function_stack,
    _pop_torch_function_stack,
    _push_on_torch_function_stack,
)

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = [
    "BaseTorchFunctionMode",
    "DisableTorchFunction",
    "DisableTorchFunctionSubclass",
    "TorchFunctionMode",
    "enable_reentrant_dispatch",
    "get_default_nowrap_functions",
    "handle_torch_function",
    "has_torch_function",
    "has_torch_function_unary",
    "has_torch_function_variadic",
    "is_tensor_like",
    "is_tensor_method_or_property",
]

#: has_torch_function(relevant_args): whether a call with these arguments goes to
#: handle_torch_function (a mode is enabled, or an argument overrides). PyTorch: same name.
has_torch_function = _C._has_torch_function
#: has_torch_function((obj,)). PyTorch: same name.
has_torch_function_unary = _C._has_torch_function_unary
#: has_torch_function(args). PyTorch: same name.
has_torch_function_variadic = _C._has_torch_function_variadic


class TorchFunctionMode:
    """Overrides every public function and Tensor method called in a dynamic
    scope: subclass it, define ``__torch_function__(self, func, types,
    args=(), kwargs=None)`` (a plain method), and run code under ``with
    MyMode():``. ``func`` is the public object called (``opdispatch.add``,
    ``Tensor.sum``, ``Tensor.grad.__get__``), ``types`` the overriding
    argument types, ``args``/``kwargs`` the call's arguments. It runs with
    itself popped, so ``func(*args, **kwargs)`` inside it goes to the next mode
    and then to the overriding arguments and the dispatcher. Returning
    ``NotImplemented`` passes the call on. Modes nest, innermost first, per
    thread. PyTorch: torch.overrides.TorchFunctionMode.
    """

    inner: "TorchFunctionMode"

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Callable[..., Any], types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        """Handles one call; subclasses override it (this one raises NotImplementedError)."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        _push_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> "TorchFunctionMode":
        """``cls(*args, **kwargs)``, with PyTorch's deprecation warning (use ``with cls():``)."""
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call unchanged (a base for modes that observe).
    PyTorch: torch.overrides.BaseTorchFunctionMode."""

    def __torch_function__(self, func: Callable[..., Any], types: tuple[type, ...], args: tuple[Any, ...] = (),
                           kwargs: Optional[dict[str, Any]] = None) -> Any:
        return func(*args, **(kwargs or {}))


def _get_current_function_mode() -> Optional[TorchFunctionMode]:
    """The mode that handles the next call on this thread, or None. PyTorch: same name."""
    n = _len_torch_function_stack()
    return _get_function_stack_at(n - 1) if n > 0 else None


def _get_current_function_mode_stack() -> list[TorchFunctionMode]:
    """This thread's modes, the innermost last. PyTorch: same name."""
    return [_get_function_stack_at(i) for i in range(_len_torch_function_stack())]


def _push_mode(mode: TorchFunctionMode) -> None:
    _push_on_torch_function_stack(mode)


def _pop_mode() -> TorchFunctionMode:
    """Pops the innermost mode; RuntimeError if there is none."""
    mode: TorchFunctionMode = _pop_torch_function_stack()
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily() -> Iterator[TorchFunctionMode]:
    """Pops the innermost mode for the block (yielding it) and pushes it back after. PyTorch: same name."""
    old = _pop_mode()
    try:
        yield old
    finally:
        _push_mode(old)


def _overrides(arg_type: type) -> bool:
    attr = getattr(arg_type, "__torch_function__", None)
    return attr is not None and attr is not _disabled_torch_function_impl


def _get_overloaded_args(relevant_args: Iterable[Any],
                         get_type_fn: Optional[Callable[[Any], type]] = None) -> list[Any]:
    """The arguments whose types override ``__torch_function__``, one per
    type, each subclass before its bases and otherwise in argument order;
    empty inside DisableTorchFunctionSubclass. PyTorch: same name."""
    type_of = type if get_type_fn is None else get_type_fn
    if not _is_torch_function_enabled():
        return []
    seen: set[type] = set()
    overloaded: list[Any] = []
    for arg in relevant_args:
        arg_type = type_of(arg)
        if arg_type in seen or not _overrides(arg_type):
            continue
        seen.add(arg_type)
        index = len(overloaded)
        for i, old in enumerate(overloaded):
            if issubclass(arg_type, type_of(old)):
                index = i
                break
        overloaded.insert(index, arg)
    return overloaded


def handle_torch_function(public_api: Callable[..., Any], relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """Runs the call ``public_api(*args, **kwargs)`` through the function
    layer: the innermost enabled TorchFunctionMode (popped while it runs),
    then the ``__torch_function__`` of each overriding object among
    ``relevant_args``, until one returns something other than NotImplemented.
    TypeError if all do. PyTorch: torch.overrides.handle_torch_function."""
    overloaded_args = _get_overloaded_args(relevant_args)
    types = tuple(map(type, overloaded_args))
    if _is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in overloaded_args:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn("Defining your `__torch_function__` as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning, stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{getattr(public_api, '__module__', None)}.{getattr(public_api, '__name__', public_api)}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(arg) for arg in overloaded_args]}")


def _relevant_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The arguments an overridden call of an _Overridable names as overloaded:
    every positional and keyword argument, and the items of list and tuple
    arguments, except plain tensors (so a mode sees ``types == ()`` for a call
    on plain tensors, as PyTorch's bindings mostly give)."""
    from ._tensor import Tensor

    relevant: list[Any] = []
    for arg in (*args, *kwargs.values()):
        items = arg if type(arg) in (list, tuple) else (arg,)
        relevant.extend(a for a in items if type(a) is not Tensor)
    return relevant


def _handle_overridable(public_api: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The handler of _C._Overridable calls that go to the function layer."""
    return handle_torch_function(public_api, _relevant_args(args, kwargs), *args, **kwargs)


_C._set_torch_function_handler(_handle_overridable)


def is_tensor_like(inp: Any) -> bool:
    """Whether ``inp`` is an opdispatch.Tensor or an object whose type
    defines ``__torch_function__`` (a tensor-like). PyTorch: same name."""
    from ._tensor import Tensor

    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable[..., Any]) -> bool:
    """Whether ``func`` is a Tensor method or a property getter of the
    function layer (``Tensor.add``, ``Tensor.grad.__get__``), rather than a
    public function. PyTorch: same name."""
    from ._tensor import Tensor

    owner = getattr(func, "__self__", None)
    if owner is not None and getattr(func, "__name__", None) == "__get__":
        return isinstance(owner, property)
    name = getattr(func, "__name__", None)
    return isinstance(name, str) and getattr(Tensor, name, None) is func


@functools.lru_cache(None)
def get_default_nowrap_functions() -> set[Callable[..., Any]]:
    """The public functions whose results Tensor.__torch_function__ returns
    as they are instead of converting tensors to the subclass (the getters of
    ``Tensor.grad`` and ``Tensor._base``). PyTorch: same name (also ``_grad``,
    which opdispatch tensors do not have)."""
    from ._tensor import Tensor

    return {Tensor.grad.__get__, Tensor._base.__get__}


@contextlib.contextmanager
def enable_reentrant_dispatch() -> Iterator[None]:
    """Runs the block with the dispatch key sets the current operator call
    started with, so that calls made inside a ``__torch_dispatch__`` pass the
    keys above Python again (autograd, modes). PyTorch: same name (through
    _RestorePythonTLSSnapshot)."""
    with _C._RestorePythonTLSSnapshot():
        yield


def overridable(fast: Optional[Callable[..., Any]] = None, fast_nargs: int = -1
                ) -> Callable[[Callable[..., Any]], _C._Overridable]:
    """Decorator: the function as a public object of the function layer (an
    ``_C._Overridable`` keeping its name, docstring and signature). ``fast``:
    the callable the function amounts to when called on ``fast_nargs`` plain
    tensors passed positionally, called directly then."""
    def wrap(fn: Callable[..., Any]) -> _C._Overridable:
        wrapped = _C._Overridable(fn, fast=fast, fast_nargs=fast_nargs)
        functools.update_wrapper(wrapped, fn)
        return wrapped

    return wrap


def overridable_property(prop: property) -> property:
    """``prop`` with its getter checked by the function layer: handlers get
    the new property's ``__get__`` as ``func``, as PyTorch's getters."""
    assert prop.fget is not None
    getter = overridable()(prop.fget)
    new = property(getter, prop.fset, prop.fdel, prop.__doc__)
    getter._public = new.__get__
    return new
