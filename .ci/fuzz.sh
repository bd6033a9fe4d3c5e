#!/usr/bin/env bash
# Fuzzing check: runs every coverage-guided fuzz target in tests/fuzz/ for a short,
# bounded time (FUZZ_SECONDS each, default 60) on opdispatch built with
# AddressSanitizer + UBSan (.ci/sanitized-python.sh address: incremental after
# .ci/sanitizers.sh), so a memory error is a finding even where it would not
# crash. Installs the test extras (atheris among them) and opdispatch if they
# are missing. Exits non-zero on any finding; the failing input is left in
# tests/fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET="${FUZZ_SECONDS:-60}"
.ci/install-extra.sh test  # atheris is a test dependency
stage="$(.ci/sanitized-python.sh address)"
# Python is not instrumented: the runtime is preloaded. detect_leaks=0: the
# interpreter does not free everything at exit, which is not a finding.
# libstdc++ is preloaded too: ASan intercepts __cxa_throw only if it is loaded when ASan starts.
runtime="$(${CXX:-c++} -print-file-name=libasan.so) $(${CXX:-c++} -print-file-name=libstdc++.so)"
export ASAN_OPTIONS="detect_leaks=0 allocator_may_return_null=1 halt_on_error=1 detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"
status=0
for target in tests/fuzz/fuzz_*.py; do
  name="$(basename "$target" .py)"
  name="${name#fuzz_}"
  echo "== fuzz target $name (${SECONDS_PER_TARGET} s)"
  # --random: the preloaded sanitizer runtime takes libFuzzer's coverage hooks, so inputs are random, not guided.
  if ! LD_PRELOAD="$runtime" PYTHONPATH="$stage" python tests/fuzz/run.py "$name" --seconds "$SECONDS_PER_TARGET" --random 2>&1 |
    tail -n 25; then
    status=1
  fi
done
exit "$status"
