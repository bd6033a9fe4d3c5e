"""Memory layouts: ``opdispatch.layout`` and its one member here,
``opdispatch.strided`` (every opdispatch tensor is strided). PyTorch: torch.layout."""
from __future__ import annotations

__all__ = ["layout", "strided"]


class layout:
    """A tensor memory layout (``Tensor.layout``). Passes as a schema's
    ``Layout`` argument (it is its enum value, as in PyTorch's c10::Layout:
    strided = 0). Compared by identity; pickles by name."""

    __slots__ = ("_name", "_value")

    def __init__(self, name: str, value: int) -> None:
        self._name = name
        self._value = value

    def __index__(self) -> int:
        return self._value

    def __repr__(self) -> str:
        return f"opdispatch.{self._name}"

    def __reduce__(self) -> str:
        return self._name


strided = layout("strided", 0)
