"""opdispatch.autograd: reverse-mode differentiation through the dispatcher.

Autograd kernels (registered at the Autograd dispatch key) record graph
nodes; this package holds the graph, the engine and grad mode.
PyTorch: torch.autograd.
"""
from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = importlib.import_module(module, __name__)
    value = value if attribute is None else getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
