"""opdispatch.testing: assert_close, comparing tensors (or array-likes) within
dtype-dependent tolerances. PyTorch: torch.testing.assert_close."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import _C

__all__ = ["assert_close"]


def __dir__() -> list[str]:
    return sorted(__all__)

#: Default (rtol, atol) per dtype; exact for integers and bools. PyTorch: torch/testing/_comparison.py.
_TOLERANCES = {
    "float16": (1e-3, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _describe(x: Any) -> tuple[tuple[int, ...], Optional[Any], Optional[str]]:
    """(shape, dtype, device) of a tensor; of anything else, its NumPy shape and no dtype or device."""
    if isinstance(x, _C.TensorBase):
        return tuple(x.shape), x.dtype, str(x.device)
    return np.shape(x), None, None


def _values(x: Any) -> np.ndarray:
    return x.numpy(force=True) if isinstance(x, _C.TensorBase) else np.asarray(x)


def _index(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def assert_close(actual: Any, expected: Any, *, rtol: Optional[float] = None, atol: Optional[float] = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: Optional[str] = None) -> None:
    """Asserts ``|actual - expected| <= atol + rtol * |expected|`` elementwise.

    ``actual`` / ``expected``: tensors, or array-likes and numbers (a
    non-tensor is compared by value only). Shapes must match, and for two
    tensors the devices and (with ``check_dtype``) the dtypes. ``rtol`` and
    ``atol`` are given together or not at all; the defaults depend on the
    dtype (float32: 1.3e-6 and 1e-5; float64: 1e-7 and 1e-7; float16: 1e-3
    and 1e-5; exact for integers and bools). NaNs are equal only with
    ``equal_nan``. Raises AssertionError naming the mismatched attribute, or
    the number of mismatched elements and the greatest absolute and relative
    differences with their indices; ValueError if only one of rtol/atol is
    given. Meta tensors are compared by metadata only.
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got rtol={rtol} and "
                         f"atol={atol}")
    a_shape, a_dtype, a_device = _describe(actual)
    e_shape, e_dtype, e_device = _describe(expected)
    if a_shape != e_shape:
        raise AssertionError(f"The values for attribute 'shape' do not match: {a_shape} != {e_shape}.")
    if a_device is not None and e_device is not None and a_device != e_device:
        raise AssertionError(f"The values for attribute 'device' do not match: {a_device} != {e_device}.")
    if check_dtype and a_dtype is not None and e_dtype is not None and a_dtype != e_dtype:
        raise AssertionError(f"The values for attribute 'dtype' do not match: {a_dtype!r} != {e_dtype!r}.")
    if a_device == "meta":
        return  # meta tensors have metadata only
    a, e = _values(actual), _values(expected)
    if rtol is None or atol is None:  # both, checked above
        rtol, atol = _TOLERANCES.get(np.result_type(a, e).name, (0.0, 0.0))
    a64 = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64)
    e64 = e.astype(a64.dtype)
    with np.errstate(all="ignore"):
        diff = np.abs(a64 - e64)
        allowed = atol + rtol * np.abs(e64)
        close = (diff <= allowed) | (a64 == e64)
        if equal_nan:
            close |= np.isnan(a64) & np.isnan(e64)
        if close.all():
            return
        rel = diff / np.abs(e64)
    bad = ~close
    n_bad, total = int(bad.sum()), a.size
    abs_at = int(np.argmax(np.where(bad, np.nan_to_num(diff, nan=np.inf), -1.0)))
    rel_at = int(np.argmax(np.where(bad, np.nan_to_num(rel, nan=np.inf), -1.0)))
    kind = "Scalars" if a.ndim == 0 else "Tensor-likes"
    text = (
        f"{kind} are not close!\n\n"
        f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.1f}%)\n"
        f"Greatest absolute difference: {diff.flat[abs_at]} at index {_index(abs_at, a.shape)} "
        f"(up to {atol} allowed)\n"
        f"Greatest relative difference: {rel.flat[rel_at]} at index {_index(rel_at, a.shape)} "
        f"(up to {rtol} allowed)"
    )
    raise AssertionError(text if msg is None else f"{msg}\n\n{text}")
