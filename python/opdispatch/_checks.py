"""``opdispatch._check`` and its siblings: the Python forms of the C++
OPDISPATCH_CHECK* macros that fake impls and kernels use to validate their
inputs. PyTorch: torch._check, torch._check_with (torch/__init__.py)."""
from __future__ import annotations

import builtins
import warnings
from typing import Any, Callable, Optional

__all__ = ["_check", "_check_index", "_check_is_size", "_check_not_implemented", "_check_type", "_check_value",
           "_check_with"]

Message = Optional[Callable[[], Any]]

_DEFAULT_MESSAGE = "Expected cond to be True, but got False. (Could this error message be improved? Pass a message.)"


def _check_with(error_type: type[Exception], cond: builtins.bool, message: Message = None) -> None:
    """Raises ``error_type(str(message()))`` if ``cond`` is False.

    Args:
        error_type: an Exception subclass (not a Warning).
        cond (bool): a Python bool (a Tensor or NumPy bool is refused, as in PyTorch).
        message (Callable | None): called only on failure; its result, made a
            str, is the error message. Default: a generic message.

    Raises TypeError if ``cond`` is not a bool or ``message`` is not callable;
    AssertionError (on failure) if ``error_type`` is not an Exception
    subclass or is a Warning. PyTorch: torch._check_with.
    """
    if not isinstance(cond, builtins.bool):
        from . import _C

        if isinstance(cond, _C.TensorBase):
            raise TypeError("cond must be a bool, but got a Tensor. For a condition on a tensor's values, compute "
                            "a Python bool first (e.g. bool(t.all()) on cpu).")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not (isinstance(error_type, type) and issubclass(error_type, Exception)) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got {error_type}")
    if message is None:
        raise error_type(_DEFAULT_MESSAGE)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def _check(cond: builtins.bool, message: Message = None) -> None:
    """RuntimeError unless ``cond`` (see :func:`_check_with`). C++: OPDISPATCH_CHECK.
    PyTorch: torch._check."""
    _check_with(RuntimeError, cond, message)


def _check_index(cond: builtins.bool, message: Message = None) -> None:
    """IndexError unless ``cond`` (see :func:`_check_with`). PyTorch: torch._check_index."""
    _check_with(IndexError, cond, message)


def _check_value(cond: builtins.bool, message: Message = None) -> None:
    """ValueError unless ``cond`` (see :func:`_check_with`). PyTorch: torch._check_value."""
    _check_with(ValueError, cond, message)


def _check_type(cond: builtins.bool, message: Message = None) -> None:
    """TypeError unless ``cond`` (see :func:`_check_with`). PyTorch: torch._check_type."""
    _check_with(TypeError, cond, message)


def _check_not_implemented(cond: builtins.bool, message: Message = None) -> None:
    """NotImplementedError unless ``cond`` (see :func:`_check_with`).
    PyTorch: torch._check_not_implemented."""
    _check_with(NotImplementedError, cond, message)


def _check_is_size(i: int, message: Message = None, *, max: Optional[int] = None) -> None:
    """RuntimeError unless ``0 <= i`` (and ``i <= max`` when given): ``i`` is a
    valid size. Warns FutureWarning, as PyTorch 2.13 does (it plans to remove
    the function: write ``_check(i >= 0)``). Sizes here are concrete ints, so
    the symbolic-size hints PyTorch attaches have nothing to act on.
    PyTorch: torch._check_is_size."""
    warnings.warn("_check_is_size is deprecated (PyTorch will remove it); use _check(i >= 0) instead.",
                  FutureWarning, stacklevel=2)
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)
