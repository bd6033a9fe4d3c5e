"""Attributes of a package loaded on first use (a PEP 562 module
``__getattr__``), so that ``import opdispatch`` stays lean while every public
name still resolves."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Optional

#: name -> (module relative to the package, attribute of it or None for the module itself).
LazyTable = dict[str, tuple[str, Optional[str]]]


def lazy_getattr(package_globals: dict[str, Any], table: LazyTable) -> Callable[[str], Any]:
    """The ``__getattr__`` of the package whose ``globals()`` is
    ``package_globals``: a name of ``table`` imports its module, binds the
    value in the package (later lookups do not come here) and returns it;
    any other name raises AttributeError naming the package."""
    package = package_globals["__name__"]

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = table[name]
        value = importlib.import_module(module, package)
        value = value if attribute is None else getattr(value, attribute)
        package_globals[name] = value
        return value

    return __getattr__
