#!/usr/bin/env bash
# Lint and type checks (issue 10): ruff, mypy (strict, per pyproject.toml) over
# the package and the user-style sample, stubtest of the _C stubs against the
# built module, and clang-format in check mode. Needs opdispatch installed
# (the README's test command does that); installs its own pinned tools.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet "ruff==0.17.6" "mypy==2.4.1" "clang-format==23.1.5" "typing_extensions>=4.13"
status=0
run() {
  echo "::: $*"
  "$@" || status=1
}
run python -m ruff check .
run python -m mypy
# stubtest reads the stub of the installed package (where mypy does not report
# the errors the overrides in pyproject.toml allow): it must be this checkout's.
installed=$(python -c 'import opdispatch, pathlib; print(pathlib.Path(opdispatch.__file__).parent)')
run cmp python/opdispatch/_C.pyi "$installed/_C.pyi"
run python -m mypy.stubtest opdispatch._C --allowlist tests/typing/stubtest_allowlist.txt
# Our C++ (tests/ecosystem holds ported third-party code in its own style).
mapfile -t cxx < <(find csrc tests/cpp examples benchmarks/cpp -name '*.cpp' -o -name '*.h' | sort)
echo "::: clang-format --dry-run -Werror (${#cxx[@]} files)"
clang-format --dry-run -Werror "${cxx[@]}" 2>&1 | tail -n 20 || status=1
exit $status
