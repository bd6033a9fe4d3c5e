"""Grad mode: whether operations on tensors that require grad are recorded.

Grad mode is the thread-local exclusion of the autograd dispatch keys, so a
call made with grad disabled goes straight past every autograd kernel (one
source of truth, no per-call flag check). PyTorch: torch.autograd.grad_mode.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

from .. import _C

F = TypeVar("F", bound=Callable[..., Any])

_AUTOGRAD_KEYS = list(_C._dispatch_get_runtime_keyset(_C.DispatchKey.Autograd))
_PROBE_KEY = _C.DispatchKey.AutogradCPU


def is_grad_enabled() -> bool:
    """Whether grad mode is on in this thread."""
    return not _C._dispatch_tls_is_dispatch_key_excluded(_PROBE_KEY)


def _set_grad_enabled(mode: bool) -> None:
    for key in _AUTOGRAD_KEYS:
        _C._dispatch_tls_set_dispatch_key_excluded(key, not mode)


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
