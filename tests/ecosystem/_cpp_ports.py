"""Builds the C++ ecosystem ports (tests/ecosystem/cpp_<project>/) against the
installed opdispatch with opdispatch.cpp_extension.load, one shared library
per port, cached in build/ecosystem-cpp so that a second run compiles
nothing."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import pytest

import opdispatch
import opdispatch.cpp_extension as cpp_extension

HERE = Path(__file__).resolve().parent
CACHE = HERE.parent.parent / "build" / "ecosystem-cpp"


def build(project: str, sources: Iterable[str], extra_cflags: Iterable[str] = (),
          library: str = "") -> cpp_extension.LoadedExtension:
    """Compiles ``tests/ecosystem/cpp_<project>/<source>`` for each source into
    one shared library (named ``library``, default ``cpp_<project>``; the port's
    directory is on the include path, and ``-I`` flags in ``extra_cflags`` are
    relative to it) and loads it, which runs its OPDISPATCH_LIBRARY blocks. A
    compile error fails the test with the compiler's output."""
    root = HERE / f"cpp_{project}"
    flags = [f"-I{root / f[2:]}" if f.startswith("-I") else f for f in extra_cflags]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(CACHE))
        return cpp_extension.load(library or f"cpp_{project}", [root / s for s in sources],
                                  extra_cflags=[f"-I{root}", *flags])


def t(a) -> opdispatch.Tensor:
    """A tensor over a C-contiguous copy (or the array itself, if contiguous) of ``a``."""
    return opdispatch.from_numpy(np.ascontiguousarray(a))
