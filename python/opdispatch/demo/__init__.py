"""``python -m opdispatch demo``: trains a 2-layer MLP on scikit-learn's
handwritten digits with every forward and backward step dispatched (``od``
operators plus ``relu`` from the example C++ extension, compiled on first
use), counts and times the operator calls inside the dispatcher, and runs the
model once more on ``meta`` tensors to show its shapes.

Modules: data (the digits, batches), extension (the C++ operator and its
autograd formula), model (MLP, SGD, train_epoch, evaluate, meta_shapes),
opcount (the dispatcher-level op counter), progress (the progress bar).
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

import numpy as np

from .. import _C, manual_seed
from . import data, extension, model
from .opcount import OpCounter, counting_overhead
from .progress import EpochProgress

#: The held-out accuracy the demo must reach to succeed.
MIN_ACCURACY = 0.90


def run(*, epochs: int = 20, seed: int = 0, batch_size: int = 32, lr: float = 0.1, hidden: int = 64,
        progress: bool = True, quiet: bool = False, extension_namespace: str = "myext",
        stream: TextIO | None = None) -> int:
    """Runs the demo, writing to ``stream`` (default stdout); returns the exit code.

    ``progress``: a bar redrawn in place (only on a terminal); ``quiet``: no
    per-epoch lines either. ``extension_namespace``: the operator namespace of
    the C++ extension (one definition per process).

    Exit codes: 0 the held-out accuracy reached ``MIN_ACCURACY``; 1 it did
    not, or the C++ extension could not be built; 2 scikit-learn is missing.
    """
    out = sys.stdout if stream is None else stream
    try:
        digits = data.load_digits(seed)
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"opdispatch demo: a 2-layer MLP ({digits.n_features} -> {hidden} -> {digits.n_classes}) on "
          f"scikit-learn's handwritten digits", file=out)
    print(f"  data: {len(digits.y_train):,} training / {len(digits.y_test):,} held-out 8x8 images "
          f"(stratified split, seed {seed})", file=out)

    print(f"  C++ extension: examples/extension with its operators in namespace {extension_namespace!r} ... ",
          end="", file=out, flush=True)
    try:
        ext = extension.load_extension(extension_namespace)
    except (OSError, RuntimeError) as e:
        print("failed", file=out)
        print(f"error: the example C++ extension could not be built or loaded: {e}", file=sys.stderr)
        return 1
    how = "loaded from the cache" if ext.loaded.cached else "compiled (cached for the next runs)"
    print(f"{how} in {ext.seconds:.1f} s: {ext.loaded.path}\n"
          f"  hidden activation: {ext.relu._name} (C++ CPU and Meta kernels, autograd formula registered from "
          f"Python)", file=out)

    manual_seed(seed)
    mlp = model.MLP.create(digits.n_features, hidden, digits.n_classes, ext.relu)
    optimizer = model.SGD(mlp.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    total = data.n_batches(len(digits.y_train), batch_size)
    live = progress and not quiet and out.isatty()

    print(f"\nTraining: {epochs} epochs of {total} batches of {batch_size}, SGD (lr {lr}, momentum "
          f"{optimizer.momentum}), seed {seed}", file=out)
    train_seconds = 0.0
    with OpCounter() as counter:
        for epoch in range(1, epochs + 1):
            bar = EpochProgress(out, epoch, epochs, total, live)
            start = time.perf_counter()
            model.train_epoch(mlp, optimizer, digits, batch_size, rng, on_batch=bar.update)
            seconds = time.perf_counter() - start
            train_seconds += seconds
            if not quiet:
                bar.finish(f"  {seconds:.2f} s")

    accuracy = model.evaluate(mlp, digits.x_test, digits.y_test)
    correct = round(accuracy * len(digits.y_test))
    print(f"\nHeld-out accuracy: {accuracy:.1%} ({correct}/{len(digits.y_test)})", file=out)

    _report_operators(out, counter, epochs, train_seconds, mlp, digits, batch_size)
    _report_meta(out, mlp, batch_size)

    if accuracy < MIN_ACCURACY:
        print(f"error: the held-out accuracy {accuracy:.1%} is below {MIN_ACCURACY:.0%}; "
              "train longer (--epochs) or change --lr / --batch-size", file=sys.stderr)
        return 1
    return 0


def _report_operators(out: TextIO, counter: OpCounter, epochs: int, train_seconds: float, mlp: model.MLP,
                      digits: data.Digits, batch_size: int) -> None:
    """The counter's table, where the training time went, and what counting itself costs."""
    print(f"\nOperator calls through the dispatcher during training: {counter.calls:,} "
          f"({counter.calls // epochs:,} per epoch; {counter.nested_calls:,} of them made by other operators' "
          f"kernels), counted by a dispatch mode (TorchDispatchMode) at the Python dispatch key:", file=out)
    print("\n".join(counter.table()), file=out)
    inside = counter.self_ns / 1e9
    print(f"  total: from the mode to the kernel's return, nested calls included; self: without them.\n"
          f"  Training took {train_seconds:.2f} s, {inside:.2f} s ({inside / train_seconds:.0%}) inside operators "
          f"(kernels and dispatch below autograd); the rest is recording the autograd graph, the backward "
          f"engine and the Python loop.", file=out)

    x = _C.from_numpy(digits.x_train[:batch_size])
    labels = _C.from_numpy(digits.y_train[:batch_size])

    def forward_backward() -> None:
        model.cross_entropy(mlp(x), labels).backward()
        for p in mlp.parameters():
            p.grad = None

    plain, counted, calls = counting_overhead(forward_backward)
    print(f"  Counting overhead, measured: a forward and backward pass of one batch ({calls} operator calls) "
          f"takes {counted * 1e3:.2f} ms counted, {plain * 1e3:.2f} ms not: "
          f"{(counted - plain) / calls * 1e6:+.1f} us per call, included in the times above.", file=out)


def _report_meta(out: TextIO, mlp: model.MLP, batch_size: int) -> None:
    """The shape of every stage of the model, computed on meta tensors."""
    stages = model.meta_shapes(mlp, batch_size)
    print(f"\nMeta pass: the same model, loss and backward on 'meta' tensors (batch {batch_size}); the Meta "
          f"kernels compute shapes and dtypes, no data is allocated or read:", file=out)
    width = max(len(name) for name, _ in stages)
    for name, t in stages:
        print(f"  {name:<{width}}  {str(list(t.shape)):<9} {str(t.dtype).replace('opdispatch.', '')} "
              f"{t.device}", file=out)


__all__ = ["MIN_ACCURACY", "run"]
