#!/usr/bin/env bash
# Fuzzing check: runs every coverage-guided fuzz target in tests/fuzz/ at once for a
# short, bounded time (FUZZ_SECONDS each, default 60) on opdispatch built with
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
# The targets run at once (each is one process), each into its own log, printed in turn.
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
pids=()
names=()
for target in tests/fuzz/fuzz_*.py; do
  name="$(basename "$target" .py)"
  name="${name#fuzz_}"
  # --random: the preloaded sanitizer runtime takes libFuzzer's coverage hooks, so inputs are random, not guided.
  LD_PRELOAD="$runtime" PYTHONPATH="$stage" python tests/fuzz/run.py "$name" --seconds "$SECONDS_PER_TARGET" --random \
    >"$logs/$name.log" 2>&1 &
  pids+=("$!")
  names+=("$name")
done
status=0
for i in "${!pids[@]}"; do
  result=ok
  wait "${pids[$i]}" || { result=FAILED; status=1; }
  echo "== fuzz target ${names[$i]} (${SECONDS_PER_TARGET} s): $result"
  tail -n 25 "$logs/${names[$i]}.log"
done
exit "$status"
