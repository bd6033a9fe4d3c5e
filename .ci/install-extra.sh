#!/usr/bin/env bash
# Usage: .ci/install-extra.sh EXTRA [PACKAGE ...]
# Installs the dependencies of opdispatch's optional extra EXTRA (and any
# further PACKAGEs) for a CI check. When opdispatch is already installed (the
# README's test command, run first by .ci/run, installs it), only the missing
# dependencies are installed: `pip install "opdispatch[EXTRA]"` is satisfied
# by the installed package, so nothing is rebuilt. Otherwise the project is
# built and installed with the extra.
set -euo pipefail
cd "$(dirname "$0")/.."
extra="$1"
shift
if python -c "import opdispatch" >/dev/null 2>&1; then
  python -m pip install -q "opdispatch[$extra]" "$@"
else
  python -m pip install -q ".[$extra]" "$@"
fi
