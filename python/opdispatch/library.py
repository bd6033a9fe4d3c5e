"""opdispatch.library: registering operators and kernels from Python
(PyTorch's torch.library). Minimal: Library only; the full API lands with
the Python front end."""
from __future__ import annotations

from typing import Any, Callable

from . import _C


class Library:
    """A set of registrations for namespace ``ns`` (kind "DEF", "IMPL" or
    "FRAGMENT"), undone when the Library is destroyed."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self.m = _C._dispatch_library(kind, ns, dispatch_key)

    def define(self, schema: str, alias_analysis: str = "", *, tags: tuple = ()) -> str:
        """Defines an operator; returns its name."""
        return self.m.define(schema, alias_analysis, list(tags))

    def impl(self, op_name: str, fn: Callable[..., Any], dispatch_key: str = "", *, with_keyset: bool = False) -> None:
        """Registers ``fn`` as the kernel of ``op_name`` at ``dispatch_key``."""
        self.m.impl(op_name, dispatch_key, fn, with_keyset)

    def _destroy(self) -> None:
        self.m.reset()
