"""opdispatch.autograd: reverse-mode differentiation through the dispatcher.

Autograd kernels (registered at the Autograd dispatch key) record graph
nodes; this package holds the graph, the engine and grad mode.
PyTorch: torch.autograd.
"""
from __future__ import annotations

from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .graph import BackwardContext, Node

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


def __dir__() -> list[str]:
    return sorted(__all__)
