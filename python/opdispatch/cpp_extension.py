"""Building C++ code against the installed opdispatch: include and library
paths, the CMake prefix for ``find_package(opdispatch CONFIG)``."""
from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def include_paths() -> list[str]:
    """Directories to add with ``-I`` (they hold ``opdispatch/library.h`` and friends)."""
    return [str(_PACKAGE_DIR / "include")]


def library_paths() -> list[str]:
    """Directories holding ``libopdispatch.so`` (link with ``-lopdispatch``)."""
    return [str(_PACKAGE_DIR / "lib")]


def cmake_prefix_path() -> str:
    """A directory for ``CMAKE_PREFIX_PATH`` so that ``find_package(opdispatch CONFIG)`` works."""
    return str(_PACKAGE_DIR / "share" / "cmake")
