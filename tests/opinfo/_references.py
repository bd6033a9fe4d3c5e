"""PyTorch 2.13's results of the harness's cases: live, from a worker
process in a PyTorch venv (``$OPDISPATCH_TORCH_PYTHON``), or stored, from
tests/data/opinfo/<family>.json, which make_references.py writes. Each
family's file is read once and the live worker runs once, for every case of
every family."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Iterable, Optional

from opinfo._cases import Case, as_reference

DATA = Path(__file__).resolve().parents[1] / "data" / "opinfo"
WORKER = Path(__file__).resolve().parent / "_torch_worker.py"
#: The variable naming a PyTorch venv's python: the tests then compare with PyTorch live.
ENV = "OPDISPATCH_TORCH_PYTHON"
SCRIPT = "python tests/opinfo/make_references.py --torch-python /path/to/torch-venv/bin/python"


class MissingReference(LookupError):
    """A case has no stored PyTorch result."""


def torch_python() -> Optional[str]:
    """The PyTorch venv's python from ``$OPDISPATCH_TORCH_PYTHON``, or None."""
    return os.environ.get(ENV) or None


def path(family: str) -> Path:
    return DATA / f"{family}.json"


def load(family: str) -> dict:
    """{"torch": version, "cases": {key: {"case": id, "result": result}}} of a family (empty if it has no file)."""
    try:
        return json.loads(path(family).read_text())
    except FileNotFoundError:
        return {"torch": None, "cases": {}}


def write(family: str, torch_version: str, entries: dict[str, dict]) -> None:
    """Writes a family's file: one case per line, by key, so a changed sample changes its own lines."""
    lines = [f"{json.dumps(k)}: {json.dumps(entries[k], sort_keys=True)}" for k in sorted(entries)]
    DATA.mkdir(parents=True, exist_ok=True)
    path(family).write_text('{"torch": ' + json.dumps(torch_version) + ', "cases": {\n' + ",\n".join(lines)
                            + "\n}}\n")


def run_live(python: str, cases: list[Case]) -> tuple[str, list[dict]]:
    """(PyTorch's version, the result of each case, ``as_reference``) from one
    worker run in ``python``'s venv. Raises RuntimeError if the worker fails,
    subprocess.TimeoutExpired if it runs for 15 minutes."""
    done = subprocess.run([python, str(WORKER)], input=json.dumps([c.call() for c in cases]), capture_output=True,
                          text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"the PyTorch worker ({python} {WORKER}) failed with exit code {done.returncode}:\n"
                           f"{done.stderr[-3000:]}")
    reply = json.loads(done.stdout)
    return reply["torch"], [as_reference(c.info, r) for c, r in zip(cases, reply["results"])]


class Source:
    """PyTorch's result of each case: live if ``python`` is given, else stored."""

    def __init__(self, python: Optional[str], all_cases: Iterable[Case]) -> None:
        self.python = python
        self._all = list(all_cases)
        self._live: Optional[dict[str, dict]] = None
        self._stored: dict[str, dict] = {}

    def stored(self, family: str) -> dict:
        if family not in self._stored:
            self._stored[family] = load(family)
        return self._stored[family]

    def live(self) -> dict[str, dict]:
        """{key: result} of every case, from one worker run (made on first use)."""
        if self._live is None:
            assert self.python is not None
            _, results = run_live(self.python, self._all)
            self._live = {c.key: r for c, r in zip(self._all, results)}
        return self._live

    def result(self, case: Case) -> dict:
        """PyTorch's result of ``case``. Raises MissingReference (stored mode) if it has none."""
        if self.python is not None:
            return self.live()[case.key]
        entry = self.stored(case.info.family)["cases"].get(case.key)
        if entry is None:
            raise MissingReference(
                f"{case.id} ({case.sample}) has no stored PyTorch result in "
                f"tests/data/opinfo/{case.info.family}.json (a new or changed sample): run `{SCRIPT}` "
                f"(or set {ENV} to compare with PyTorch live)")
        return entry["result"]
