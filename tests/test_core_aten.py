"""The Core ATen opset (python/opdispatch/_core_aten.py, read from PyTorch
2.13 by tests/data/make_core_aten.py) against the built-in ``od`` library:
od defines every core overload (193 of 193), each with its schema text and tags."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import opdispatch
from opdispatch import _C
from opdispatch._core_aten import CORE_ATEN, TORCH_VERSION
from opinfo._references import ENV, torch_python

OD = sorted(n.removeprefix("od::") for n in _C._dispatch_get_all_op_names() if n.startswith("od::"))


def _overload(name: str) -> opdispatch._ops.OpOverload:
    base, _, overload = name.partition(".")
    return getattr(getattr(opdispatch.ops.od, base), overload or "default")


def test_the_opset_is_pytorch_2_13s():
    assert TORCH_VERSION.startswith("2.13.") and len(CORE_ATEN) == 193
    assert CORE_ATEN["add.Tensor"] == ("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                                       "core pointwise pt2_compliant_tag")


@pytest.mark.parametrize("name", sorted(set(OD) & set(CORE_ATEN)))
def test_od_operators_have_their_core_namesakes_schema_and_tags(name):
    schema, tags = CORE_ATEN[name]
    op = _overload(name)
    assert str(op._schema) == "od::" + schema.removeprefix("aten::")
    assert sorted(t.name for t in op.tags) == sorted(tags.split())


def test_od_defines_all_193_core_overloads():
    assert sorted(set(CORE_ATEN) - set(OD)) == []
    assert len(set(CORE_ATEN) & set(OD)) == 193


@pytest.mark.skipif(torch_python() is None, reason=f"set {ENV} to a PyTorch venv's python")
def test_the_opset_file_is_what_the_script_makes(tmp_path):
    out = tmp_path / "core_aten.py"
    script = Path(__file__).parent / "data" / "make_core_aten.py"
    subprocess.run([torch_python(), str(script), str(out)], check=True, capture_output=True)
    assert out.read_text() == (Path(opdispatch.__file__).parent / "_core_aten.py").read_text()
