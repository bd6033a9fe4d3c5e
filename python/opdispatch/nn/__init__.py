"""opdispatch.nn: neural-network functions over the ``od`` operators
(``opdispatch.nn.functional``, PyTorch's torch.nn.functional names and
signatures)."""
from __future__ import annotations

from . import functional

__all__ = ["functional"]


def __dir__() -> list[str]:
    return sorted(__all__)
