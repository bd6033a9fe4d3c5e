"""A device plugin in Python: a PrivateUse1 backend named "npy" whose tensors
keep their values in a NumPy array, with kernels for the operators it
supports registered at the PrivateUse1 key. Factories, .to("npy") and back,
arithmetic and autograd then work on the new device, and an operator the
plugin does not implement fails with an error naming the device.

The pattern is PyTorch's own Python backend test
(test/test_privateuseone_python_backend.py, after albanD/subclass_zoo's
new_device.py) with the name map applied.

Run: python examples/device_plugin.py
"""
from __future__ import annotations

from typing import Any

import numpy as np

import opdispatch
from opdispatch import _C
from opdispatch.library import impl

opdispatch.utils.rename_privateuse1_backend("npy")


class NpyTensor(opdispatch.Tensor):
    """A tensor on the npy device: its values are the NumPy array ``raw_data``."""

    raw_data: np.ndarray

    def __repr__(self) -> str:
        return f"NpyTensor({self.raw_data})"


def wrap(values: Any) -> NpyTensor:
    """An npy tensor holding ``values`` (an array or a NumPy scalar)."""
    array = np.ascontiguousarray(values)
    dtype = opdispatch.from_numpy(array[()] if array.ndim == 0 else array[:0]).dtype
    strides = [s // array.itemsize for s in array.strides]
    t = _C.empty_strided(array.shape, strides, dtype, "npy")
    t.__class__ = NpyTensor  # the device tensor gets the plugin's Python class, as in PyTorch's test
    t.raw_data = array
    return t


def unwrap(t: opdispatch.Tensor) -> np.ndarray:
    return t.raw_data


# --- the plugin's kernels, each registered for the npy device (PrivateUse1) ---------------------------


@impl("od::empty.memory_format", "PrivateUse1")
def empty(size, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return wrap(np.empty(size, (dtype or opdispatch.float32).to_numpy()))


@impl("od::copy_", "PrivateUse1")
def copy_(dst, src, non_blocking=False):
    """cpu -> npy, npy -> cpu and npy -> npy: the only way values move."""
    values = unwrap(src) if src.device.type == "npy" else src.numpy()
    if dst.device.type == "npy":
        dst.raw_data = np.array(values, dtype=dst.raw_data.dtype)
    else:
        np.copyto(dst.numpy(), values, casting="unsafe")
    return dst


@impl("od::add.Tensor", "PrivateUse1")
def add(a, b, *, alpha=1):
    return wrap(unwrap(a) + alpha * unwrap(b))


@impl("od::mul.Tensor", "PrivateUse1")
def mul(a, b):
    return wrap(unwrap(a) * unwrap(b))


@impl("od::sum", "PrivateUse1")
def sum_(a, *, dtype=None):
    return wrap(unwrap(a).sum(dtype=None if dtype is None else dtype.to_numpy()))


@impl("od::ones_like", "PrivateUse1")
def ones_like(a, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return wrap(np.ones_like(unwrap(a), dtype=None if dtype is None else dtype.to_numpy()))


@impl("od::view", "PrivateUse1")
def view(a, size):
    return wrap(unwrap(a).reshape(size))


@impl("od::reshape", "PrivateUse1")
def reshape(a, shape):
    return wrap(unwrap(a).reshape(shape))


@impl("od::expand", "PrivateUse1")
def expand(a, size, *, implicit=False):
    return wrap(np.broadcast_to(unwrap(a), size))


def main() -> None:
    a = opdispatch.tensor([[1.0, 2.0], [3.0, 4.0]]).to("npy")
    b = opdispatch.ones(2, 2, device="npy")  # made on cpu, then the plugin's empty and copy_
    print("device:", a.device, "| class:", type(a).__name__)
    print("a + b on npy:", (a + b).raw_data.tolist())

    a.requires_grad_()
    loss = (a * a).sum()
    loss.backward()
    print("d(sum(a*a))/da:", a.grad.raw_data.tolist(), "on", a.grad.device)
    print("back on cpu:", (a + a).to("cpu").tolist())

    try:
        a.sin()
    except NotImplementedError as e:
        print("not implemented:", str(e).splitlines()[0])


if __name__ == "__main__":
    main()
