#!/usr/bin/env bash
# Usage: .ci/sanitized-python.sh SANITIZER   (thread or address)
# Builds opdispatch's Python module _C and the core under the sanitizer into
# build/sanitize-SANITIZER (the build .ci/sanitizers.sh makes for the C++
# tests, so the core is compiled once for both), installs them with the
# package's Python sources into build/sanitize-SANITIZER/stage, and prints
# the stage directory: run Python with PYTHONPATH set to it and the
# sanitizer's runtime preloaded (Python itself is not instrumented), e.g.
#   LD_PRELOAD="$(c++ -print-file-name=libasan.so) $(c++ -print-file-name=libstdc++.so)" \
#     PYTHONPATH="$stage" python ...
# (libstdc++ too: the sanitizer intercepts __cxa_throw only if it is loaded first.) The Python must not
# have opdispatch installed editable: an editable install's import hook wins over PYTHONPATH.
# Needs the Python it runs under to have pybind11 (and NumPy and SciPy to import the result).
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer="$1"
build="build/sanitize-$sanitizer"
jobs="$(nproc 2>/dev/null || echo 2)"
{
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DOPDISPATCH_BUILD_TESTS=ON -DOPDISPATCH_SANITIZE="$sanitizer" -DOPDISPATCH_BUILD_PYTHON=ON \
    -DPython_EXECUTABLE="$(command -v python)" -Dpybind11_DIR="$(python -m pybind11 --cmakedir)"
  cmake --build "$build" --target _C --parallel "$jobs"
  rm -rf "$build/stage"
  cmake --install "$build" --prefix "$build/stage"
  cp -r python/opdispatch/. "$build/stage/opdispatch/"
} >&2
echo "$PWD/$build/stage"
