"""Records PyTorch 2.13's results for the samples of the nn operators
(tests/opinfo/nn_*.py) into tests/data/nn_torch.json, which
tests/test_nn_ops.py compares opdispatch with.

    python tests/data/make_nn_torch.py --torch-python /path/to/torch/venv/bin/python

Run in opdispatch's venv: it writes every sample's arguments (arrays as
nested lists) and runs this same file under the PyTorch interpreter with
--record, which calls torch.ops.aten.<op>.<overload> on them and adds the
outputs (values, dtypes, shapes, strides), the gradients of the sample's
float inputs for a stored random cotangent, the values mutated arguments
end with, and each operator's schema and tags."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "nn_torch.json"


# --- the sample side (opdispatch's venv) -----------------------------------------------------------------


def _encode(x: Any) -> Any:
    import numpy as np

    from op_db import Const

    if isinstance(x, np.ndarray):
        return {"array": x.tolist(), "dtype": x.dtype.name, "shape": list(x.shape)}
    if isinstance(x, Const):
        return {**_encode(x.array), "const": True}
    if isinstance(x, list):
        return [_encode(v) for v in x]
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if hasattr(x, "is_floating_point"):  # an opdispatch dtype
        return {"scalar_type": str(x).replace("opdispatch.", "")}
    raise TypeError(f"cannot record sample argument {x!r}")


def dump_samples() -> list[dict[str, Any]]:
    sys.path.insert(0, str(HERE.parent))
    import importlib
    import pkgutil

    import op_db  # noqa: F401  (imports every family module of opinfo first)
    import opinfo

    cases = []
    for module in sorted(m.name for m in pkgutil.iter_modules(opinfo.__path__) if m.name.startswith("nn")):
        for info in importlib.import_module(f"opinfo.{module}").OPS:
            for i, sample in enumerate(info.samples):
                cases.append({"op": info.name, "index": i, "grad": info.grad,
                              "differentiable_outputs": info.differentiable_outputs,
                              "args": _encode(list(sample.args)), "kwargs": {k: _encode(v) for k, v in
                                                                             sample.kwargs.items()}})
    return cases


# --- the PyTorch side (--record) ---------------------------------------------------------------------------


def _record(cases: list[dict[str, Any]]) -> dict[str, Any]:
    import numpy as np
    import torch

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    schemas: dict[str, Any] = {}

    def decode(x: Any, leaves: list[Any]) -> Any:
        if isinstance(x, list):
            return [decode(v, leaves) for v in x]
        if isinstance(x, dict) and "scalar_type" in x:
            return getattr(torch, x["scalar_type"])
        if isinstance(x, dict) and "array" in x:
            t = torch.tensor(np.asarray(x["array"], dtype=x["dtype"]).reshape(x["shape"]))
            if t.is_floating_point() and not x.get("const"):
                t.requires_grad_(True)
                leaves.append(t)
            return t
        return x

    def encode(t: Any) -> Any:
        if t is None:
            return None
        return {"array": t.detach().numpy().tolist(), "dtype": str(t.dtype).replace("torch.", ""),
                "shape": list(t.shape), "stride": list(t.stride())}

    for case in cases:
        base, _, overload = case["op"].partition(".")
        op = getattr(getattr(torch.ops.aten, base), overload or "default")
        schemas[case["op"]] = {"schema": str(op._schema), "tags": sorted(t.name for t in op.tags)}
        leaves: list[Any] = []
        args = decode(case["args"], leaves)
        kwargs = {k: decode(v, leaves) for k, v in case["kwargs"].items()}
        try:
            result = op(*args, **kwargs)
        except Exception as e:  # recorded: the test expects opdispatch to refuse it too
            case["error"] = f"{type(e).__name__}: {e}"
            continue
        outs = list(result) if isinstance(result, (tuple, list)) else [result]
        case["outputs"] = [encode(o) for o in outs]
        flat_inputs = [a for a in args if isinstance(a, torch.Tensor)]
        case["final_inputs"] = [encode(a) for a in flat_inputs]
        chosen = case["differentiable_outputs"]
        diff_outs = [o for i, o in enumerate(outs) if o is not None and (chosen is None or i in chosen)
                     and o.is_floating_point() and o.requires_grad]
        if not leaves or not diff_outs:
            continue
        cotangents = [torch.tensor(rng.standard_normal(tuple(o.shape))).to(o.dtype) for o in diff_outs]
        try:
            grads = torch.autograd.grad(diff_outs, leaves, cotangents, allow_unused=True)
        except RuntimeError as e:
            case["grad_error"] = str(e)
            continue
        case["cotangents"] = [encode(c) for c in cotangents]
        case["grads"] = [encode(g) for g in grads]
    functional = sorted(n for n in dir(torch.nn.functional) if not n.startswith("_"))
    return {"torch": torch.__version__, "schemas": schemas, "functional": functional, "cases": cases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch-python", help="the Python of a venv with PyTorch 2.13")
    parser.add_argument("--record", nargs=2, metavar=("SAMPLES", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.record:
        samples, out = args.record
        result = _record(json.loads(Path(samples).read_text()))
        Path(out).write_text(json.dumps(result, separators=(",", ":")) + "\n")
        return
    if not args.torch_python:
        parser.error("--torch-python is required")
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "samples.json"
        samples.write_text(json.dumps(dump_samples()))
        subprocess.run([args.torch_python, __file__, "--record", str(samples), str(OUT)], check=True)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
