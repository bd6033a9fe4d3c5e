"""Copies: clone (a new contiguous tensor with the same values)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _C
from ._numpy import arr, meta_like, tensor
from ._registry import defop


def _clone_cpu(self: _C.TensorBase, *, memory_format: Any = None) -> _C.TensorBase:
    return tensor(np.array(arr(self), order="C", copy=True))


def _clone_meta(self: _C.TensorBase, *, memory_format: Any = None) -> _C.TensorBase:
    return meta_like(self.shape, self.dtype)


clone = defop("clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", cpu=_clone_cpu, meta=_clone_meta,
              backward=lambda ctx, grad: grad)
