"""A dispatch mode that counts the operators a training step calls, forward and
backward: the pattern of PyTorch's FLOP counters and operator profilers
(a TorchDispatchMode sees every call below autograd).

    python examples/dispatch_mode.py
"""
from __future__ import annotations

from collections import Counter

import opdispatch
from opdispatch.utils._python_dispatch import TorchDispatchMode


class OperatorCounter(TorchDispatchMode):
    """Counts each OpOverload called while the mode is active."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.counts[str(func)] += 1
        return func(*args, **(kwargs or {}))  # runs below the mode: the kernels compute as usual


opdispatch.manual_seed(0)
w = opdispatch.randn(4, 3, requires_grad=True)
x = opdispatch.randn(8, 4)
with OperatorCounter() as counter:
    loss = (x @ w).relu().sum()
    loss.backward()
for name, count in sorted(counter.counts.items()):
    print(f"{count}  {name}")
print("grad shape:", tuple(w.grad.shape))
