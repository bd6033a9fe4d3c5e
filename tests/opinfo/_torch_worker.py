"""Runs operator calls on PyTorch's ATen operators for the OpInfo harness:
started as ``<torch venv python> _torch_worker.py``, it reads a JSON list of
calls (_protocol.py) on stdin and writes the JSON list of their results on
stdout. It is the only code that imports torch, in its own process."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _protocol import Backend, wire_to_array  # noqa: E402


class TorchBackend(Backend):
    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, torch.Tensor)

    def values(self, t: Any) -> np.ndarray:
        # Through a clone: numpy() would make t's storage unresizable (PyTorch's rule), and resize_ refuse it.
        return t.detach().resolve_conj().resolve_neg().clone().numpy()

    def shares_storage(self, a: Any, b: Any) -> bool:
        ptr = a.untyped_storage().data_ptr()
        return ptr != 0 and ptr == b.untyped_storage().data_ptr()


def decode(x: Any) -> Any:
    """The PyTorch value of a wire value."""
    if isinstance(x, dict):
        if "tensor" in x:
            # The values and geometry in a storage of PyTorch's allocator: resizable (resize_), as od's are.
            t = torch.from_numpy(wire_to_array(x["tensor"]))
            return torch.empty(0, dtype=t.dtype).set_(t.untyped_storage().clone(), t.storage_offset(), t.size(),
                                                      t.stride())
        if "list" in x:
            return [decode(v) for v in x["list"]]
        if "complex" in x:
            return complex(*x["complex"])
        if "attr" in x:
            return getattr(torch, x["attr"])
        if "device" in x:
            return torch.device(x["device"])
        raise ValueError(f"unknown wire value {x!r}")
    return x


def run(call: dict) -> dict:
    """The wire result of one call, or {"missing": why} if PyTorch has no such operator."""
    name, _, overload = call["op"].partition(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None or (overload or "default") not in packet.overloads():
        return {"missing": f"PyTorch {torch.__version__} has no aten::{call['op']}"}
    op = getattr(packet, overload or "default")
    args = [decode(a) for a in call["args"]]
    kwargs = {k: decode(v) for k, v in call["kwargs"].items()}
    return TorchBackend().result(lambda: op(*args, **kwargs), tuple(args), kwargs)


def main() -> None:
    torch.set_num_threads(1)  # the same float sums on every run
    calls = json.load(sys.stdin)
    json.dump({"torch": torch.__version__, "results": [run(c) for c in calls]}, sys.stdout)


if __name__ == "__main__":
    main()
