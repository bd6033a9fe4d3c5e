#!/usr/bin/env bash
# Fuzzing check: runs every coverage-guided fuzz target in tests/fuzz/ for a short,
# bounded time (FUZZ_SECONDS each, default 60). Installs the test extras (atheris
# among them) and opdispatch if they are missing. Exits non-zero on any finding;
# the failing input is left in tests/fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
.ci/install-extra.sh test  # atheris is a test dependency
status=0
for target in tests/fuzz/fuzz_*.py; do
  name="$(basename "$target" .py)"
  name="${name#fuzz_}"
  echo "== fuzz target $name (${SECONDS_PER_TARGET} s)"
  if ! python tests/fuzz/run.py "$name" --seconds "$SECONDS_PER_TARGET" 2>&1 | tail -n 25; then
    status=1
  fi
done
exit "$status"
