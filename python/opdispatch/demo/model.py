"""The demo's models and training loop: a 2-layer MLP whose every forward and
backward step is an operator call through the dispatcher (``od`` operators
and the C++ extension's ``relu``; the convolutional network is in cnn.py),
SGD with momentum as in-place ``od`` operators, evaluation, and a pass on
``meta`` tensors that computes shapes only. Both models follow ``Model``."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Iterator, Optional, Protocol

import numpy as np

from .. import _C, autograd, empty, float32, int64, nll_loss, randn, zeros, zeros_like
from .._tensor import Tensor
from . import data

Activation = Callable[[Tensor], Tensor]


class Model(Protocol):
    """What the training loop, evaluation and the meta pass need of a model."""

    @property
    def n_in(self) -> int:
        """The number of input features."""

    def describe(self) -> str:
        """The model in one phrase, for the demo's first line."""

    def train(self, mode: bool = True) -> Model:
        """Sets training (True) or evaluation mode; returns the model."""

    def named_parameters(self) -> list[tuple[str, Tensor]]:
        """(name, leaf) of every parameter SGD updates."""

    def parameters(self) -> list[Tensor]:
        """The parameters SGD updates, in named_parameters' order."""

    def layers(self, x: Tensor) -> Iterator[tuple[str, Tensor]]:
        """Each stage of the forward pass as (description, tensor), the logits last."""

    def __call__(self, x: Tensor) -> Tensor:
        """The logits (N, n_classes) of inputs (N, n_in)."""

    def to(self, device: str) -> Model:
        """A copy of the model on ``device``."""


@dataclasses.dataclass
class Linear:
    """``x @ weight + bias``: weight (in, out) with He initialisation (suited
    to a ReLU after it), bias (out,) zeros; both leaves that require grad."""

    weight: Tensor
    bias: Tensor

    @classmethod
    def create(cls, n_in: int, n_out: int) -> Linear:
        """New parameters from opdispatch's generator (see opdispatch.manual_seed)."""
        weight = (randn(n_in, n_out) * math.sqrt(2.0 / n_in)).requires_grad_()
        return cls(weight, zeros(n_out, requires_grad=True))

    def __call__(self, x: Tensor) -> Tensor:
        return x.mm(self.weight) + self.bias  # od::mm, od::add.Tensor

    def to(self, device: str) -> Linear:
        """A copy on ``device``, made of new leaves that require grad."""
        with autograd.no_grad():
            return Linear(self.weight.to(device).requires_grad_(), self.bias.to(device).requires_grad_())


class MLP:
    """input (N, n_in) -> Linear -> activation -> Linear -> logits (N, n_classes).

    ``activation`` is the hidden layer's non-linearity, an operator (or
    function) taking and returning a tensor; the demo passes the C++
    extension's ``myext::relu``.
    """

    def __init__(self, hidden: Linear, output: Linear, activation: Activation) -> None:
        self.hidden = hidden
        self.output = output
        self.activation = activation

    @classmethod
    def create(cls, n_in: int, n_hidden: int, n_classes: int, activation: Activation) -> MLP:
        return cls(Linear.create(n_in, n_hidden), Linear.create(n_hidden, n_classes), activation)

    @property
    def n_in(self) -> int:
        n: int = self.hidden.weight.shape[0]
        return n

    @staticmethod
    def describe_shape(n_in: int, n_hidden: int, n_classes: int) -> str:
        return f"a 2-layer MLP ({n_in} -> {n_hidden} -> {n_classes})"

    def describe(self) -> str:
        return self.describe_shape(self.n_in, self.hidden.weight.shape[1], self.output.weight.shape[1])

    def train(self, mode: bool = True) -> MLP:
        """The MLP computes the same in training and evaluation (no dropout, no batch statistics)."""
        return self

    def named_parameters(self) -> list[tuple[str, Tensor]]:
        return list(zip(("W1", "b1", "W2", "b2"), self.parameters()))

    def parameters(self) -> list[Tensor]:
        return [self.hidden.weight, self.hidden.bias, self.output.weight, self.output.bias]

    def layers(self, x: Tensor) -> Iterator[tuple[str, Tensor]]:
        """Yields each stage of the forward pass as ``(description, tensor)``, the logits last."""
        yield "input", x
        pre = self.hidden(x)
        yield "hidden, pre-activation (x @ W1 + b1)", pre
        post = self.activation(pre)
        yield f"hidden, post-activation ({self.activation.__qualname__})", post
        yield "logits (h @ W2 + b2)", self.output(post)

    def __call__(self, x: Tensor) -> Tensor:
        """The logits (N, n_classes) of inputs (N, n_in)."""
        *_, (_, logits) = self.layers(x)
        return logits

    def to(self, device: str) -> MLP:
        """A copy of the model on ``device`` (e.g. "meta": shapes only)."""
        return MLP(self.hidden.to(device), self.output.to(device), self.activation)


