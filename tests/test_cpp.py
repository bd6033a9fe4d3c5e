"""Builds the C++ unit tests (tests/cpp) against the installed opdispatch, as a
downstream CMake project would, and runs them with ctest."""
from __future__ import annotations

import subprocess
from pathlib import Path

from _extension_build import cmake_configure_and_build, tool

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build" / "cpp-tests"


def test_cpp_unit_tests_pass_under_ctest():
    cmake_configure_and_build(REPO / "tests" / "cpp", BUILD)
    ctest = subprocess.run([tool("ctest"), "--test-dir", str(BUILD), "--output-on-failure", "--timeout", "300"],
                           cwd=REPO, capture_output=True, text=True)
    assert ctest.returncode == 0, ctest.stdout[-20000:] + ctest.stderr[-20000:]
    assert "100% tests passed" in ctest.stdout, ctest.stdout[-5000:]
