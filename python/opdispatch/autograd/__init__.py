"""opdispatch.autograd: reverse-mode differentiation through the dispatcher.

Autograd kernels (registered at the Autograd dispatch key) record graph
nodes; this package holds the graph, the engine and grad mode.
PyTorch: torch.autograd.
"""
from __future__ import annotations

from typing import Any

from .._lazy import lazy_getattr as _lazy_getattr
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .graph import BackwardContext, Node

# Loaded on first use, so that `import opdispatch` stays lean (the built-in
# operators do not need autograd.Function): name -> (module, attribute or None for the module).
_LAZY = {
    "Function": (".function", "Function"),
    "FunctionCtx": (".function", "FunctionCtx"),
    "once_differentiable": (".function", "once_differentiable"),
    "function": (".function", None),
}

__all__ = [
    "BackwardContext",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Node",
    "backward",
    "enable_grad",
    "grad",
    "gradcheck",
    "is_grad_enabled",
    "no_grad",
    "once_differentiable",
    "set_grad_enabled",
]


_load_lazy = _lazy_getattr(globals(), _LAZY)


def __getattr__(name: str) -> Any:
    return _load_lazy(name)


def __dir__() -> list[str]:
    return sorted(__all__)
