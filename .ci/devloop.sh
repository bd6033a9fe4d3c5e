#!/usr/bin/env bash
# CI check: the developer loop of README "Developing" (an editable install that
# rebuilds incrementally on import), set up in a fresh virtual environment;
# tests/test_devloop.py then checks that touching one .cpp file recompiles it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="$(mktemp -d)/venv"
python -m venv "$venv"
. "$venv/bin/activate"
python -m pip install -q scikit-build-core pybind11 cmake ninja
timeout 1200 python -m pip install -q --no-build-isolation -Ceditable.rebuild=true -Ceditable.verbose=false \
  -Cbuild-dir=build/devloop-ci -e ".[test]"
timeout 900 python -m pytest -m devloop tests/test_devloop.py -q
