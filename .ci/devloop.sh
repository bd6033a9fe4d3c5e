#!/usr/bin/env bash
# CI check: the developer loop of README "Developing" (an editable install that
# rebuilds incrementally on import), set up in a fresh virtual environment;
# tests/test_devloop.py then checks that touching one .cpp file recompiles it alone.
# It builds in pyproject.toml's build directory, the README test command's, with
# the same CMake definitions (SKBUILD_CMAKE_DEFINE, from .ci/run), so the editable
# install compiles nothing that command already compiled. Run it last: the test
# touches a source file.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(mktemp -d)/venv"
python -m venv "$venv"
. "$venv/bin/activate"
python -m pip install -q scikit-build-core pybind11 cmake ninja
timeout 1200 python -m pip install -q --no-build-isolation -Ceditable.rebuild=true -Ceditable.verbose=false -e ".[test]"
timeout 900 python -m pytest -m devloop tests/test_devloop.py -q
