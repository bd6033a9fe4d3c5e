"""Small helpers the Python test files share: NumPy-backed tensors and key sets by name."""
from __future__ import annotations

import numpy as np

import opdispatch
from opdispatch import _C


def tensor(values, dtype=np.float32) -> opdispatch.Tensor:
    """A tensor over a new NumPy array of ``values`` (float32 unless ``dtype`` says otherwise)."""
    return opdispatch.from_numpy(np.asarray(values, dtype=dtype))


def keys(*names: str) -> _C.DispatchKeySet:
    """The DispatchKeySet of the runtime keys called ``names``."""
    out = _C.DispatchKeySet(_C.DispatchKey.Undefined)
    for n in names:
        out = out | _C.DispatchKeySet(getattr(_C.DispatchKey, n))
    return out


def as_numpy(t: opdispatch.Tensor) -> np.ndarray:
    """``t``'s data as a NumPy array, also for a tensor that requires grad."""
    return t.detach().numpy()