def cross_entropy(logits: Tensor, labels: Tensor) -> Tensor:
    """Mean negative log-likelihood of the labels: od::log_softmax.int, od::nll_loss."""
    return nll_loss(logits.log_softmax(1), labels)


class SGD:
    """Stochastic gradient descent with momentum (PyTorch's torch.optim.SGD
    update: ``buf = momentum * buf + grad; p -= lr * buf``), in place, with
    ``od`` operators under no_grad."""

    def __init__(self, params: list[Tensor], lr: float, momentum: float = 0.9) -> None:
        self.params = params
        self.lr = lr
        self.momentum = momentum
        self.buffers = [zeros_like(p) for p in params]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        with autograd.no_grad():
            for p, buf in zip(self.params, self.buffers):
                buf.mul_(self.momentum).add_(p.grad)  # od::mul_.Tensor, od::add_.Tensor
                p.sub_(buf, alpha=self.lr)  # od::sub_.Tensor


def train_step(model: Model, optimizer: SGD, x: Tensor, labels: Tensor) -> float:
    """One forward, backward and update on a batch; returns the batch's loss."""
    loss = cross_entropy(model(x), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss)


def train_epoch(model: Model, optimizer: SGD, digits: data.Digits, batch_size: int, rng: np.random.Generator,
                on_batch: Optional[Callable[[int, float], None]] = None) -> float:
    """One pass over the training set in shuffled mini-batches, the model in
    training mode; returns the mean training loss. ``on_batch(batches_done,
    mean_loss_so_far)`` is called after each batch (the progress bar)."""
    model.train()
    total, seen = 0.0, 0
    batches = data.batches(digits.x_train, digits.y_train, batch_size, rng)
    for i, (x, labels) in enumerate(batches, 1):
        total += train_step(model, optimizer, x, labels) * x.shape[0]
        seen += x.shape[0]
        if on_batch is not None:
            on_batch(i, total / seen)
    return total / seen


def evaluate(model: Model, x: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of ``x`` classified as ``labels`` (argmax of the logits),
    computed with ``od`` operators in evaluation mode (the model is left in it)."""
    model.train(False)
    with autograd.no_grad():
        predicted = model(_C.from_numpy(x)).argmax(1)
        correct = int((predicted == _C.from_numpy(labels)).sum())
    return correct / len(labels)


def meta_shapes(model: Model, batch_size: int) -> list[tuple[str, Tensor]]:
    """Runs the model (in training mode), its loss and backward on ``meta``
    tensors: every operator's Meta kernel computes the output's shape and
    dtype and no data exists. Returns ``(description, tensor)`` for each
    stage of the forward pass, the loss, and each parameter's gradient."""
    meta = model.to("meta").train()
    x = empty(batch_size, model.n_in, dtype=float32, device="meta")
    labels = empty(batch_size, dtype=int64, device="meta")
    stages = list(meta.layers(x))
    loss = cross_entropy(stages[-1][1], labels)
    stages.append(("loss (log_softmax, nll_loss)", loss))
    loss.backward()
    for name, p in meta.named_parameters():
        grad = p.grad
        assert grad is not None  # backward reached every parameter
        stages.append((f"gradient of {name}", grad))
    return stages
