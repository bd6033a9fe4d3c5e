"""Type aliases for annotating custom operators (PyTorch: torch.types)."""
from __future__ import annotations

from typing import Union

__all__ = ["Number"]


def __dir__() -> list[str]:
    return sorted(__all__)


#: A Python number: the annotation infer_schema maps to the schema type ``Scalar``.
Number = Union[int, float, bool]
