#!/usr/bin/env bash
# Sanitizer check: builds the C++ core and the C++ tests (tests/cpp, the
# stress test among them) under ThreadSanitizer and under AddressSanitizer +
# UBSan, and runs them with ctest. Any report fails the check. Builds only
# libopdispatch and the tests (no Python module), with Ninja at -O1 -g1, into
# build/sanitize-{thread,address}; installs cmake and ninja with pip and
# GoogleTest with tests/cpp/get-googletest.sh when missing. No root needed.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
if ! command -v cmake >/dev/null 2>&1 || ! command -v ninja >/dev/null 2>&1; then
  python -m pip install -q cmake ninja
fi
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
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="-O1 -g1" \
    -DOPDISPATCH_BUILD_TESTS=ON -DOPDISPATCH_SANITIZE="$sanitizer" >/dev/null
  cmake --build "$build" --target opdispatch_tests --parallel "$jobs"
  echo "== $sanitizer: ctest ($((SECONDS - start)) s so far)"
  if ! ctest --test-dir "$build" --output-on-failure --timeout 300 --parallel "$jobs"; then
    status=1
  fi
done
echo "== sanitizers done in $((SECONDS - start)) s"
exit "$status"
