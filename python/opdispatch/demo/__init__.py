"""``python -m opdispatch demo``: trains a 2-layer MLP (``--model cnn``: a
small convolutional network) on scikit-learn's handwritten digits with every
forward and backward step dispatched (``od`` operators, plus ``relu`` from
the example C++ extension, compiled on first use, in the MLP), counts and
times the operator calls inside the dispatcher, and runs the model once more
on ``meta`` tensors to show its shapes.

Modules: data (the digits, batches), extension (the C++ operator and its
autograd formula), model (MLP, SGD, train_epoch, evaluate, meta_shapes),
cnn (the convolutional network, on opdispatch.nn.functional), opcount (the
dispatcher-level op counter), progress (the progress bar).
"""
from __future__ import annotations

import contextlib
import sys
import time
from typing import Iterator, TextIO

import numpy as np

from .. import _C, manual_seed
from . import cnn, data, extension, model
from .opcount import OpCounter, counting_overhead
from .progress import EpochProgress

#: The models ``run`` trains (the first is the default).
MODELS = ("mlp", "cnn")
#: The held-out accuracy each model must reach for the demo to succeed.
MIN_ACCURACY = {"mlp": 0.90, "cnn": 0.97}
#: Defaults per model: epochs and learning rate.
DEFAULTS = {"mlp": (20, 0.1), "cnn": (12, 0.05)}


