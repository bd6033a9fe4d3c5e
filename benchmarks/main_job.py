"""The main job: one training step of the demo's model (64 -> 64 -> 10 MLP,
batch 32, relu, log_softmax + nll_loss, SGD with momentum 0.9), in
opdispatch (the demo's own MLP, SGD and train_step) and in PyTorch eager
(the same operator calls, one thread). Steps per second, interleaved.

    python benchmarks/main_job.py [--quick]

The activation is the built-in relu (od::relu): the demo's C++ extension
relu would need a compiler here, and its kernel is not what is measured.
The PyTorch step writes SGD as the demo does (in-place mul_/add_/sub_ under
no_grad); torch.optim.SGD, which adds its own Python per step, is reported
beside it for reference.
"""
from __future__ import annotations

import argparse
import math
import statistics
import timeit
from typing import Any, Callable, Optional

N_IN, N_HIDDEN, N_CLASSES, BATCH = 64, 64, 10, 32
LR, MOMENTUM = 0.1, 0.9


def _data() -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    return rng.random((BATCH, N_IN), dtype=np.float32), rng.integers(0, N_CLASSES, BATCH).astype(np.int64)


def opdispatch_step() -> Callable[[], float]:
    import opdispatch
    from opdispatch.demo import model

    opdispatch.manual_seed(0)
    mlp = model.MLP.create(N_IN, N_HIDDEN, N_CLASSES, opdispatch.Tensor.relu)
    optimizer = model.SGD(mlp.parameters(), lr=LR, momentum=MOMENTUM)
    x, labels = (opdispatch.from_numpy(a) for a in _data())
    return lambda: model.train_step(mlp, optimizer, x, labels)


def torch_steps(torch: Any) -> dict[str, Callable[[], float]]:
    """{"manual": the demo's step in PyTorch, "optim": the same with torch.optim.SGD}."""
    torch.set_num_threads(1)
    nll_loss = torch.nn.functional.nll_loss
    x, labels = (torch.from_numpy(a) for a in _data())

    def params() -> list[Any]:
        torch.manual_seed(0)
        return [(torch.randn(N_IN, N_HIDDEN) * math.sqrt(2.0 / N_IN)).requires_grad_(),
                torch.zeros(N_HIDDEN, requires_grad=True),
                (torch.randn(N_HIDDEN, N_CLASSES) * math.sqrt(2.0 / N_HIDDEN)).requires_grad_(),
                torch.zeros(N_CLASSES, requires_grad=True)]

    def loss_of(w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        return nll_loss((x.mm(w1) + b1).relu().mm(w2).add(b2).log_softmax(1), labels)

    manual = params()
    buffers = [torch.zeros_like(p) for p in manual]

    def manual_step() -> float:
        loss = loss_of(*manual)
        for p in manual:
            p.grad = None
        loss.backward()
        with torch.no_grad():
            for p, buf in zip(manual, buffers):
                buf.mul_(MOMENTUM).add_(p.grad)
                p.sub_(buf, alpha=LR)
        return loss.item()

    optim_params = params()
    optim = torch.optim.SGD(optim_params, lr=LR, momentum=MOMENTUM)

    def optim_step() -> float:
        loss = loss_of(*optim_params)
        optim.zero_grad()
        loss.backward()
        optim.step()
        return loss.item()

    return {"manual": manual_step, "optim": optim_step}


def run(torch: Optional[Any], rounds: int, steps: int) -> dict[str, float]:
    """Steps per second of each variant (the median of ``rounds`` interleaved
    blocks of ``steps`` steps, after a warm-up), and for each PyTorch variant
    ``"<variant>_ratio"``: opdispatch's rate over its, the median over the
    rounds of the ratio of neighbouring blocks (robust to the machine's load
    drifting during the run)."""
    fns = {"opdispatch": opdispatch_step()}
    if torch is not None:
        fns.update({f"pytorch_{k}": f for k, f in torch_steps(torch).items()})
    for f in fns.values():
        for _ in range(50):
            f()
    seconds: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            seconds[k].append(timeit.timeit(f, number=steps) / steps)
    rates = {k: 1.0 / statistics.median(v) for k, v in seconds.items()}
    for k in fns:
        if k != "opdispatch":
            rates[f"{k}_ratio"] = statistics.median(t / o for o, t in zip(seconds["opdispatch"], seconds[k]))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    rates = run(torch, 7 if args.quick else 31, 20)
    for k, v in rates.items():
        if k.endswith("_ratio"):
            print(f"{k:24s} {v:8.2f}x  (opdispatch's steps/s over PyTorch's)")
        else:
            print(f"{k:24s} {v:8.0f} steps/s  ({1e6 / v:.0f} us/step)")


if __name__ == "__main__":
    main()
