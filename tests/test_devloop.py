"""The developer loop of README "Developing": in an editable install with a
persistent build directory (scikit-build-core's ``editable.rebuild``), the
next ``import opdispatch`` after a C++ edit recompiles the changed file alone.
Marked ``devloop`` and left out of the default run: it needs that install
(``.ci/devloop.sh`` makes one in a fresh environment and runs it)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TOUCHED = REPO / "csrc" / "opdispatch" / "core" / "Device.cpp"

pytestmark = pytest.mark.devloop


def editable_build_dir() -> Path:
    """The build directory of this editable install (from scikit-build-core's import hook)."""
    import opdispatch  # noqa: F401  (installs nothing; the hook is on sys.meta_path from the .pth file)

    for finder in sys.meta_path:
        if type(finder).__name__ == "ScikitBuildRedirectingFinder" and "opdispatch" in finder.known_source_files:
            if not (finder.rebuild_flag and finder.path):
                pytest.fail("opdispatch is installed editable without rebuild; reinstall as README 'Developing' says "
                            "(-Ceditable.rebuild=true -Cbuild-dir=build/dev)")
            return Path(finder.path)
    pytest.fail("opdispatch is not an editable install; the devloop tests need the one README 'Developing' makes "
                "(or run .ci/devloop.sh)")


def run_python(code: str) -> subprocess.CompletedProcess:
    """Runs ``code`` in a new interpreter (its first ``import opdispatch`` rebuilds what changed)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])  # cmake, ninja
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def built(build: Path, since: int) -> list[str]:
    """The files ninja built after the first `since` lines of its log (.ninja_log:
    one tab-separated line per command run: start, end, mtime, output, hash),
    object files and libraries only."""
    lines = (build / ".ninja_log").read_text().splitlines()[since:]
    outputs = [line.split("\t")[3] for line in lines if not line.startswith("#")]
    return [o for o in outputs if o.endswith((".o", ".so"))]


def log_length(build: Path) -> int:
    return len((build / ".ninja_log").read_text().splitlines())


def test_import_after_touching_one_cpp_file_recompiles_that_file_alone():
    build = editable_build_dir()
    run_python("import opdispatch")  # brings the build up to date first
    before = log_length(build)
    os.utime(TOUCHED)  # as an editor's save would

    r = run_python("import opdispatch; print(opdispatch.tensor([1.0, 2.0]).device)")
    assert r.stdout.strip() == "cpu"
    rebuilt = built(build, before)
    # The one object file, and the core library it is part of; not _C, which links the library dynamically.
    assert len(rebuilt) == 2 and rebuilt[0].endswith("Device.cpp.o") and rebuilt[1].endswith("libopdispatch.so"), \
        rebuilt

    before = log_length(build)
    run_python("import opdispatch")
    assert built(build, before) == []  # nothing changed: nothing rebuilt
