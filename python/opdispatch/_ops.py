"""opdispatch.ops: operator namespaces, packets and overloads (PyTorch's torch._ops)."""
from __future__ import annotations

import ctypes
import os
import types

from . import _C


class _Ops(types.ModuleType):
    """``opdispatch.ops``: ``ops.<namespace>.<op>.<overload>``."""

    def __init__(self) -> None:
        super().__init__("opdispatch.ops")
        self.loaded_libraries: set[str] = set()

    def load_library(self, path: str | os.PathLike) -> None:
        """Loads a shared library whose static initialisers register operators
        (``OPDISPATCH_LIBRARY`` blocks). Raises OSError if it cannot be loaded
        and RuntimeError if one of its registration blocks failed (that
        block's registrations are undone)."""
        path = os.path.realpath(os.fspath(path))
        ctypes.CDLL(path)
        errors = _C._dispatch_take_static_registration_errors()
        if errors:
            raise RuntimeError(f"loading {path} failed to register operators:\n" + "\n".join(errors))
        self.loaded_libraries.add(path)


ops = _Ops()
