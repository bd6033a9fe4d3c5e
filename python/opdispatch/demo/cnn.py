"""The demo's convolutional network (``--model cnn``): two blocks of 3x3
convolution, batch norm, relu and 2x2 max pooling, then dropout and a
linear layer, over the digits as 1x8x8 images, written with
opdispatch.nn.functional so that every step is an ``od`` operator call
(convolution, _native_batch_norm_legit, relu, max_pool2d_with_indices,
native_dropout, addmm and their gradient operators)."""
from __future__ import annotations

import dataclasses
import math
from typing import Iterator

from .. import autograd, ones, randn, zeros
from .._tensor import Tensor
from ..nn import functional as F


@dataclasses.dataclass
class ConvBlock:
    """conv2d (3x3, padding 1) -> batch_norm -> relu -> max_pool2d (2x2): (N, C_in, H, W) -> (N, C_out, H/2, W/2).

    The convolution has no bias (batch norm's bias takes its place); the
    running statistics are buffers batch norm updates in place while training."""

    weight: Tensor
    bn_weight: Tensor
    bn_bias: Tensor
    running_mean: Tensor
    running_var: Tensor

    @classmethod
    def create(cls, c_in: int, c_out: int) -> ConvBlock:
        """He initialisation of the kernel (suited to the relu after it), batch norm's identity affine."""
        weight = (randn(c_out, c_in, 3, 3) * math.sqrt(2.0 / (c_in * 9))).requires_grad_()
        return cls(weight, ones(c_out, requires_grad=True), zeros(c_out, requires_grad=True), zeros(c_out),
                   ones(c_out))

    def parameters(self) -> list[Tensor]:
        return [self.weight, self.bn_weight, self.bn_bias]

    def stages(self, x: Tensor, training: bool) -> Iterator[tuple[str, Tensor]]:
        x = F.conv2d(x, self.weight, padding=1)
        yield "conv2d (3x3, padding 1)", x
        x = F.batch_norm(x, self.running_mean, self.running_var, self.bn_weight, self.bn_bias, training=training)
        yield "batch_norm", x
        x = F.relu(x)
        yield "relu", x
        yield "max_pool2d (2x2)", F.max_pool2d(x, 2)

    def to(self, device: str) -> ConvBlock:
        with autograd.no_grad():
            params = [p.to(device).requires_grad_() for p in self.parameters()]
            return ConvBlock(params[0], params[1], params[2], self.running_mean.to(device),
                             self.running_var.to(device))


class CNN:
    """input (N, 64) as (N, 1, 8, 8) -> ConvBlock(1, c1) -> ConvBlock(c1, c2)
    -> flatten (N, c2 * 2 * 2) -> dropout -> linear -> logits (N, n_classes).

    ``training`` (set by train()/eval()): batch norm uses the batch's
    statistics and updates the running ones, and dropout drops; in
    evaluation batch norm uses the running statistics and dropout passes
    its input through."""

    def __init__(self, blocks: list[ConvBlock], weight: Tensor, bias: Tensor, dropout: float) -> None:
        self.blocks = blocks
        self.weight = weight
        self.bias = bias
        self.dropout = dropout
        self.training = True

    @classmethod
    def create(cls, n_classes: int, channels: tuple[int, int] = (16, 32), dropout: float = 0.25) -> CNN:
        blocks = [ConvBlock.create(1, channels[0]), ConvBlock.create(channels[0], channels[1])]
        n_in = channels[1] * 2 * 2
        weight = (randn(n_classes, n_in) * math.sqrt(1.0 / n_in)).requires_grad_()
        return cls(blocks, weight, zeros(n_classes, requires_grad=True), dropout)

    @property
    def n_in(self) -> int:
        """The number of input features (the pixels of an 8x8 image)."""
        return 64

    def describe(self) -> str:
        c1, c2 = (b.weight.shape[0] for b in self.blocks)
        return (f"a convolutional network (1x8x8 -> [conv 3x3, batch norm, relu, max pool 2x2] x 2 ({c1}, {c2} "
                f"channels) -> dropout {self.dropout} -> linear {c2 * 4} -> {self.weight.shape[0]})")

    def train(self, mode: bool = True) -> CNN:
        self.training = mode
        return self

    def eval(self) -> CNN:
        return self.train(False)

    def named_parameters(self) -> list[tuple[str, Tensor]]:
        names = ("conv{}.weight", "bn{}.weight", "bn{}.bias")
        named = [(name.format(i), p) for i, block in enumerate(self.blocks, 1)
                 for name, p in zip(names, block.parameters())]
        return named + [("linear.weight", self.weight), ("linear.bias", self.bias)]

    def parameters(self) -> list[Tensor]:
        return [p for _, p in self.named_parameters()]

    def layers(self, x: Tensor) -> Iterator[tuple[str, Tensor]]:
        """Yields each stage of the forward pass as ``(description, tensor)``, the logits last."""
        yield "input", x
        x = x.view(x.shape[0], 1, 8, 8)
        yield "as images (view)", x
        for i, block in enumerate(self.blocks, 1):
            for name, stage in block.stages(x, self.training):
                yield f"block {i}: {name}", stage
            x = stage
        x = x.flatten(1)
        yield "flatten", x
        x = F.dropout(x, self.dropout, self.training)
        yield f"dropout (p {self.dropout})", x
        yield "logits (linear)", F.linear(x, self.weight, self.bias)

    def __call__(self, x: Tensor) -> Tensor:
        """The logits (N, n_classes) of inputs (N, 64)."""
        *_, (_, logits) = self.layers(x)
        return logits

    def to(self, device: str) -> CNN:
        """A copy of the model on ``device`` (e.g. "meta": shapes only)."""
        with autograd.no_grad():
            copy = CNN([b.to(device) for b in self.blocks], self.weight.to(device).requires_grad_(),
                       self.bias.to(device).requires_grad_(), self.dropout)
        return copy.train(self.training)
