"""A wrapper tensor subclass: a tensor that keeps its values in float64 and
reports every result rounded to float32 precision, computing through the
dispatcher on the inner tensor. The pattern of PyTorch's wrapper subclasses
(_make_wrapper_subclass + __torch_dispatch__ unwrapping and rewrapping).

    python examples/wrapper_subclass.py
"""
from __future__ import annotations

import opdispatch
from opdispatch.utils._pytree import tree_map


class HighPrecision(opdispatch.Tensor):
    """Metadata says float32; the values live in ``inner``, a float64 tensor."""

    @staticmethod
    def __new__(cls, inner: opdispatch.Tensor) -> "HighPrecision":
        wrapper = opdispatch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=opdispatch.float32)
        wrapper.inner = inner
        return wrapper

    def __repr__(self) -> str:
        return f"HighPrecision({self.inner.to(opdispatch.float32)})"

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda a: a.inner if isinstance(a, HighPrecision) else a  # noqa: E731
        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        wrap = lambda o: HighPrecision(o) if isinstance(o, opdispatch.Tensor) else o  # noqa: E731
        return tree_map(wrap, out)


third = HighPrecision(opdispatch.tensor([1.0, 2.0], dtype=opdispatch.float64)) / 3
print(third)
print("sum of three thirds:", (third + third + third).inner.numpy())
print("dtype seen by users:", third.dtype, "| inner dtype:", third.inner.dtype)
