"""Builds the C++ unit tests (tests/cpp) against the installed opdispatch, as a
downstream CMake project would, and runs them with ctest."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import opdispatch.cpp_extension as cpp_extension
from _extension_build import tool as _tool

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build" / "cpp-tests"


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)


def test_cpp_unit_tests_pass_under_ctest():
    configure = _run([
        _tool("cmake"), "-S", str(REPO / "tests" / "cpp"), "-B", str(BUILD), "-G", "Ninja",
        f"-DCMAKE_MAKE_PROGRAM={_tool('ninja')}",
        f"-DCMAKE_PREFIX_PATH={cpp_extension.cmake_prefix_path()}",
        "-DCMAKE_BUILD_TYPE=Release",
    ])
    assert configure.returncode == 0, configure.stdout + configure.stderr
    build = _run([_tool("cmake"), "--build", str(BUILD), "--parallel", str(os.cpu_count() or 2)])
    assert build.returncode == 0, build.stdout[-20000:] + build.stderr[-20000:]
    ctest = _run([_tool("ctest"), "--test-dir", str(BUILD), "--output-on-failure", "--timeout", "300"])
    assert ctest.returncode == 0, ctest.stdout[-20000:] + ctest.stderr[-20000:]
    assert "100% tests passed" in ctest.stdout, ctest.stdout[-5000:]
