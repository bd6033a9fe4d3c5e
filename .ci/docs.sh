#!/usr/bin/env bash
# CI check: the documentation (docs/, Sphinx) builds with warnings as errors,
# and every example in it runs: the HTML build runs the command-line examples
# (sphinxcontrib-programoutput), the doctest build runs each Python example
# and compares what it prints with the output shown; every relative link of the
# pages resolves and no page shows a machine path (.ci/check_links.py). Run from anywhere; the
# pages are written to build/docs/html.
set -euo pipefail
cd "$(dirname "$0")/.."
.ci/install-extra.sh docs
export OPDISPATCH_EXTENSIONS_DIR="${OPDISPATCH_EXTENSIONS_DIR:-$PWD/build/docs-extensions}"
timeout 900 python -m sphinx -W --keep-going -E -b html docs build/docs/html
python .ci/check_links.py build/docs/html
timeout 900 python -m sphinx -W --keep-going -E -b doctest docs build/docs/doctest
