"""Loading a ported module for the tests of one file, and undoing its
registrations afterwards.

The ported modules (tests/ecosystem/ported/) register at import, as the
originals do. Importing them at collection would keep their namespaces
taken for the whole session (another port, e.g. a C++ one, may define the
same operators), so each test file imports its port in a module-scoped
fixture and this helper destroys everything the import registered."""
from __future__ import annotations

import contextlib
import importlib
import sys
from types import ModuleType
from typing import Iterator

from opdispatch import library
from opdispatch._library import custom_ops


@contextlib.contextmanager
def loaded(name: str) -> Iterator[ModuleType]:
    """Imports ``ported.<name>`` fresh; on exit destroys the Libraries it
    created (module globals and the free functions' kept-alive ones) and
    the custom ops it made, and forgets the module."""
    kept = len(library._keep_alive)
    opdefs = set(custom_ops.OPDEFS)
    module_name = f"ported.{name}"
    sys.modules.pop(module_name, None)
    module = importlib.import_module(module_name)
    try:
        yield module
    finally:
        for qualname in set(custom_ops.OPDEFS) - opdefs:
            custom_ops.OPDEFS[qualname]._destroy()
        for lib in library._keep_alive[kept:]:
            lib._destroy()
        del library._keep_alive[kept:]
        for value in list(vars(module).values()):
            if isinstance(value, library.Library):
                value._destroy()
        sys.modules.pop(module_name, None)
