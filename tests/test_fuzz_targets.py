"""Every fuzz target (tests/fuzz/fuzz_*.py) still runs: its seed corpus passes
through test_one_input without a finding. Keeps the targets in step with the
code between fuzzing runs (.ci/fuzz.sh), which only exercise them for a
bounded time."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

FUZZ = Path(__file__).resolve().parent / "fuzz"
sys.path.insert(0, str(FUZZ))


@pytest.mark.parametrize("name", sorted(p.stem for p in FUZZ.glob("fuzz_*.py")))
def test_seed_corpus_runs_without_findings(name):
    target = importlib.import_module(name)
    seeds = target.seed_corpus()
    assert seeds, f"{name} has an empty seed corpus"
    for seed in seeds:
        target.test_one_input(seed)
