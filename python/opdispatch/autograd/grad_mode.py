"""Grad mode: whether operations on tensors that require grad are recorded.

Grad mode is a thread-local flag of its own (opdispatch::GradMode in C++),
not the exclusion of the autograd dispatch keys: code running below autograd
(a kernel, a mode's ``__torch_dispatch__``) sees grad mode on, and the
autograd kernels consult the flag before they record. See Note [Grad mode is
its own flag] in csrc/opdispatch/core/GradMode.h. PyTorch:
torch.autograd.grad_mode, c10::GradMode.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .. import _C

F = TypeVar("F", bound=Callable[..., Any])

#: Whether grad mode is on in this thread. PyTorch: torch.is_grad_enabled.
is_grad_enabled: Callable[[], bool] = _C.is_grad_enabled
_set_grad_enabled: Callable[[bool], None] = _C._set_grad_enabled


class _GradModeContext:
    """Base of the grad-mode context managers; each also works as a decorator."""

    _mode: bool

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_grad_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self._prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradModeContext):
    """Disables recording: results of operations do not require grad.

    In-place updates of leaves that require grad are allowed (an optimizer
    step). Use as ``with no_grad():`` or as a decorator.
    """

    _mode = False


class enable_grad(_GradModeContext):
    """Enables recording inside a ``no_grad`` block."""

    _mode = True


class set_grad_enabled(_GradModeContext):
    """Sets grad mode to ``mode``: immediately when called, and back to the
    previous mode when used as a context manager and the block exits."""

    def __init__(self, mode: bool) -> None:
        self._prev = is_grad_enabled()
        self._mode = bool(mode)
        _set_grad_enabled(self._mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self._prev)

    def __call__(self, fn: F) -> F:
        _set_grad_enabled(self._prev)
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
