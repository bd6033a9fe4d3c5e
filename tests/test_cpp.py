"""Builds the C++ unit tests (tests/cpp) against the installed opdispatch, as a
downstream CMake project would, and runs them with ctest. Where no GoogleTest
can be had, the test says so (skipped, and named in the run's summary by
conftest.py), never passes; with OPDISPATCH_REQUIRE_CPP_TESTS set (CI) it fails."""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from _extension_build import cmake_configure, cmake_configure_and_build, tool

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build" / "cpp-tests"
#: The start of what the skip says; conftest.py's summary looks for it.
NOT_RUN = "C++ unit tests NOT RUN"
HOW_TO_GET = ("GoogleTest not found: run tests/cpp/get-googletest.sh (needs apt-get), or install GoogleTest where CMake "
              "finds it (Debian/Ubuntu: apt-get install libgtest-dev), or set OPDISPATCH_GOOGLETEST_SOURCE_DIR to its "
              "sources")


def googletest_missing(configure: subprocess.CompletedProcess) -> bool:
    """Whether configuring tests/cpp failed for want of GoogleTest (tests/cpp/CMakeLists.txt's message)."""
    return configure.returncode != 0 and "GoogleTest not found" in configure.stdout + configure.stderr


def test_cpp_unit_tests_pass_under_ctest():
    configure = cmake_configure(REPO / "tests" / "cpp", BUILD)
    if googletest_missing(configure):
        if os.environ.get("OPDISPATCH_REQUIRE_CPP_TESTS"):
            pytest.fail(f"{HOW_TO_GET} (OPDISPATCH_REQUIRE_CPP_TESTS is set)")
        pytest.skip(f"{NOT_RUN}: {HOW_TO_GET}")
    cmake_configure_and_build(REPO / "tests" / "cpp", BUILD)
    ctest = subprocess.run([tool("ctest"), "--test-dir", str(BUILD), "--output-on-failure", "--timeout", "300"],
                           cwd=REPO, capture_output=True, text=True)
    assert ctest.returncode == 0, ctest.stdout[-20000:] + ctest.stderr[-20000:]
    assert "100% tests passed" in ctest.stdout, ctest.stdout[-5000:]


def test_configure_without_googletest_is_recognised(tmp_path):
    configure = cmake_configure(REPO / "tests" / "cpp", tmp_path / "build", "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON",
                                f"-DOPDISPATCH_GOOGLETEST_SOURCE_DIR={tmp_path / 'none'}")
    assert googletest_missing(configure), configure.stdout + configure.stderr


def _installed_googletest() -> bool:
    """Whether get-googletest.sh's look for an installed GoogleTest finds one on this machine."""
    prefixes = [os.environ["CONDA_PREFIX"]] if os.environ.get("CONDA_PREFIX") else []
    return any(glob.glob(f"{p}/lib*/cmake/GTest/GTestConfig.cmake") + glob.glob(f"{p}/lib/*/cmake/GTest/GTestConfig.cmake")
               for p in prefixes + ["/usr/local", "/usr"])


def test_get_googletest_without_apt_get_says_what_will_not_run(tmp_path):
    script = tmp_path / "tests" / "cpp" / "get-googletest.sh"
    script.parent.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "cpp" / "get-googletest.sh", script)
    tools = tmp_path / "bin"  # a PATH with a shell and coreutils, and neither apt-get nor dpkg
    tools.mkdir()
    for name in ("sh", "dirname", "mktemp", "rm", "mkdir"):
        (tools / name).symlink_to(shutil.which(name))
    done = subprocess.run([str(tools / "sh"), str(script)], env={"PATH": str(tools)}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    if _installed_googletest():
        assert done.stderr == ""
    else:
        assert "no GoogleTest installed and no apt-get here" in done.stderr
        assert "will be reported as not run" in done.stderr and "OPDISPATCH_GOOGLETEST_SOURCE_DIR" in done.stderr
    assert not (tmp_path / "build").exists()
