"""The main job: one training step of the demo's models, in opdispatch (the
demo's own model, SGD and train_step) and in PyTorch eager (the same
operator calls, one thread). Steps per second, interleaved. ``mlp``: the
64 -> 64 -> 10 MLP, relu; ``cnn`` (``--model cnn``): the demo's
convolutional network (opdispatch.demo.cnn: two blocks of 3x3 convolution,
batch norm, relu and 2x2 max pooling, dropout 0.25, linear), in training
mode. Both: batch 32, log_softmax + nll_loss, SGD with momentum 0.9.

    python benchmarks/main_job.py [--quick] [--model mlp|cnn|all]

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
MOMENTUM = 0.9
#: The demo's learning rate of each model (opdispatch.demo.DEFAULTS).
LR = {"mlp": 0.1, "cnn": 0.05}
#: The CNN's channels and dropout (opdispatch.demo.cnn.CNN.create's defaults).
CHANNELS, DROPOUT = (16, 32), 0.25


def _data() -> tuple[Any, Any]:
    import numpy as np

    rng = np.random.default_rng(0)
    return rng.random((BATCH, N_IN), dtype=np.float32), rng.integers(0, N_CLASSES, BATCH).astype(np.int64)


def opdispatch_step(model_name: str = "mlp") -> Callable[[], float]:
    import opdispatch
    from opdispatch.demo import cnn, model

    opdispatch.manual_seed(0)
    net: model.Model
    if model_name == "cnn":
        net = cnn.CNN.create(N_CLASSES, CHANNELS, DROPOUT)
    else:
        net = model.MLP.create(N_IN, N_HIDDEN, N_CLASSES, opdispatch.Tensor.relu)
    optimizer = model.SGD(net.parameters(), lr=LR[model_name], momentum=MOMENTUM)
    x, labels = (opdispatch.from_numpy(a) for a in _data())
    return lambda: model.train_step(net, optimizer, x, labels)


def _torch_mlp(torch: Any, x: Any) -> tuple[Callable[[], list[Any]], Callable[..., Any]]:
    """(a maker of the MLP's parameters, its logits given them)."""
    def params() -> list[Any]:
        torch.manual_seed(0)
        return [(torch.randn(N_IN, N_HIDDEN) * math.sqrt(2.0 / N_IN)).requires_grad_(),
                torch.zeros(N_HIDDEN, requires_grad=True),
                (torch.randn(N_HIDDEN, N_CLASSES) * math.sqrt(2.0 / N_HIDDEN)).requires_grad_(),
                torch.zeros(N_CLASSES, requires_grad=True)]

    def logits(w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        return (x.mm(w1) + b1).relu().mm(w2).add(b2)

    return params, logits


def _torch_cnn(torch: Any, x: Any) -> tuple[Callable[[], list[Any]], Callable[..., Any]]:
    """(a maker of the CNN's parameters, its logits given them), as opdispatch.demo.cnn's: the same
    initialisation and torch.nn.functional calls; each maker call has its own running statistics."""
    F = torch.nn.functional
    stats: list[Any] = []

    def params() -> list[Any]:
        torch.manual_seed(0)
        made, c_in = [], 1
        stats.clear()
        for c_out in CHANNELS:
            made += [(torch.randn(c_out, c_in, 3, 3) * math.sqrt(2.0 / (c_in * 9))).requires_grad_(),
                     torch.ones(c_out, requires_grad=True), torch.zeros(c_out, requires_grad=True)]
            stats.append((torch.zeros(c_out), torch.ones(c_out)))
            c_in = c_out
        n_in = CHANNELS[-1] * 2 * 2
        return made + [(torch.randn(N_CLASSES, n_in) * math.sqrt(1.0 / n_in)).requires_grad_(),
                       torch.zeros(N_CLASSES, requires_grad=True)]

    def logits(*ps: Any) -> Any:
        h = x.view(x.shape[0], 1, 8, 8)
        running = stats[-len(CHANNELS):]
        for i, (mean, var) in enumerate(running):
            weight, bn_weight, bn_bias = ps[3 * i:3 * i + 3]
            h = F.batch_norm(F.conv2d(h, weight, padding=1), mean, var, bn_weight, bn_bias, training=True)
            h = F.max_pool2d(F.relu(h), 2)
        h = F.dropout(h.flatten(1), DROPOUT, True)
        return F.linear(h, ps[-2], ps[-1])

    return params, logits


def torch_steps(torch: Any, model_name: str = "mlp") -> dict[str, Callable[[], float]]:
    """{"manual": the demo's step in PyTorch, "optim": the same with torch.optim.SGD}."""
    torch.set_num_threads(1)
    nll_loss = torch.nn.functional.nll_loss
    x, labels = (torch.from_numpy(a) for a in _data())
    params, logits = (_torch_cnn if model_name == "cnn" else _torch_mlp)(torch, x)
    lr = LR[model_name]

    def loss_of(*ps: Any) -> Any:
        return nll_loss(logits(*ps).log_softmax(1), labels)

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
                p.sub_(buf, alpha=lr)
        return loss.item()

    optim_params = params()
    optim = torch.optim.SGD(optim_params, lr=lr, momentum=MOMENTUM)

    def optim_step() -> float:
        loss = loss_of(*optim_params)
        optim.zero_grad()
        loss.backward()
        optim.step()
        return loss.item()

    return {"manual": manual_step, "optim": optim_step}


def run(torch: Optional[Any], rounds: int, steps: int, model_name: str = "mlp") -> dict[str, float]:
    """Steps per second of each variant of model ``model_name`` ("mlp" or
    "cnn"; the median of ``rounds`` interleaved blocks of ``steps`` steps,
    after a warm-up), and for each PyTorch variant ``"<variant>_ratio"``:
    opdispatch's rate over its, the median over the rounds of the ratio of
    neighbouring blocks (robust to the machine's load drifting during the run)."""
    fns = {"opdispatch": opdispatch_step(model_name)}
    if torch is not None:
        fns.update({f"pytorch_{k}": f for k, f in torch_steps(torch, model_name).items()})
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
    parser.add_argument("--model", choices=("mlp", "cnn", "all"), default="all")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    for model_name in ("mlp", "cnn") if args.model == "all" else (args.model,):
        rates = run(torch, 7 if args.quick else 31, 5 if model_name == "cnn" else 20, model_name)
        for k, v in rates.items():
            name = f"{model_name} {k}"
            if k.endswith("_ratio"):
                print(f"{name:28s} {v:8.2f}x  (opdispatch's steps/s over PyTorch's)")
            else:
                print(f"{name:28s} {v:8.0f} steps/s  ({1e6 / v:.0f} us/step)")


if __name__ == "__main__":
    main()
