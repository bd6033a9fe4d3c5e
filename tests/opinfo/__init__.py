"""Samples of the built-in operators, one module per operator family
(``pointwise``, ``nn``, ``indexing``, ...), each defining ``OPS: list[OpInfo]``
with op_db's helpers (``OpInfo``, ``S``, ``a``, ``pos``, ``ints``, ``mask``,
``Const``, ``DEVICE``). Every module here is found by ``family_ops`` and its
entries join ``op_db.OPS``, so the value, gradcheck, Meta and PyTorch tests
cover them with no list to edit. Not families: the harness's own modules
(names starting with ``_``) and the script ``make_references.py``, which
stores PyTorch's results of every sample in tests/data/opinfo/<family>.json
(docs/builtin-operators.rst)."""
from __future__ import annotations

import importlib
import pkgutil
from typing import Any

#: Modules of this package that are not families.
SCRIPTS = {"make_references"}


def family_names() -> list[str]:
    """The family modules' names, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")
                  and m.name not in SCRIPTS)


def family_ops() -> list[Any]:
    """The ``OPS`` of every family module, in module-name order, each
    entry's ``family`` set to its module's name."""
    ops = []
    for family in family_names():
        for info in importlib.import_module(f"{__name__}.{family}").OPS:
            info.family = family
            ops.append(info)
    return ops
