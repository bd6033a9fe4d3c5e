"""Samples of the built-in operators, one module per operator family
(``pointwise``, ``nn``, ``indexing``, ...), each defining ``OPS: list[OpInfo]``
with op_db's helpers (``OpInfo``, ``S``, ``a``, ``pos``, ``ints``, ``mask``,
``Const``, ``DEVICE``). Every module here is found by ``family_ops`` and its
entries join ``op_db.OPS``, so the value, gradcheck and Meta tests cover them
with no list to edit."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any


def family_ops() -> list[Any]:
    """The ``OPS`` of every module in this package, in module-name order."""
    return [info for module in sorted(m.name for m in pkgutil.iter_modules(__path__))
            for info in importlib.import_module(f"{__name__}.{module}").OPS]