def run(*, model_name: str = "mlp", epochs: int | None = None, seed: int = 0, batch_size: int = 32,
        lr: float | None = None, hidden: int = 64, progress: bool = True, quiet: bool = False,
        extension_namespace: str = "myext", stream: TextIO | None = None) -> int:
    """Runs the demo, writing to ``stream`` (default stdout); returns the exit code.

    ``model_name``: "mlp" (input -> ``hidden`` -> 10, relu from the C++
    extension) or "cnn" (cnn.CNN, built-in operators only); ``epochs`` and
    ``lr`` default per model (DEFAULTS). ``progress``: a bar redrawn in
    place (only on a terminal); ``quiet``: no per-epoch lines either.
    ``extension_namespace``: the operator namespace of the C++ extension (one
    definition per process). NumPy's BLAS runs on one thread while the demo
    trains (threadpoolctl, which scikit-learn brings): the kernels' small
    products only wait on a second thread, ten times over for the CNN on a
    busy machine.

    Exit codes: 0 the held-out accuracy reached ``MIN_ACCURACY[model_name]``;
    1 it did not, or the C++ extension could not be built; 2 scikit-learn is
    missing. ValueError for an unknown ``model_name``.
    """
    if model_name not in MODELS:
        raise ValueError(f"unknown demo model {model_name!r}: choose one of {', '.join(MODELS)}")
    epochs = DEFAULTS[model_name][0] if epochs is None else epochs
    lr = DEFAULTS[model_name][1] if lr is None else lr
    out = sys.stdout if stream is None else stream
    try:
        digits = data.load_digits(seed)
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    net = _create(model_name, digits, hidden, extension_namespace, seed, out)
    if net is None:
        return 1
    optimizer = model.SGD(net.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    total = data.n_batches(len(digits.y_train), batch_size)
    live = progress and not quiet and out.isatty()

    print(f"\nTraining: {epochs} epochs of {total} batches of {batch_size}, SGD (lr {lr}, momentum "
          f"{optimizer.momentum}), seed {seed}", file=out)
    train_seconds = 0.0
    with _one_blas_thread(), OpCounter() as counter:
        for epoch in range(1, epochs + 1):
            bar = EpochProgress(out, epoch, epochs, total, live)
            start = time.perf_counter()
            model.train_epoch(net, optimizer, digits, batch_size, rng, on_batch=bar.update)
            seconds = time.perf_counter() - start
            train_seconds += seconds
            if not quiet:
                bar.finish(f"  {seconds:.2f} s")

    with _one_blas_thread():
        accuracy = model.evaluate(net, digits.x_test, digits.y_test)
    correct = round(accuracy * len(digits.y_test))
    print(f"\nHeld-out accuracy: {accuracy:.1%} ({correct}/{len(digits.y_test)})", file=out)

    with _one_blas_thread():
        _report_operators(out, counter, epochs, train_seconds, net, digits, batch_size)
    _report_meta(out, net, batch_size)

    minimum = MIN_ACCURACY[model_name]
    if accuracy < minimum:
        print(f"error: the held-out accuracy {accuracy:.1%} is below {minimum:.0%}; "
              "train longer (--epochs) or change --lr / --batch-size", file=sys.stderr)
        return 1
    return 0


def _create(model_name: str, digits: data.Digits, hidden: int, extension_namespace: str, seed: int, out: TextIO
            ) -> model.Model | None:
    """The model to train, described on ``out``; None (after printing why) if the C++ extension failed."""
    if model_name == "cnn":
        manual_seed(seed)
        net = cnn.CNN.create(digits.n_classes)
        _describe(out, net, digits, seed)
        print("  every layer: opdispatch.nn.functional over the built-in od operators (CPU and Meta kernels, "
              "autograd formulas)", file=out)
        return net
    print(f"opdispatch demo: {model.MLP.describe_shape(digits.n_features, hidden, digits.n_classes)} on "
          f"scikit-learn's handwritten digits", file=out)
    _describe_data(out, digits, seed)
    print(f"  C++ extension: examples/extension with its operators in namespace {extension_namespace!r} ... ",
          end="", file=out, flush=True)
    try:
        ext = extension.load_extension(extension_namespace)
    except (OSError, RuntimeError) as e:
        print("failed", file=out)
        print(f"error: the example C++ extension could not be built or loaded: {e}", file=sys.stderr)
        return None
    how = "loaded from the cache" if ext.loaded.cached else "compiled (cached for the next runs)"
    print(f"{how} in {ext.seconds:.1f} s: {ext.loaded.path}\n"
          f"  hidden activation: {ext.relu._name} (C++ CPU and Meta kernels, autograd formula registered from "
          f"Python)", file=out)
    manual_seed(seed)
    return model.MLP.create(digits.n_features, hidden, digits.n_classes, ext.relu)


def _describe(out: TextIO, net: model.Model, digits: data.Digits, seed: int) -> None:
    print(f"opdispatch demo: {net.describe()} on scikit-learn's handwritten digits", file=out)
    _describe_data(out, digits, seed)


def _describe_data(out: TextIO, digits: data.Digits, seed: int) -> None:
    print(f"  data: {len(digits.y_train):,} training / {len(digits.y_test):,} held-out 8x8 images "
          f"(stratified split, seed {seed})", file=out)


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """NumPy's BLAS limited to one thread inside the block (see run)."""
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency: present whenever the demo runs

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _report_operators(out: TextIO, counter: OpCounter, epochs: int, train_seconds: float, net: model.Model,
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

    net.train()

    def forward_backward() -> None:
        model.cross_entropy(net(x), labels).backward()
        for p in net.parameters():
            p.grad = None

    plain, counted, calls = counting_overhead(forward_backward)
    print(f"  Counting overhead, measured: a forward and backward pass of one batch ({calls} operator calls) "
          f"takes {counted * 1e3:.2f} ms counted, {plain * 1e3:.2f} ms not: "
          f"{(counted - plain) / calls * 1e6:+.1f} us per call, included in the times above.", file=out)


def _report_meta(out: TextIO, net: model.Model, batch_size: int) -> None:
    """The shape of every stage of the model, computed on meta tensors."""
    stages = model.meta_shapes(net, batch_size)
    print(f"\nMeta pass: the same model, loss and backward on 'meta' tensors (batch {batch_size}); the Meta "
          f"kernels compute shapes and dtypes, no data is allocated or read:", file=out)
    width = max(len(name) for name, _ in stages)
    shape_width = max(9, *(len(str(list(t.shape))) for _, t in stages))
    for name, t in stages:
        print(f"  {name:<{width}}  {str(list(t.shape)):<{shape_width}} {str(t.dtype).replace('opdispatch.', '')} "
              f"{t.device}", file=out)


__all__ = ["DEFAULTS", "MIN_ACCURACY", "MODELS", "run"]
