"""Every example in examples/ runs as a user would run it (python examples/X.py)
and prints what its docstring says it shows."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (REPO / "examples").glob("*.py"))


def run(name: str) -> str:
    done = subprocess.run([sys.executable, str(REPO / "examples" / name)], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_every_example_is_tested_here():
    assert EXAMPLES == ["custom_op.py", "device_plugin.py", "device_plugin_cpp.py", "dispatch_mode.py",
                        "higher_order_op.py", "tracing.py", "wrapper_subclass.py"]


def test_dispatch_mode_counts_forward_and_backward_calls():
    counts = {line.split()[1]: int(line.split()[0]) for line in run("dispatch_mode.py").splitlines()
              if line[:1].isdigit()}
    assert counts["od.relu.default"] == 1 and counts["od.threshold_backward.default"] == 1  # forward, backward
    assert counts["od.matmul.default"] == 2  # x @ w, and the gradient of w


def test_wrapper_subclass_computes_in_float64_and_reports_float32():
    out = run("wrapper_subclass.py")
    assert "sum of three thirds: [1. 2.]" in out
    assert "dtype seen by users: opdispatch.float32 | inner dtype: opdispatch.float64" in out


def test_tracing_replays_and_fake_tensors_give_shapes():
    out = run("tracing.py")
    assert "opdispatch.ops.od.relu.default(matmul)" in out and "replay matches eager: True" in out
    assert "fake output: FakeTensor (4096, 3) opdispatch.float32" in out


def test_higher_order_op_runs_eager_and_on_fake_tensors():
    out = run("higher_order_op.py")
    assert "eager: tensor([4.5, 9. ]" in out and "fake: FakeTensor (2,)" in out


def test_custom_op_values_gradient_and_opcheck():
    out = run("custom_op.py")
    x, beta = np.array([-2.0, 0.0, 3.0]), 2.0
    expected = np.logaddexp(0, beta * x) / beta
    gradient = 1 / (1 + np.exp(-beta * x))
    assert f"softplus: {np.round(expected.astype(np.float32), 4)}" in out
    assert f"gradient: {np.round(gradient.astype(np.float32), 4)}" in out
    assert "on meta: (5, 7)" in out and "'FAILED'" not in out and "'test_faketensor': 'SUCCESS'" in out


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_says_how_to_run_it(name):
    assert f"python examples/{name}" in (REPO / "examples" / name).read_text()


def test_python_device_plugin_computes_converts_and_differentiates_on_its_device():
    out = run("device_plugin.py")
    assert "device: npy | class: NpyTensor" in out
    assert "a + b on npy: [[2.0, 3.0], [4.0, 5.0]]" in out
    assert "d(sum(a*a))/da: [[2.0, 4.0], [6.0, 8.0]] on npy" in out
    assert "back on cpu: [[2.0, 4.0], [6.0, 8.0]]" in out
    assert "not implemented: Could not run 'od::sin' with arguments from the 'PrivateUse1' backend" in out


def test_cpp_device_plugin_runs_its_kernels_and_its_fallback():
    out = run("device_plugin_cpp.py")
    assert "device: hostmem:0 | kernel calls so far: 4" in out  # two empty + copy_ pairs: .to() and ones()
    assert "a * b + a: [[2.0, -4.0], [6.0, 8.0]]" in out
    assert "a.abs() (the fallback): [[1.0, 2.0], [3.0, 4.0]] on hostmem:0" in out
    assert "d(sum(a*a))/da: [[2.0, -4.0], [6.0, 8.0]] on hostmem:0" in out
