"""opdispatch.utils._pytree behaves as torch.utils._pytree on the same program
(registered node types, OrderedDict and defaultdict nodes, tree_map_,
tree_map_only with types and predicates, tree_map_only_, tree_any_only /
tree_all_only, tree_iter, tree_structure) and opdispatch.is_tensor as
torch.is_tensor: tests/data/pytree_snippet.py's output against PyTorch 2.13's,
recorded in tests/data/pytree_snippet.torch.txt (rerun it under PyTorch to
record it again: python tests/data/pytree_snippet.py torch)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from opdispatch.utils import _pytree as pytree

DATA = Path(__file__).parent / "data"


def run(python: str, name: str) -> str:
    done = subprocess.run([python, str(DATA / "pytree_snippet.py"), name], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_same_program_prints_what_pytorch_printed():
    assert run(sys.executable, "opdispatch") == (DATA / "pytree_snippet.torch.txt").read_text()


def test_tree_map_rejects_different_structures():
    with pytest.raises(ValueError, match="different structures"):
        pytree.tree_map(lambda a, b: a, [1, 2], [1, (2,)])
