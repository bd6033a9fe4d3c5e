#!/bin/sh
# Makes GoogleTest available to the C++ unit tests (tests/cpp) without root.
# Nothing to do where CMake will find one: an installed GoogleTest (Debian's
# libgtest-dev, a distribution's gtest-devel, conda's gtest), sources named by
# OPDISPATCH_GOOGLETEST_SOURCE_DIR, or sources this script unpacked before.
# Else, where apt-get exists, it unpacks the sources of Debian's `googletest`
# package into build/googletest, which tests/cpp/CMakeLists.txt builds.
# Where none can be had it says so and exits 0: the Python tests still run, and
# tests/test_cpp.py reports the C++ tests as not run, with how to get GoogleTest.
set -eu
cd "$(dirname "$0")/../.."
dest="$PWD/build/googletest"
if [ -n "${OPDISPATCH_GOOGLETEST_SOURCE_DIR:-}" ] || [ -f "$dest/usr/src/googletest/CMakeLists.txt" ]; then
  exit 0
fi
if command -v dpkg >/dev/null 2>&1 && dpkg -s libgtest-dev >/dev/null 2>&1; then
  exit 0
fi
for prefix in ${CONDA_PREFIX:-} /usr/local /usr; do
  for config in "$prefix"/lib*/cmake/GTest/GTestConfig.cmake "$prefix"/lib/*/cmake/GTest/GTestConfig.cmake; do
    [ -f "$config" ] && exit 0
  done
done
not_run() {
  echo "get-googletest.sh: $1; the C++ unit tests will be reported as not run." >&2
  echo "  To run them, install GoogleTest where CMake finds it (Debian/Ubuntu: apt-get install libgtest-dev;" >&2
  echo "  Fedora: dnf install gtest-devel; conda: conda install -c conda-forge gtest), or set" >&2
  echo "  OPDISPATCH_GOOGLETEST_SOURCE_DIR to GoogleTest's sources." >&2
  exit 0
}
command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1 || not_run "no GoogleTest installed and no apt-get here to fetch its sources"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# `apt-get download` needs no root, only package lists; on a machine that has
# none yet, fetch them into a private directory (no root either).
if ! apt-get -qq download googletest 2>/dev/null; then
  mkdir -p lists/partial cache/archives/partial
  apt="-o Dir::State::Lists=$work/lists -o Dir::Cache=$work/cache -o Debug::NoLocking=1"
  { apt-get -qq $apt update && apt-get -qq $apt download googletest; } || not_run "apt-get could not download Debian's googletest package"
fi
mkdir -p "$dest"
dpkg -x googletest_*.deb "$dest"
echo "GoogleTest sources unpacked into $dest/usr/src/googletest"
