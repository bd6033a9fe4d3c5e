"""opdispatch.utils: helpers for framework authors (dispatch modes, pytrees,
naming the PrivateUse1 backend)."""
from __future__ import annotations

from .. import _C

__all__ = ["rename_privateuse1_backend"]


def rename_privateuse1_backend(backend_name: str) -> None:
    """Names the PrivateUse1 device type ``backend_name`` (e.g. ``"openreg"``),
    as an out-of-tree device plugin does once at import: afterwards
    ``opdispatch.device(backend_name)``, device strings in factories
    (``empty(..., device=backend_name)``) and ``device_types=`` accept it,
    and PrivateUse1 devices print with it. ``"privateuseone"`` stays valid.

    Raises RuntimeError if PrivateUse1 already has another name (a process
    names it once), ValueError for an empty name, one with ``:``, or an
    existing device type's name. PyTorch: torch.utils.rename_privateuse1_backend.
    """
    _C._rename_privateuse1_backend(backend_name)
