#!/usr/bin/env bash
# CI check: the developer loop of README "Developing" (an editable install that
# rebuilds incrementally on import); tests/test_devloop.py then checks that
# touching one .cpp file recompiles it alone. It installs into the active
# environment (.ci/run's build/ci-venv), in pyproject.toml's build directory,
# with the README test command's CMake definitions (SKBUILD_CMAKE_DEFINE, from
# .ci/run) and its Python and pybind11: so the editable install compiles nothing
# that command already compiled (a new environment would change pybind11's
# include path, and every file would compile again). Run it last: it replaces
# the environment's opdispatch with the editable install, and the test touches
# a source file.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q scikit-build-core pybind11 cmake ninja
timeout 1200 python -m pip install -q --no-build-isolation -Ceditable.rebuild=true -Ceditable.verbose=false -e ".[test]"
timeout 900 python -m pytest -m devloop tests/test_devloop.py -q
