#!/usr/bin/env bash
# Sanitizer check: builds the C++ core, the C++ tests (tests/cpp, the
# stress test among them) and the Python module under ThreadSanitizer and
# under AddressSanitizer + UBSan, and runs the C++ tests with ctest; under
# ThreadSanitizer also the Python key's thread mix
# (tests/stress/python_key_threads.py, STRESS_SECONDS, default 20). The
# AddressSanitizer build's Python stage is what .ci/fuzz.sh fuzzes. Any
# report fails the check. Builds with Ninja at -O1 -g1 into
# build/sanitize-{thread,address} (.ci/sanitized-python.sh); installs cmake
# and ninja with pip and GoogleTest with tests/cpp/get-googletest.sh when
# missing. No root needed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
if ! command -v cmake >/dev/null 2>&1 || ! command -v ninja >/dev/null 2>&1; then
  python -m pip install -q cmake ninja
fi
python -c "import pybind11" 2>/dev/null || python -m pip install -q pybind11
tests/cpp/get-googletest.sh
jobs="$(nproc 2>/dev/null || echo 2)"

# halt_on_error: the first report fails the test that made it. The huge-allocation
# tests expect a clean error (bad_alloc), not the sanitizer allocator's abort.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 allocator_may_return_null=1"
export ASAN_OPTIONS="allocator_may_return_null=1 halt_on_error=1 detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1"

status=0
for sanitizer in thread address; do
  build="build/sanitize-$sanitizer"
  echo "== $sanitizer: build ($((SECONDS - start)) s so far)"
  # (the Python module too, staged for the Python checks: .ci/sanitized-python.sh configures the build)
  stage="$(.ci/sanitized-python.sh "$sanitizer")"
  cmake --build "$build" --target opdispatch_tests --parallel "$jobs"
  echo "== $sanitizer: ctest ($((SECONDS - start)) s so far)"
  if ! ctest --test-dir "$build" --output-on-failure --timeout 300 --parallel "$jobs"; then
    status=1
  fi
  if [ "$sanitizer" = thread ]; then
    echo "== thread: the Python key's thread mix, tests/stress/python_key_threads.py ($((SECONDS - start)) s so far)"
    # (Python is not instrumented: the runtime is preloaded, with libstdc++ so that it intercepts __cxa_throw.)
    runtime="$(${CXX:-c++} -print-file-name=libtsan.so) $(${CXX:-c++} -print-file-name=libstdc++.so)"
    if ! OPENBLAS_NUM_THREADS=1 LD_PRELOAD="$runtime" PYTHONPATH="$stage" \
      python tests/stress/python_key_threads.py --seconds "${STRESS_SECONDS:-20}"; then
      status=1
    fi
  fi
done
echo "== sanitizers done in $((SECONDS - start)) s"
exit "$status"
