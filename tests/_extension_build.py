"""Builds examples/extension with CMake against the installed opdispatch, as a
downstream project would (shared by test_cpp_extension.py and test_cli.py)."""
from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import opdispatch.cpp_extension as cpp_extension

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "extension"
BUILD = REPO / "build" / "example-extension"


def tool(name: str) -> str:
    """A build tool from the active environment (pip's cmake/ninja), else from PATH."""
    candidate = Path(sys.executable).parent / name
    found = str(candidate) if candidate.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is needed to build C++ code in the tests; install the test extras: pip install '.[test]'")
    return found


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)


def cmake_configure(source: Path, build_dir: Path, *options: str) -> subprocess.CompletedProcess:
    """Configures (Release, Ninja, against the installed opdispatch) the CMake
    project at ``source`` in ``build_dir`` with the extra ``-D`` ``options``;
    returns cmake's completed process."""
    return _run([
        tool("cmake"), "-S", str(source), "-B", str(build_dir), "-G", "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={tool('ninja')}",
        f"-DCMAKE_PREFIX_PATH={cpp_extension.cmake_prefix_path()}",
        "-DCMAKE_BUILD_TYPE=Release", *options,
    ])


def cmake_configure_and_build(source: Path, build_dir: Path) -> None:
    """Configures (see cmake_configure) and builds the CMake project at
    ``source`` in ``build_dir``, incrementally; fails the test with the tools'
    output if either step fails."""
    configure = cmake_configure(source, build_dir)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build = _run([tool("cmake"), "--build", str(build_dir), "--parallel", str(os.cpu_count() or 2)])
    assert build.returncode == 0, build.stdout[-20000:] + build.stderr[-20000:]


@functools.cache
def cmake_build() -> Path:
    """Builds the example (incrementally) with CMake and Ninja; returns libmyext.so.
    One process at a time (a lock file beside the build directory): several test
    files build it, and pytest-xdist may run them at once."""
    BUILD.parent.mkdir(parents=True, exist_ok=True)
    with open(BUILD.parent / "example-extension.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cmake_configure_and_build(EXAMPLE, BUILD)
    lib = BUILD / "libmyext.so"
    assert lib.is_file(), f"the CMake build did not produce {lib}"
    return lib
