#!/bin/sh
# Makes GoogleTest available to the C++ tests, without root: when no
# GoogleTest is installed (Debian's libgtest-dev), unpacks the sources of
# Debian's `googletest` package into build/googletest, which
# tests/cpp/CMakeLists.txt then builds with the tests.
set -eu
cd "$(dirname "$0")/../.."
dest="$PWD/build/googletest"
if dpkg -s libgtest-dev >/dev/null 2>&1 || [ -f "$dest/usr/src/googletest/CMakeLists.txt" ]; then
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
# `apt-get download` needs no root, only package lists; on a machine that has
# none yet, fetch them into a private directory (no root either).
if ! apt-get -qq download googletest 2>/dev/null; then
  mkdir -p lists/partial cache/archives/partial
  apt="-o Dir::State::Lists=$work/lists -o Dir::Cache=$work/cache -o Debug::NoLocking=1"
  apt-get -qq $apt update
  apt-get -qq $apt download googletest
fi
mkdir -p "$dest"
dpkg -x googletest_*.deb "$dest"
echo "GoogleTest sources unpacked into $dest/usr/src/googletest"
