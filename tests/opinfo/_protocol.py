"""The wire form of an operator call and of its result, written alike by
opdispatch's side (_cases.py) and by the PyTorch worker (_torch_worker.py,
which runs in a PyTorch venv): JSON values, arrays as dtype, shape, strides
and base64 bytes. Imports NumPy and the standard library only.

A call: {"op": "add.Tensor", "args": [...], "kwargs": {...}}, each value
plain JSON, {"tensor": array}, {"list": [...]}, {"complex": [re, im]}, or
{"attr": name} (``opdispatch.<name>`` here, ``torch.<name>`` there: dtypes,
layouts, memory formats) or {"device": "cpu"}.
A result: {"raises": {"family", "type", "message"}} or {"returns": output,
"mutated": {path: {"dtype", "shape", "values"}}, "bumped": [path, ...]}, an output being null,
{"scalar": {"type", "value"}}, {"seq": [output, ...]} or {"tensor": {"dtype",
"shape", "stride", "offset", "values", "aliases": path or null, "is": path or
null}}; a path names a tensor argument ("args[0]", "args[1][2]",
"kwargs[out]")."""
from __future__ import annotations

import abc
import base64
from typing import Any, Callable, Iterator

import numpy as np

#: The exception classes whose subclasses count as one family (NotImplementedError is a RuntimeError, as in
#: PyTorch's C++ -> Python error mapping).
ERROR_FAMILIES = (IndexError, TypeError, ValueError, RuntimeError)


def array_to_wire(x: np.ndarray) -> dict:
    """An array's dtype, shape, element strides (null if C-contiguous) and C-order bytes (base64)."""
    contiguous = x.flags.c_contiguous or x.size == 0
    return {"dtype": x.dtype.name, "shape": list(x.shape),
            "strides": None if contiguous else [s // x.itemsize for s in x.strides],
            "data": base64.b64encode(np.ascontiguousarray(x).tobytes()).decode("ascii")}


def wire_to_array(w: dict) -> np.ndarray:
    """The array of ``array_to_wire``, with its strides (a view of a buffer of its own, ``strided_buffer``)."""
    values = np.frombuffer(base64.b64decode(w["data"]), dtype=np.dtype(w["dtype"])).reshape(w["shape"]).copy()
    if w["strides"] is None:
        return values
    base = strided_buffer(values, w["strides"])
    return np.lib.stride_tricks.as_strided(base, values.shape, [s * values.itemsize for s in w["strides"]])


def strided_buffer(values: np.ndarray, strides: list[int]) -> np.ndarray:
    """A new 1-d buffer holding ``values`` at element ``strides`` from offset 0,
    its other elements NaN (floating) or 99 (so a kernel that reads past its
    strides shows in its result). Strides must be non-negative."""
    span = 1 + sum((n - 1) * s for n, s in zip(values.shape, strides))
    base = np.full(span, np.nan if values.dtype.kind in "fc" else 99, dtype=values.dtype)
    np.lib.stride_tricks.as_strided(base, values.shape, [s * values.itemsize for s in strides])[...] = values
    return base


def values_to_wire(x: np.ndarray) -> Any:
    """Nested lists of an array's values (complex numbers as [re, im])."""
    if x.dtype.kind == "c":
        return np.stack([x.real, x.imag], axis=-1).tolist()
    return x.tolist()


def wire_to_values(values: Any, dtype: str) -> np.ndarray:
    """The array of ``values_to_wire``."""
    x = np.asarray(values, dtype=np.float64 if np.dtype(dtype).kind == "c" else np.dtype(dtype))
    return (x[..., 0] + 1j * x[..., 1]).astype(dtype) if np.dtype(dtype).kind == "c" else x


def tensor_paths(args: tuple, kwargs: dict, is_tensor: Callable[[Any], bool]) -> dict[str, Any]:
    """{path: tensor} of the tensor arguments of a call, lists included."""
    def walk(x: Any, path: str) -> Iterator[tuple[str, Any]]:
        if is_tensor(x):
            yield path, x
        elif isinstance(x, (list, tuple)):
            for i, v in enumerate(x):
                yield from walk(v, f"{path}[{i}]")

    found = [p for i, x in enumerate(args) for p in walk(x, f"args[{i}]")]
    found += [p for k, x in kwargs.items() for p in walk(x, f"kwargs[{k}]")]
    return dict(found)


class Backend(abc.ABC):
    """How one framework's tensors are read, and its calls turned into wire
    results: subclassed by the opdispatch and the PyTorch side."""

    @abc.abstractmethod
    def is_tensor(self, x: Any) -> bool:
        """Whether ``x`` is a tensor of this framework."""

    @abc.abstractmethod
    def values(self, t: Any) -> np.ndarray:
        """A new array of tensor ``t``'s values."""

    @abc.abstractmethod
    def shares_storage(self, a: Any, b: Any) -> bool:
        """Whether tensors ``a`` and ``b`` have one storage (with bytes)."""

    def snapshot(self, args: tuple, kwargs: dict) -> dict[str, tuple[Any, np.ndarray, int]]:
        """{path: (tensor, values, version)} of the tensor arguments before a call."""
        return {p: (t, self.values(t), t._version) for p, t in tensor_paths(args, kwargs, self.is_tensor).items()}

    def result(self, call: Callable[[], Any], args: tuple, kwargs: dict) -> dict:
        """The wire result of ``call()``, an operator called on ``args`` and ``kwargs``."""
        before = self.snapshot(args, kwargs)
        try:
            out = call()
        except Exception as e:  # the comparison is of what raises, whatever it is
            family = next((f.__name__ for f in ERROR_FAMILIES if isinstance(e, f)), "Exception")
            message = (str(e).strip().splitlines() or [""])[0][:300]
            return {"raises": {"family": family, "type": type(e).__name__, "message": message}}
        mutated, bumped = {}, []
        for path, (t, old, version) in before.items():
            new = self.values(t)
            if new.shape != old.shape or not np.array_equal(new, old, equal_nan=new.dtype.kind in "fc"):
                mutated[path] = {"dtype": str(new.dtype), "shape": list(new.shape), "values": values_to_wire(new)}
            if t._version != version:
                bumped.append(path)
        return {"returns": self.output(out, before), "mutated": mutated, "bumped": bumped}

    def output(self, out: Any, inputs: dict[str, tuple[Any, np.ndarray, int]]) -> Any:
        if out is None:
            return None
        if isinstance(out, (list, tuple)):
            return {"seq": [self.output(o, inputs) for o in out]}
        if isinstance(out, (bool, int, float, complex)):
            value = [out.real, out.imag] if isinstance(out, complex) else out
            return {"scalar": {"type": type(out).__name__, "value": value}}
        if not self.is_tensor(out):
            return {"other": type(out).__name__}
        values = self.values(out)
        has_bytes = values.size > 0
        return {"tensor": {
            "dtype": str(out.dtype).rpartition(".")[2], "shape": list(out.shape), "stride": list(out.stride()),
            "offset": out.storage_offset(), "values": values_to_wire(values),
            "aliases": next((p for p, (t, _, _) in inputs.items() if has_bytes and self.shares_storage(out, t)),
                            None),
            "is": next((p for p, (t, _, _) in inputs.items() if out is t), None)}}
