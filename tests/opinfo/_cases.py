"""The cases the OpInfo harness runs, each an op_db sample or a variant of it
derived here (its floating arrays cast to each of ``OpInfo.dtypes``; its
arrays non-contiguous, or column-major), with what the PyTorch comparison
needs: the call in wire form (_protocol.py), the digest that keys its stored
reference, the result of running it on opdispatch, and the comparison of two
results."""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

import opdispatch
from op_db import DEVICE, Const, OpInfo, Sample, instantiate
from opinfo._protocol import Backend, array_to_wire, wire_to_values

#: Base names of operators whose outputs PyTorch leaves uninitialized: their values are not compared.
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "resize_"}

#: (rtol, atol) per result dtype: torch.testing.assert_close's defaults. Integers and bool compare exactly.
TOLERANCES = {"float16": (1e-3, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
              "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}

NONCONTIGUOUS = "noncontiguous"
COLUMN_MAJOR = "column_major"
#: The variant of the cases made of ``OpInfo.error_samples`` (as given: no dtype or layout variants).
ERROR = "error"


@dataclass(frozen=True)
class Case:
    """``info``'s sample number ``index``, as given (``variant`` "") or
    derived (a dtype's name, or a layout of ``LAYOUTS``): ``sample``."""

    info: OpInfo
    index: int
    variant: str
    sample: Sample

    @property
    def id(self) -> str:
        """"add.Tensor#2" for a sample as given, "add.Tensor#2/float32" for a variant, "add.Tensor#error0" for
        an error sample."""
        if self.variant == ERROR:
            return f"{self.info.name}#error{self.index}"
        return f"{self.info.name}#{self.index}" + (f"/{self.variant}" if self.variant else "")

    def call(self) -> dict:
        """The call in wire form. Raises TypeError for an argument with no wire form."""
        def encode(x: Any) -> Any:
            if isinstance(x, Const):
                x = x.array
            if isinstance(x, np.ndarray):
                return {"tensor": array_to_wire(x)}
            if isinstance(x, np.generic):
                x = x.item()
            if isinstance(x, (list, tuple)):
                return {"list": [encode(v) for v in x]}
            if x is DEVICE:
                return {"device": "cpu"}
            if isinstance(x, complex):
                return {"complex": [x.real, x.imag]}
            if x is None or isinstance(x, (bool, int, float, str)):
                return x
            if isinstance(x, opdispatch.device):
                return {"device": str(x)}
            name = repr(x).removeprefix("opdispatch.")
            if getattr(opdispatch, name, None) is x:  # dtypes, layouts, memory formats: torch.<name> there
                return {"attr": name}
            raise TypeError(f"{self.id}: the PyTorch comparison cannot pass {x!r} ({type(x).__name__}); give it a "
                            f"wire form in tests/opinfo/_cases.py (Case.call) and _torch_worker.py (decode)")

        return {"op": self.info.name, "args": [encode(x) for x in self.sample.args],
                "kwargs": {k: encode(v) for k, v in self.sample.kwargs.items()}}

    @property
    def key(self) -> str:
        """The operator and a digest of the call's contents (values, dtypes, shapes, strides, other arguments):
        what a stored reference is filed under."""
        text = json.dumps(self.call(), sort_keys=True, allow_nan=True)
        return f"{self.info.name} {hashlib.sha256(text.encode()).hexdigest()[:16]}"


def _map_arrays(sample: Sample, fn: Callable[[np.ndarray], np.ndarray]) -> Sample:
    def walk(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            return fn(x)
        if isinstance(x, Const):
            return Const(fn(x.array))
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return Sample(tuple(walk(x) for x in sample.args), {k: walk(v) for k, v in sample.kwargs.items()})


def _arrays(sample: Sample) -> list[np.ndarray]:
    found: list[np.ndarray] = []
    _map_arrays(sample, lambda x: found.append(x) or x)
    return found


def spread(x: np.ndarray) -> np.ndarray:
    """``x``'s values at every other element of a buffer twice as long in the
    last dimension: the same values, strides not those of a contiguous
    array (0-d arrays and arrays of fewer than two elements as they are)."""
    if x.ndim == 0 or x.size < 2:
        return x
    buffer = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    view = buffer[..., ::2]
    view[...] = x
    return view


def column_major(x: np.ndarray) -> np.ndarray:
    """``x``'s values laid out in reverse dimension order (the transpose of a
    contiguous array: strides ascending), for arrays with two or more
    dimensions of size > 1 (others as they are). PyTorch's outputs follow
    such a layout where its strides are a contract (TensorIterator's output
    strides, *_like and clone with preserve_format)."""
    if sum(n > 1 for n in x.shape) < 2:
        return x
    return np.asfortranarray(x)


#: The layout variants: name -> how a sample's arrays are changed (an array it returns unchanged keeps its layout).
LAYOUTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {NONCONTIGUOUS: spread, COLUMN_MAJOR: column_major}


def cases(info: OpInfo) -> list[Case]:
    """The cases of ``info``: each sample as given; for each dtype of
    ``info.dtypes``, the sample with its floating arrays cast to it (if it
    has floating arrays not of that dtype); and for each of ``LAYOUTS``, the
    sample with its arrays in that layout (if any changes); then each of
    ``info.error_samples`` as given (variant ``ERROR``)."""
    out = []
    for i, sample in enumerate(info.samples):
        out.append(Case(info, i, "", sample))
        floating = [x for x in _arrays(sample) if x.dtype.kind == "f"]
        for dtype in info.dtypes:
            target = np.dtype(dtype.to_numpy())
            if any(x.dtype != target for x in floating):
                cast = _map_arrays(sample, lambda x, t=target: x.astype(t) if x.dtype.kind == "f" else x)
                out.append(Case(info, i, target.name, cast))
        for layout, change in LAYOUTS.items():
            if any(change(x) is not x for x in _arrays(sample)):
                out.append(Case(info, i, layout, _map_arrays(sample, change)))
    return out + [Case(info, i, ERROR, sample) for i, sample in enumerate(info.error_samples)]


class OpdispatchBackend(Backend):
    def is_tensor(self, x: Any) -> bool:
        return isinstance(x, opdispatch.Tensor)

    def values(self, t: Any) -> np.ndarray:
        return np.array(t.numpy(force=True), copy=True)

    def shares_storage(self, a: Any, b: Any) -> bool:
        return bool(a._shares_storage(b))


def run_od(case: Case) -> dict:
    """The wire result of the case's od operator on cpu."""
    args, kwargs = instantiate(case.sample, "cpu")
    return OpdispatchBackend().result(lambda: case.info.op(*args, **kwargs), args, kwargs)


def values_are_specified(info: OpInfo) -> bool:
    """False for operators whose output values PyTorch does not fix: random
    (tagged nondeterministic_seeded) and uninitialized (``UNINITIALIZED``)."""
    base, _, overload = info.name.partition(".")
    try:
        tags = getattr(getattr(opdispatch.ops.od, base), overload or "default").tags
    except AttributeError:  # no such od operator: its cases raise, and test_meta names the entry
        return True
    return base not in UNINITIALIZED and opdispatch.Tag.nondeterministic_seeded not in tags


def as_reference(info: OpInfo, result: dict) -> dict:
    """PyTorch's ``result`` as the comparison takes it: the values of its
    tensors (outputs and changed inputs) None for an operator whose values
    are not specified (``values_are_specified``), so they are not compared
    (and stored references stay the same from run to run)."""
    if values_are_specified(info) or "returns" not in result:
        return result

    def strip(out: Any) -> Any:
        if out is None or "scalar" in out or "other" in out:
            return out
        if "seq" in out:
            return {"seq": [strip(o) for o in out["seq"]]}
        return {"tensor": {**out["tensor"], "values": None}}

    return {**result, "returns": strip(result["returns"]),
            "mutated": {p: {**m, "values": None} for p, m in result["mutated"].items()}}


def compare(expected: dict, actual: dict) -> list[tuple[str, str]]:
    """The differences of ``actual`` (opdispatch's result) from ``expected``
    (PyTorch's, ``as_reference``), as (kind, description): kind "missing" (no
    such PyTorch operator), "raises" (one raises and the other not, or
    exception families differ), "type" (None, scalar, tensor or sequence;
    scalar type; sequence length), "dtype", "shape", "strides" (of
    dimensions of size > 1 of non-empty tensors; storage offsets of views),
    "aliasing" (an output is, or shares storage with, a different input or
    none), "values" (beyond ``TOLERANCES``; not where ``expected`` has None),
    "mutation" (which inputs the call changed, and to what) and "version"
    (whose version counter it bumped). Empty if they agree."""
    if "missing" in expected:
        return [("missing", expected["missing"])]
    if "raises" in expected or "raises" in actual:
        e, a = expected.get("raises"), actual.get("raises")
        if e and a:
            return [] if e["family"] == a["family"] else [
                ("raises", f"PyTorch raises {e['type']}: {e['message']}; od raises {a['type']}: {a['message']}")]
        if e:
            return [("raises", f"PyTorch raises {e['type']}: {e['message']}; od returns")]
        return [("raises", f"od raises {a['type']}: {a['message']}; PyTorch returns")]
    diffs = _compare_output(expected["returns"], actual["returns"], "output")
    e_mut, a_mut = expected["mutated"], actual["mutated"]
    if sorted(e_mut) != sorted(a_mut):
        diffs.append(("mutation", f"PyTorch changes {sorted(e_mut) or 'no input'}, od {sorted(a_mut) or 'none'}"))
    for path in sorted(set(e_mut) & set(a_mut)):
        e, a = e_mut[path], a_mut[path]
        if (e["dtype"], e["shape"]) != (a["dtype"], a["shape"]):
            diffs.append(("mutation", f"{path}: PyTorch leaves it {e['dtype']}{e['shape']}, "
                                      f"od {a['dtype']}{a['shape']}"))
        else:
            diffs += _compare_values(e["dtype"], e["values"], a["values"], path, "mutation", tuple(e["shape"]))
    if sorted(expected["bumped"]) != sorted(actual["bumped"]):
        diffs.append(("version", f"PyTorch bumps the version of {expected['bumped'] or 'no input'}, "
                                 f"od of {actual['bumped'] or 'none'}"))
    return diffs


def _kind(out: Any) -> str:
    return "None" if out is None else next(iter(out))


def _compare_output(e: Any, a: Any, where: str) -> list[tuple[str, str]]:
    if _kind(e) != _kind(a):
        return [("type", f"{where}: PyTorch gives {_kind(e)}, od {_kind(a)}")]
    if e is None:
        return []
    if "seq" in e:
        if len(e["seq"]) != len(a["seq"]):
            return [("type", f"{where}: PyTorch gives {len(e['seq'])} outputs, od {len(a['seq'])}")]
        return [d for i, (x, y) in enumerate(zip(e["seq"], a["seq"]))
                for d in _compare_output(x, y, f"{where}[{i}]")]
    if "scalar" in e:
        es, as_ = e["scalar"], a["scalar"]
        if es["type"] != as_["type"]:
            return [("type", f"{where}: PyTorch gives a Python {es['type']}, od a {as_['type']}")]
        ev, av = es["value"], as_["value"]
        same = ev == av or (isinstance(ev, float) and math.isclose(ev, av, rel_tol=1e-7, abs_tol=1e-7)) or (
            isinstance(ev, float) and math.isnan(ev) and math.isnan(av))
        return [] if same else [("values", f"{where}: PyTorch {ev!r}, od {av!r}")]
    if "other" in e:
        return [] if e == a else [("type", f"{where}: PyTorch gives {e['other']}, od {a['other']}")]
    et, at = e["tensor"], a["tensor"]
    if et["dtype"] != at["dtype"]:
        return [("dtype", f"{where}: PyTorch dtype {et['dtype']}, od {at['dtype']}")]
    if et["shape"] != at["shape"]:
        return [("shape", f"{where}: PyTorch shape {et['shape']}, od {at['shape']}")]
    diffs = []
    if math.prod(et["shape"]) > 0:
        e_str = [s for n, s in zip(et["shape"], et["stride"]) if n > 1]
        a_str = [s for n, s in zip(at["shape"], at["stride"]) if n > 1]
        if e_str != a_str:
            diffs.append(("strides", f"{where}: PyTorch strides {et['stride']}, od {at['stride']}"))
    if et["is"] != at["is"]:
        diffs.append(("aliasing", f"{where}: PyTorch returns {et['is'] or 'a new tensor'}, "
                                  f"od {at['is'] or 'a new one'}"))
    elif et["aliases"] != at["aliases"]:
        diffs.append(("aliasing", f"{where}: PyTorch's output shares storage with {et['aliases'] or 'no input'}, "
                                  f"od's with {at['aliases'] or 'none'}"))
    elif et["aliases"] is not None and et["offset"] != at["offset"]:
        diffs.append(("strides", f"{where}: PyTorch storage offset {et['offset']}, od {at['offset']}"))
    return diffs + _compare_values(et["dtype"], et["values"], at["values"], where, "values", tuple(et["shape"]))


def _compare_values(dtype: str, expected: Any, actual: Any, where: str, kind: str,
                    shape: tuple) -> list[tuple[str, str]]:
    if expected is None:
        return []
    e, a = wire_to_values(expected, dtype).reshape(shape), wire_to_values(actual, dtype).reshape(shape)
    if dtype in TOLERANCES:
        rtol, atol = TOLERANCES[dtype]
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = a == e
    if close.all():
        return []
    first = tuple(int(i) for i in np.argwhere(~close)[0])
    return [(kind, f"{where}: {int((~close).sum())} of {close.size} values differ, e.g. at {list(first)} "
                   f"PyTorch {e[first]!r}, od {a[first]!r}")]
