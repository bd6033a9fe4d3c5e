"""Import time of a package as a regular (wheel) install gives it: the
time ``python -S -c "import <package>"`` takes beyond ``python -S -c pass``.

An editable install is not measured as it is: its import hook re-checks the
build on every import (~200 ms, more on a busy machine) and its Python files
have no bytecode when PYTHONDONTWRITEBYTECODE is set. For an editable install
the package is staged as a wheel lays it out (the directories its import
spec searches, merged into one temporary package directory) and compiled to
bytecode, as pip does at install time. Both the package and the baseline run
with ``-S`` (no site hooks) and the site-packages directories on PYTHONPATH.

Each sample is one fresh process; the result gives the medians of the
samples' CPU time (user + system, from getrusage) and wall time. On a shared
machine the wall time grows with the load while the CPU time does not.
"""
from __future__ import annotations

import compileall
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import resource
import shutil
import site
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator


def _is_editable(package: str) -> bool:
    """Whether ``package`` is installed in editable mode (PEP 660 direct_url.json)."""
    try:
        text = importlib.metadata.distribution(package).read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return False
    return bool(text) and json.loads(text).get("dir_info", {}).get("editable", False)


@contextlib.contextmanager
def _wheel_layout(package: str) -> Iterator[list[str]]:
    """The PYTHONPATH entries under which ``import package`` finds it laid
    out as a wheel installs it (see the module docstring)."""
    if not _is_editable(package):
        yield []
        return
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{package} is installed in editable mode but has no package directories to stage")
    with tempfile.TemporaryDirectory(prefix=f"{package}-wheel-layout-") as root:
        target = Path(root) / package
        # The first search location wins, as for the import hook: copy it last.
        for location in reversed(list(spec.submodule_search_locations)):
            shutil.copytree(location, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
        if not compileall.compile_dir(str(target), quiet=1):
            raise RuntimeError(f"compiling the staged {package} to bytecode failed")
        yield [root]


def _sample(code: str, env: dict[str, str]) -> tuple[float, float]:
    """(CPU, wall) seconds of one ``python -S -c code`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-S", "-c", code], env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def measure(package: str, rounds: int) -> dict[str, float]:
    """ns of CPU and wall time ``import package`` adds to an empty
    interpreter (medians of ``rounds`` fresh processes each), and whether the
    package was staged from an editable install."""
    with _wheel_layout(package) as staged:
        path = [*staged, *site.getsitepackages()]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
        base, imp = [], []
        for _ in range(rounds):  # interleaved, so that load drift hits both alike
            base.append(_sample("pass", env))
            imp.append(_sample(f"import {package}", env))
    cpu = statistics.median(c for c, _ in imp) - statistics.median(c for c, _ in base)
    wall = statistics.median(w for _, w in imp) - statistics.median(w for _, w in base)
    return {"cpu_ns": cpu * 1e9, "wall_ns": wall * 1e9, "staged": bool(staged)}


if __name__ == "__main__":
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    print(json.dumps(measure(sys.argv[1], rounds)))
