"""Sample inputs and NumPy references for every built-in ``od`` operator,
shared by test_builtin_ops (values), test_autograd (gradcheck) and test_meta
(meta vs cpu metadata).

A sample's tensor arguments are NumPy arrays; ``instantiate`` turns them into
tensors on a device. ``Const`` marks a float tensor that gets no gradient,
``DEVICE`` the device under test (for factories).

The sample helpers (``a``, ``pos``, ``ints``, ``mask``) draw from one RNG that
every ``OpInfo`` resets to the same seed when it is made, so an entry's values
depend only on its own samples (Note [Sample values per entry]).
tests/test_opinfo.py compares every sample with PyTorch 2.13 (docs/builtin-operators.rst)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Optional

import numpy as np

import opdispatch
from opdispatch import _C
from opinfo._protocol import strided_buffer

# Note [Sample values per entry]
# The helpers draw from _rng, which OpInfo.__post_init__ resets to _SEED. The
# arguments of an entry are evaluated after the previous entry was made, so
# each entry draws the same stream from its start: adding, removing or
# reordering other entries (here or in another family module) leaves its
# values as they are, and with them its stored PyTorch references (keyed by a
# digest of the values, tests/opinfo/_cases.py). Editing an entry's samples
# changes only that entry's later draws.
_SEED = 1234
_rng = np.random.default_rng(_SEED)


def _reset_rng() -> None:
    global _rng
    _rng = np.random.default_rng(_SEED)


def a(*shape: int) -> np.ndarray:
    """Float64 values in [-2, -0.1] U [0.1, 2] (no kinks of abs/relu nearby), distinct almost surely."""
    return np.asarray(_rng.uniform(0.1, 2.0, shape) * _rng.choice([-1.0, 1.0], shape))


def pos(*shape: int) -> np.ndarray:
    return np.asarray(_rng.uniform(0.5, 2.0, shape))


def ints(*shape: int, high: int = 5) -> np.ndarray:
    return _rng.integers(-high, high, shape)


def mask(*shape: int) -> np.ndarray:
    return _rng.random(shape) > 0.5


@dataclass(frozen=True)
class Const:
    """A float array that becomes a tensor without requires_grad in gradcheck."""

    array: np.ndarray


class _Device:
    def __repr__(self) -> str:
        return "DEVICE"


DEVICE = _Device()


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    #: The result dtype PyTorch 2.13 gives where NumPy's promotion, and so the
    #: NumPy reference's dtype, differs (the reference's values still count).
    torch_dtype: Optional[np.dtype] = None

    def promotes_to(self, dtype: Any) -> "Sample":
        """This sample, whose result PyTorch 2.13 gives in ``dtype`` (recorded from PyTorch, not computed)."""
        self.torch_dtype = np.dtype(dtype)
        return self

    def __repr__(self) -> str:
        def show(x: Any) -> str:
            if isinstance(x, np.ndarray):
                return f"{x.dtype}{list(x.shape)}"
            if isinstance(x, Const):
                return "const " + show(x.array)
            if isinstance(x, list):
                return "[" + ", ".join(show(v) for v in x) + "]"
            return repr(x)

        parts = [show(x) for x in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return ", ".join(parts)


#: The floating dtypes every sample is also run in by default (OpInfo.dtypes).
FLOATING = (opdispatch.float16, opdispatch.float32, opdispatch.float64)


@dataclass
class OpInfo:
    """``name``: od::<name>; ``samples``; ``ref``: the NumPy result of a
    sample (None: no value check here); ``grad``: gradcheck it;
    ``inplace``: mutates its first argument; ``differentiable_outputs``:
    see below; ``dtypes``, ``error_samples``: see below. ``family``: the module of
    tests/opinfo/ that defines the entry ("op_db" for this file's), set by
    ``opinfo.family_ops``: its stored PyTorch references are in
    tests/data/opinfo/<family>.json. Making one resets the sample helpers'
    RNG (Note [Sample values per entry])."""

    name: str
    samples: list[Sample]
    ref: Optional[Callable[..., Any]] = None
    grad: bool = True
    inplace: bool = False
    #: The outputs gradcheck differentiates (None: every floating-point one).
    differentiable_outputs: Optional[tuple[int, ...]] = None
    #: The dtypes the PyTorch comparison and the Meta test also run each sample in: its floating arrays (Const
    #: included) cast to each (a sample whose floating arrays all have that dtype already is not repeated).
    dtypes: tuple[Any, ...] = FLOATING
    #: Calls PyTorch rejects: tests/test_opinfo.py checks that PyTorch raises and od raises an exception of the
    #: same family, test_meta that meta raises what cpu raises; the value and gradcheck tests leave them out.
    error_samples: list[Sample] = field(default_factory=list)
    #: The exception the Meta kernel raises for every sample instead of a result, as PyTorch's does where the
    #: output's size depends on the data (nonzero): test_meta checks that instead of comparing metadata.
    meta_raises: Optional[type] = None
    family: str = "op_db"

    def __post_init__(self) -> None:
        _reset_rng()

    @property
    def op(self) -> _C._DispatchOperator:
        base, _, overload = self.name.partition(".")
        return _C._DispatchOperator("od::" + base, overload)


def S(*args: Any, **kwargs: Any) -> Sample:
    return Sample(args, kwargs)


def as_tensor(x: np.ndarray, device: Any) -> opdispatch.Tensor:
    """A new tensor on ``device`` with ``x``'s values, dtype and layout: a
    C-contiguous array gives a contiguous tensor; any other array with
    non-negative strides a tensor with the same strides (in elements) over a
    buffer of its own (``strided_buffer``: a kernel that reads past its
    strides shows); negative strides a contiguous one."""
    if x.flags.c_contiguous or x.size == 0 or any(s < 0 or s % x.itemsize for s in x.strides):
        return opdispatch.tensor(x if x.flags.c_contiguous else x.copy(), device=device)
    strides = [s // x.itemsize for s in x.strides]
    base = opdispatch.tensor(strided_buffer(x, strides), device=device)
    return _C._as_strided(base, list(x.shape), strides, 0)


def instantiate(sample: Sample, device: str, leaves: Optional[Iterator[Any]] = None,
                float_dtype: Optional[type] = None) -> tuple[tuple, dict]:
    """The sample's arguments with arrays as tensors on ``device`` (each new,
    with the array's layout: ``as_tensor``). With ``leaves``, float arrays
    (not Const) are taken from it instead (gradcheck); with ``float_dtype``,
    the other float arrays (Const included) are cast to it."""

    def cast(x: np.ndarray) -> np.ndarray:
        return x.astype(float_dtype) if float_dtype is not None and x.dtype.kind == "f" else x

    def convert(x: Any) -> Any:
        if isinstance(x, np.ndarray):
            if leaves is not None and x.dtype.kind == "f":
                return next(leaves)
            return as_tensor(cast(x), device)
        if isinstance(x, Const):
            return as_tensor(cast(x.array), device)
        if isinstance(x, list):
            return [convert(v) for v in x]
        if x is DEVICE:
            return device
        return x

    return tuple(convert(x) for x in sample.args), {k: convert(v) for k, v in sample.kwargs.items()}


def float_arrays(sample: Sample) -> list[np.ndarray]:
    """The arrays that gradcheck differentiates, in argument order."""
    out: list[np.ndarray] = []

    def walk(x: Any) -> None:
        if isinstance(x, np.ndarray) and x.dtype.kind == "f":
            out.append(x)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for x in list(sample.args) + list(sample.kwargs.values()):
        walk(x)
    return out


def _softmax(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _nll(x: np.ndarray, t: np.ndarray, w: Any = None, reduction: int = 1, ignore: int = -100) -> np.ndarray:
    x2, t1 = x.reshape(-1, x.shape[-1]), t.reshape(-1)
    weights = np.ones(x.shape[-1]) if w is None else (w.array if isinstance(w, Const) else w)
    wn = np.array([0.0 if c == ignore else weights[c] for c in t1])
    losses = np.array([0.0 if c == ignore else -x2[i, c] * wn[i] for i, c in enumerate(t1)])
    if reduction == 0:
        return losses.reshape(t.shape)
    return np.asarray(losses.sum() / wn.sum() if reduction == 1 else losses.sum())


def _total_weight(x: np.ndarray, t: np.ndarray, w: Any = None, reduction: int = 1, ignore: int = -100) -> np.ndarray:
    if reduction == 0:
        return np.zeros((), x.dtype)
    weights = np.ones(x.shape[-1]) if w is None else (w.array if isinstance(w, Const) else w)
    return np.asarray(sum(weights[c] for c in t.reshape(-1) if c != ignore), x.dtype)


def _nll_grad(go: np.ndarray, x: np.ndarray, t: np.ndarray, w: Any, reduction: int, ignore: int,
              total: Any) -> np.ndarray:
    total = total.array if isinstance(total, Const) else total
    weights = np.ones(x.shape[-1]) if w is None else (w.array if isinstance(w, Const) else w)
    x2, t1, go1 = x.reshape(-1, x.shape[-1]), t.reshape(-1), go.reshape(-1)
    out = np.zeros(x2.shape, x.dtype)
    for i, c in enumerate(t1):
        if c != ignore:
            scale = go1[i] if reduction == 0 else go1[0] / total if reduction == 1 else go1[0]
            out[i, c] = -weights[c] * scale
    return out.reshape(x.shape)


def _softmax_grad(g: np.ndarray, out: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
    return out * (g - (g * out).sum(dim, keepdims=True))  # grad_output's dtype: PyTorch's CPU kernel ignores dtype


def _log_softmax_grad(g: np.ndarray, out: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
    return g - np.exp(out) * g.sum(dim, keepdims=True)  # grad_output's dtype: PyTorch's CPU kernel ignores dtype


def _placed(g: np.ndarray, sizes: list[int], index: Any) -> np.ndarray:
    out = np.zeros(sizes, g.dtype)
    out[index] = g
    return out


def _to(x: np.ndarray, dtype: Any = None, *rest: Any, **kw: Any) -> np.ndarray:
    dtype = kw.get("dtype", dtype)
    return x.astype(dtype.to_numpy()) if dtype is not None else x.copy()


def _matmul_samples() -> list[Sample]:
    return [S(a(2, 3), a(3)), S(a(3), a(3, 2)), S(a(2, 2, 3), a(3, 2)), S(a(3), a(3)), S(a(2, 1, 2, 3), a(3, 3, 2))]


ELEMENTWISE_UNARY = {
    "neg": (np.negative, a), "exp": (np.exp, a), "log": (np.log, pos), "sin": (np.sin, a), "cos": (np.cos, a),
    "tanh": (np.tanh, a), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), a), "relu": (lambda x: np.maximum(x, 0), a),
    "abs": (np.abs, a), "sqrt": (np.sqrt, pos),
}

COMPARISONS = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
               "ge": np.greater_equal}

OPS: list[OpInfo] = [
    # --- factories ----------------------------------------------------------------------------
    OpInfo("empty.memory_format", [S([2, 3], device=DEVICE), S([0, 2], dtype=opdispatch.int32, device=DEVICE)],
           grad=False),
    OpInfo("empty_strided", [S([2, 3], [1, 2], device=DEVICE), S([2, 3], [3, 1], dtype=opdispatch.float64, device=DEVICE),
                             S([2, 0, 3], [0, 7, 2], device=DEVICE), S([], [], dtype=opdispatch.int32, device=DEVICE)],
           grad=False, error_samples=[S([-2], [1, 1], device=DEVICE), S([2], [1, 1], device=DEVICE),
                                      S([2, 2], [-1, 1], device=DEVICE)]),
    OpInfo("zeros", [S([2, 3], device=DEVICE), S([3], dtype=opdispatch.int32, device=DEVICE)],
           ref=lambda size, dtype=opdispatch.float32, device=None: np.zeros(size, dtype.to_numpy()), grad=False),
    OpInfo("ones", [S([2, 3], device=DEVICE), S([], dtype=opdispatch.float64, device=DEVICE)],
           ref=lambda size, dtype=opdispatch.float32, device=None: np.ones(size, dtype.to_numpy()), grad=False),
    OpInfo("full", [S([2, 2], 1.5, device=DEVICE), S([3], 7, device=DEVICE), S([1], True, device=DEVICE),
                    S([2], 2, dtype=opdispatch.float64, device=DEVICE)],
           ref=lambda size, v, dtype=None, device=None: np.full(
               size, v, dtype.to_numpy() if dtype else np.bool_ if isinstance(v, bool) else
               np.int64 if isinstance(v, int) else np.float32), grad=False),
    OpInfo("arange", [S(5, device=DEVICE), S(2.5, device=DEVICE)],
           ref=lambda end, device=None: np.arange(end, dtype=np.int64 if isinstance(end, int) else np.float32),
           grad=False),
    OpInfo("arange.start", [S(1, 4, device=DEVICE), S(-1.0, 1, device=DEVICE)],
           ref=lambda s, e, device=None: np.arange(s, e, dtype=np.float32 if isinstance(s + e, float) else np.int64),
           grad=False),
    OpInfo("arange.start_step", [S(0, 1, 0.25, device=DEVICE), S(5, 0, -2, device=DEVICE),
                                 S(0, 3, 1, dtype=opdispatch.float64, device=DEVICE)],
           ref=lambda s, e, st, dtype=None, device=None: np.arange(
               s, e, st, dtype=dtype.to_numpy() if dtype else
               np.float32 if isinstance(s + e + st, float) else np.int64), grad=False),
    OpInfo("rand", [S([2, 3], device=DEVICE), S([4], dtype=opdispatch.float64, device=DEVICE)], grad=False),
    OpInfo("randn", [S([2, 3], device=DEVICE), S([2, 2], dtype=opdispatch.float16, device=DEVICE)], grad=False),
    OpInfo("randperm", [S(5, device=DEVICE), S(0, device=DEVICE), S(4, dtype=opdispatch.float32, device=DEVICE),
                        S(3, dtype=opdispatch.int8, device=DEVICE)], grad=False,
           error_samples=[S(-1, device=DEVICE), S(300, dtype=opdispatch.int8, device=DEVICE),
                          S(3, dtype=opdispatch.bool, device=DEVICE)]),
    OpInfo("empty_like", [S(a(2, 3)), S(ints(3), dtype=opdispatch.float32)], grad=False),
    OpInfo("zeros_like", [S(a(2, 3)), S(ints(3), dtype=opdispatch.float32)],
           ref=lambda x, dtype=None: np.zeros_like(x, dtype.to_numpy() if dtype else x.dtype), grad=False),
    OpInfo("ones_like", [S(a(2, 3)), S(ints(3))], ref=lambda x: np.ones_like(x), grad=False),
    OpInfo("full_like", [S(a(2, 3), 1.5), S(ints(3), 2.7), S(ints(3), 2.7, dtype=opdispatch.float32), S(a(), True)],
           ref=lambda x, v, dtype=None: np.full_like(x, v, dtype.to_numpy() if dtype else x.dtype), grad=False),
    OpInfo("scalar_tensor", [S(3, device=DEVICE), S(True, device=DEVICE), S(2.5, dtype=opdispatch.float64, device=DEVICE)],
           ref=lambda v, dtype=None, device=None: np.asarray(v, dtype.to_numpy() if dtype else np.float32),
           grad=False),
    # --- binary arithmetic ------------------------------------------------------------------------
    OpInfo("add.Tensor", [S(a(2, 3), a(3)), S(a(2, 1), a(1, 3), alpha=2),
                          S(ints(2, 3), a(3).astype(np.float32)).promotes_to(np.float32), S(ints(3), ints(2, 3), alpha=3)],
           ref=lambda x, y, alpha=1: x + alpha * y),
    OpInfo("add.Scalar", [S(a(2, 3), 2.5), S(a(2, 3), 2, 3), S(ints(3), 2), S(ints(3), 0.5).promotes_to(np.float32)],
           ref=lambda x, y, alpha=1: x + alpha * y),
    OpInfo("sub.Tensor", [S(a(2, 3), a(3)), S(a(2, 1), a(1, 3), alpha=-0.5), S(ints(3), ints(3))],
           ref=lambda x, y, alpha=1: x - alpha * y),
    OpInfo("sub.Scalar", [S(a(2, 3), 2.5), S(a(2, 3), 1, 2), S(ints(3), 1)],
           ref=lambda x, y, alpha=1: x - alpha * y),
    OpInfo("rsub.Scalar", [S(a(2, 3), 2.5), S(a(2, 3), 1, 2), S(ints(3), 1)],
           ref=lambda x, y, alpha=1: y - alpha * x),
    OpInfo("mul.Tensor", [S(a(2, 3), a(2, 1)), S(a(3), a(2, 3)), S(ints(3), mask(3)),
                          S(a(3).astype(np.float32), a(3))], ref=np.multiply),
    OpInfo("mul.Scalar", [S(a(2, 3), 3), S(ints(2), 1.5).promotes_to(np.float32), S(a(2).astype(np.float16), 2.0)],
           ref=np.multiply),
    OpInfo("div.Tensor", [S(a(2, 3), pos(3)), S(pos(2, 1), a(1, 3)),
                          S(ints(3), np.array([1, 2, 3])).promotes_to(np.float32)],
           ref=np.true_divide),
    OpInfo("div.Scalar", [S(a(2, 3), 4.0), S(ints(3), 2).promotes_to(np.float32)], ref=np.true_divide),
    OpInfo("pow.Tensor_Scalar", [S(pos(2, 3), 3), S(a(2, 3), 2), S(pos(3), -0.5), S(ints(3), 2)], ref=np.power),
    OpInfo("pow.Tensor_Tensor", [S(pos(2, 3), a(3)), S(pos(3), ints(2, 3, high=3).astype(np.float64))],
           ref=np.power),
    OpInfo("pow.Scalar", [S(2.0, a(2, 3)), S(0.5, a(3)), S(3, ints(3, high=2) + 2)], ref=np.power),
    OpInfo("maximum", [S(a(2, 3), a(3)), S(ints(3), a(3).astype(np.float32)).promotes_to(np.float32)],
           ref=np.maximum),
    OpInfo("minimum", [S(a(2, 3), a(2, 1)), S(ints(3), ints(3))], ref=np.minimum),
    OpInfo("min.other", [S(a(2, 3), a(2, 1)), S(ints(3), ints(3))], ref=np.minimum),
    OpInfo("max.other", [S(a(2, 3), a(3)), S(ints(3), ints(3))], ref=np.maximum),
    OpInfo("where.self", [S(mask(2, 3), a(2, 3), a(3)), S(mask(3), ints(3), a(2, 1))], ref=np.where),
    *[OpInfo(f"{name}.{overload}", samples, ref=fn, grad=False)
      for name, fn in COMPARISONS.items()
      for overload, samples in (("Tensor", [S(a(2, 3), a(3)), S(ints(3), ints(2, 3))]),
                                ("Scalar", [S(a(2, 3), 0.5), S(ints(3), 1)]))],
    # --- unary ------------------------------------------------------------------------------------
    *[OpInfo(name, [S(make(2, 3)), S(make(3).astype(np.float32))], ref=fn)
      for name, (fn, make) in ELEMENTWISE_UNARY.items()],
    OpInfo("threshold_backward", [S(a(2, 3), a(2, 3), 0), S(a(3), a(2, 3), 0.5), S(a(2, 3), ints(3), 1)],
           ref=lambda g, x, threshold: np.where(x <= threshold, 0, g)),
    # --- reductions --------------------------------------------------------------------------------
    OpInfo("sum", [S(a(2, 3)), S(ints(2, 3)), S(a(3).astype(np.float32), dtype=opdispatch.float64), S(a())],
           ref=lambda x, dtype=None: np.sum(x, dtype=dtype.to_numpy() if dtype else
                                            np.int64 if x.dtype.kind in "biu" else x.dtype)),
    OpInfo("sum.dim_IntList", [S(a(2, 3), [1]), S(a(2, 3, 2), [0, -1], True), S(mask(2, 3), [0])],
           ref=lambda x, dim, keepdim=False: np.sum(x, axis=tuple(dim), keepdims=keepdim,
                                                    dtype=np.int64 if x.dtype.kind in "biu" else x.dtype)),
    OpInfo("mean", [S(a(2, 3)), S(a(3).astype(np.float32))], ref=lambda x: np.mean(x, dtype=x.dtype)),
    OpInfo("mean.dim", [S(a(2, 3), [0], True), S(a(2, 3, 2), [1, 2])],
           ref=lambda x, dim, keepdim=False: np.mean(x, axis=tuple(dim), keepdims=keepdim)),
    OpInfo("amax", [S(a(2, 3), [1]), S(a(2, 3)), S(a(2, 3, 2), [0, 2], True), S(ints(4), [0])],
           ref=lambda x, dim=(), keepdim=False: np.amax(x, axis=tuple(dim) or None, keepdims=keepdim)),
    OpInfo("max.dim", [S(a(2, 3), 1), S(a(2, 3), 0, True), S(ints(4), -1)],
           ref=lambda x, dim, keepdim=False: (np.max(x, axis=dim, keepdims=keepdim),
                                              np.argmax(x, axis=dim, keepdims=keepdim))),
    OpInfo("argmax", [S(a(2, 3)), S(a(2, 3), 1, True), S(ints(4), 0)],
           ref=lambda x, dim=None, keepdim=False: np.argmax(x, axis=dim, keepdims=keepdim), grad=False),
    OpInfo("amin", [S(a(2, 3), [1]), S(a(2, 3)), S(a(2, 3, 2), [0, 2], True), S(ints(4), [0]),
                    S(np.array([[1.0, 0.5, 0.5], [2.0, 3.0, 2.0]]), [1])],  # ties share the gradient
           ref=lambda x, dim=(), keepdim=False: np.amin(x, axis=tuple(dim) or None, keepdims=keepdim),
           error_samples=[S(a(0, 3), [0])]),
    OpInfo("min.dim", [S(a(2, 3), 1), S(a(2, 3), 0, True), S(ints(4), -1), S(a(), 0)],
           ref=lambda x, dim, keepdim=False: (np.min(x, axis=dim, keepdims=keepdim),
                                              np.argmin(x, axis=dim, keepdims=keepdim)),
           error_samples=[S(a(2, 3), 2)]),
    OpInfo("argmin", [S(a(2, 3)), S(a(2, 3), 1, True), S(ints(4), 0), S(a(2, 3), -2)],
           ref=lambda x, dim=None, keepdim=False: np.argmin(x, axis=dim, keepdims=keepdim), grad=False,
           error_samples=[S(a(0))]),
    OpInfo("cumsum", [S(a(2, 3), 1), S(a(2, 3, 2), -3), S(ints(4), 0), S(np.array([True, False, True]), 0), S(a(), 0),
                      S(ints(2, 2), 1, dtype=opdispatch.float64), S(a(2, 3), 0, dtype=opdispatch.float64)],
           ref=lambda x, dim, dtype=None: np.cumsum(x, axis=dim, dtype=dtype.to_numpy() if dtype else
                                                    np.int64 if x.dtype.kind in "biu" else x.dtype)
           if x.ndim else x.copy(),
           error_samples=[S(a(2, 3), 2)]),
    OpInfo("cumprod", [S(a(2, 3), 1), S(a(2, 3, 2), -3), S(ints(4), 0), S(np.array([[2.0, 0.0, 3.0], [0.0, 1.5, 0.0]]), 1),
                       S(a(), 0), S(ints(2, 2), 1, dtype=opdispatch.float64)],
           ref=lambda x, dim, dtype=None: np.cumprod(x, axis=dim, dtype=dtype.to_numpy() if dtype else
                                                     np.int64 if x.dtype.kind in "biu" else x.dtype)
           if x.ndim else x.copy(),
           error_samples=[S(a(2, 3), 2)]),
    OpInfo("prod", [S(a(2, 3)), S(np.array([[0.5, 0.0], [2.0, 3.0]])), S(np.array([0.0, 2.0, 0.0])), S(ints(4)),
                    S(a()), S(a(0)), S(a(2, 2), dtype=opdispatch.float64)],
           ref=lambda x, dtype=None: np.prod(x, dtype=dtype.to_numpy() if dtype else
                                             np.int64 if x.dtype.kind in "biu" else x.dtype)),
    OpInfo("prod.dim_int", [S(a(2, 3), 1), S(np.array([[0.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.0, 2.0, 0.5]]), 1),
                            S(a(2, 3), -2, True), S(ints(2, 3), 0), S(a(), 0), S(a(0, 3), 0),
                            S(ints(2, 2), 1, dtype=opdispatch.float64)],
           ref=lambda x, dim, keepdim=False, dtype=None: np.prod(
               x, axis=dim if x.ndim else None, keepdims=keepdim and x.ndim > 0,
               dtype=dtype.to_numpy() if dtype else np.int64 if x.dtype.kind in "biu" else x.dtype),
           error_samples=[S(a(2, 3), 2)]),
    OpInfo("sort", [S(a(2, 3)), S(a(2, 3), 0, True), S(Const(np.array([1.0, np.nan, 1.0, 0.0, 1.0])), 0, True),
                    S(Const(np.array([[2.0, 1.0, 2.0, np.nan, 1.0]]))), S(ints(3, 4), -2), S(np.array([True, False, True])),
                    S(a()), S(a(0, 3), 0)],
           differentiable_outputs=(0,), error_samples=[S(a(2, 3), 2), S(np.array([1j]))]),
    OpInfo("topk", [S(a(2, 5), 2), S(a(3, 4), 1, 0, False), S(Const(np.array([3.0, np.nan, 2.0, 5.0, 4.0])), 2),
                    S(Const(np.array([3.0, np.nan, 2.0, 5.0, 4.0])), 2, 0, False), S(ints(3, 4), 3, -2),
                    S(a(2, 3), 0), S(a(2, 3), 3), S(a(), 1), S(a(0, 3), 0),
                    # Equal values, chosen and ordered as PyTorch's kernel does (Note [topk's order among equal
                    # values] in csrc/python/TopK.cpp): three or fewer elements, PyTorch's nth_element path (sorted
                    # or not), its partial_sort path (k * 64 <= n), along dim 0.
                    S(Const(np.array([2.0, 1.0, 2.0])), 2), S(Const(np.array([2.0, 1.0, 2.0])), 3, 0, False),
                    S(Const(np.array([1.0, 3.0, 3.0, 2.0, 3.0, 1.0, 3.0, 0.0])), 3),
                    S(Const(np.array([1.0, 3.0, 3.0, 2.0, 3.0, 1.0, 3.0, 0.0])), 7, 0, False),
                    S(Const(np.array([1.0, 3.0, 3.0, 2.0, 3.0, 1.0, 3.0, 0.0])), 5, 0, True, False),
                    S(Const(np.arange(130.0) % 5), 2), S(Const(np.arange(24.0).reshape(6, 4) % 3), 4, 0)],
           differentiable_outputs=(0,), error_samples=[S(a(2, 3), 4), S(a(2, 3), -1), S(a(2, 3), 1, 2)]),
    OpInfo("var.correction", [S(a(2, 3)), S(a(2, 3), [1], correction=0, keepdim=True), S(a(2, 3), None, correction=2.5),
                              S(a(2, 3, 2), [0, 2])],
           ref=lambda x, dim=None, correction=1, keepdim=False: np.var(
               x, axis=None if dim is None else tuple(dim), ddof=correction, keepdims=keepdim),
           error_samples=[S(ints(3))]),
    OpInfo("var.dim", [S(a(2, 3), [0], False), S(a(2, 3), [0], False, True), S(a(2, 3), []), S(a(2, 3), [-1])],
           ref=lambda x, dim, unbiased=True, keepdim=False: np.var(
               x, axis=tuple(dim) or None, ddof=1 if unbiased else 0, keepdims=keepdim)),
    OpInfo("any", [S(a(2, 3)), S(np.zeros((2, 2))), S(ints(4)), S(a(0)), S(np.array([0.0, np.nan]))],
           ref=lambda x: np.any(x), grad=False),
    OpInfo("any.dim", [S(np.array([[0.0, 1.0], [0.0, 0.0]]), 1), S(ints(2, 3), 0, True), S(a(), 0)],
           ref=lambda x, dim, keepdim=False: np.any(x, axis=dim, keepdims=keepdim), grad=False,
           error_samples=[S(a(2, 3), 2)]),
    OpInfo("any.dims", [S(np.array([[0.0, 1.0], [0.0, 0.0]]), [0, 1]), S(np.array([[0.0, 1.0], [0.0, 0.0]]), []),
                        S(ints(2, 3, 2), [0, 2], True), S(a(2, 3))],
           ref=lambda x, dim=None, keepdim=False: np.any(x, axis=None if dim is None else tuple(dim),
                                                         keepdims=keepdim), grad=False,
           error_samples=[S(a(2, 3), [0, 0])]),
    # --- linear algebra ------------------------------------------------------------------------------
    OpInfo("matmul", _matmul_samples(), ref=np.matmul),
    OpInfo("mm", [S(a(2, 3), a(3, 2))], ref=np.matmul,
           error_samples=[S(a(2, 3), a(2, 3)), S(a(3), a(3, 2)), S(ints(2, 2), a(2, 1))]),
    OpInfo("bmm", [S(a(2, 2, 3), a(2, 3, 2))], ref=np.matmul, error_samples=[S(a(2, 2, 3), a(3, 3, 2))]),
    # --- views -------------------------------------------------------------------------------------------
    OpInfo("view", [S(a(2, 3), [3, 2]), S(a(2, 3), [-1]), S(a(), [1, 1])], ref=lambda x, s: x.reshape(s)),
    OpInfo("detach", [S(a(2, 3)), S(a())], ref=lambda x: x, grad=False),
    OpInfo("lift_fresh", [S(a(2, 3)), S(a())], ref=lambda x: x, grad=False),
    OpInfo("lift_fresh_copy", [S(a(2, 3)), S(a()), S(ints(3))], ref=np.copy, grad=False),
    # --- scalars of a tensor: its first element, its metadata -----------------------------------------------
    OpInfo("_local_scalar_dense", [S(a(2, 3)), S(a()), S(ints(1)), S(mask(2)), S(a(2, 3).T)],
           ref=lambda x: x.item(0), grad=False),
    OpInfo("sym_size.int", [S(a(2, 3), 1), S(a(2, 3), -2), S(a(0, 4), 1)], ref=lambda x, d: x.shape[d], grad=False,
           error_samples=[S(a(2, 3), 2), S(a(), 0)]),
    OpInfo("sym_stride.int", [S(a(2, 3), 0), S(a(2, 3, 4), -1)], grad=False, error_samples=[S(a(2), -2)]),
    OpInfo("sym_numel", [S(a(2, 3)), S(a()), S(a(0, 3))], ref=lambda x: x.size, grad=False),
    OpInfo("sym_storage_offset", [S(a(2, 3))], ref=lambda x: 0, grad=False),
    OpInfo("sym_is_contiguous", [S(a(2, 3)), S(a(2, 3), 1), S(a(2, 3, 4, 5), 2), S(a(2, 4, 5, 3).transpose(0, 3, 1, 2), 2),
                                 S(a(1, 3, 1, 1), 2), S(a(2, 4, 5, 6, 3).transpose(0, 4, 1, 2, 3), 3),
                                 S(a(2, 3, 4), 3), S(a(0, 3, 2, 2), 2)], grad=False),
    OpInfo("alias", [S(a(2, 3)), S(a())], ref=lambda x: x),
    OpInfo("as_strided", [S(a(2, 3), [3, 2], [1, 2], 1), S(a(6), [2, 3], [1, 1]), S(a(2, 3), [2], [4]),
                          S(a(4), [0], [1], 100), S(a(2, 3), [2, 2], [0, 1])],
           ref=lambda x, size, stride, offset=0: np.lib.stride_tricks.as_strided(
               np.ascontiguousarray(x).reshape(-1)[offset:], size, [s * x.itemsize for s in stride]),
           error_samples=[S(a(4), [2], [-1]), S(a(4), [-1], [1]), S(a(4), [2], [1, 1]), S(a(4), [2], [1], -1)]),
    OpInfo("reshape", [S(a(2, 3), [6]), S(a(2, 3, 2), [2, -1])], ref=lambda x, s: x.reshape(s)),
    OpInfo("transpose.int", [S(a(2, 3), 0, 1), S(a(2, 3, 2), -1, 0)], ref=lambda x, d0, d1: np.swapaxes(x, d0, d1)),
    OpInfo("t", [S(a(2, 3)), S(a(3)), S(a())], ref=lambda x: x.T),
    OpInfo("permute", [S(a(2, 3, 2), [2, 0, 1]), S(a(2, 3), [-1, 0])], ref=np.transpose),
    OpInfo("expand", [S(a(3, 1), [2, 3, 4]), S(a(3), [2, -1])],
           ref=lambda x, s: np.broadcast_to(x, [d if d != -1 else x.shape[i - len(s) + x.ndim]
                                                for i, d in enumerate(s)])),
    OpInfo("squeeze", [S(a(2, 1, 3)), S(a(1, 1))], ref=np.squeeze),
    OpInfo("squeeze.dim", [S(a(2, 1, 3), 1), S(a(2, 3), 0)],
           ref=lambda x, d: np.squeeze(x, d) if x.shape[d] == 1 else x),
    OpInfo("diagonal", [S(a(3, 3)), S(a(2, 3, 4), 1, 1, 2), S(a(2, 3, 4), -1, -1, 0), S(a(2, 3, 4), 5, 1, 2),
                        S(a(3, 2), -1)],
           ref=lambda x, offset=0, d1=0, d2=1: np.diagonal(x, offset, d1, d2),
           error_samples=[S(a(2, 3), 0, 1, 1), S(a(), 0)]),
    OpInfo("diagonal_backward", [S(a(2, 3), [2, 3, 4], 1, 1, 2), S(a(3, 2), [2, 3, 4], -1, -1, 0),
                                 S(a(3), [3, 3], 0, 0, 1)]),
    OpInfo("squeeze.dims", [S(a(1, 2, 1), [0, 1]), S(a(1, 2, 1), [-1, 0]), S(a(1, 2, 1), []), S(a(), [0])],
           ref=lambda x, dims: np.squeeze(x, tuple(d for d in dims if x.ndim and x.shape[d] == 1)),
           error_samples=[S(a(1, 2, 1), [0, 0]), S(a(2, 3), [2])]),
    OpInfo("unsqueeze", [S(a(2, 3), 1), S(a(2, 3), -1), S(a(), 0)], ref=np.expand_dims),
    # The in-place views (PyTorch 2.13's aten namesakes): self takes the view's geometry.
    OpInfo("transpose_", [S(a(2, 3), 0, 1), S(a(2, 3, 2), -1, 0)], ref=lambda x, d0, d1: np.swapaxes(x, d0, d1),
           inplace=True),
    OpInfo("t_", [S(a(2, 3)), S(a(3))], ref=lambda x: x.T, inplace=True, error_samples=[S(a(2, 3, 4))]),
    OpInfo("unsqueeze_", [S(a(2, 3), 1), S(a(2, 3), -1), S(a(), 0)], ref=np.expand_dims, inplace=True),
    OpInfo("squeeze_", [S(a(2, 1, 3)), S(a(1, 1))], ref=np.squeeze, inplace=True),
    OpInfo("squeeze_.dim", [S(a(2, 1, 3), 1), S(a(2, 3), 0)],
           ref=lambda x, d: np.squeeze(x, d) if x.shape[d] == 1 else x, inplace=True),
    OpInfo("squeeze_.dims", [S(a(1, 2, 1), [0, 1]), S(a(1, 2, 1), [-1, 0])],
           ref=lambda x, dims: np.squeeze(x, tuple(d for d in dims if x.shape[d] == 1)), inplace=True,
           error_samples=[S(a(1, 2, 1), [0, 0])]),
    OpInfo("as_strided_", [S(a(2, 3), [3, 2], [1, 2], 1), S(a(6), [2, 3], [1, 1])],
           ref=lambda x, size, stride, offset=0: np.lib.stride_tricks.as_strided(
               np.ascontiguousarray(x).reshape(-1)[offset:], size, [s * x.itemsize for s in stride]), inplace=True),
    OpInfo("select.int", [S(a(2, 3), 1, -1), S(a(4, 3), 0, 2)], ref=lambda x, d, i: np.take(x, i, axis=d)),
    OpInfo("slice.Tensor", [S(a(4, 3), 0, 1, None, 2), S(a(2, 5), 1, -4, -1), S(a(3, 2)), S(a(3), 0, 5, 9)],
           ref=lambda x, d=0, s=None, e=None, st=1: x[(slice(None),) * d + (slice(s, e, st),)]),
    OpInfo("flatten.using_ints", [S(a(2, 3, 2), 1), S(a(2, 3)), S(a(2, 3, 2), 0, 1)],
           ref=lambda x, s=0, e=-1: x.reshape(x.shape[:s] + (-1,) + x.shape[e % x.ndim + 1:])),
    OpInfo("select_backward", [S(a(3), [2, 3], 0, 1), S(a(2), [2, 3], 1, 2)],
           ref=lambda g, sizes, d, i: _placed(g, sizes, (slice(None),) * d + (i,))),
    OpInfo("slice_backward", [S(a(2, 3), [4, 3], 0, 1, 4, 2)],
           ref=lambda g, sizes, d, s, e, st: _placed(g, sizes, (slice(None),) * d + (slice(s, e, st),))),
    # --- copies and conversions ------------------------------------------------------------------------
    OpInfo("clone", [S(a(2, 3)), S(ints(3))], ref=np.copy),
    OpInfo("copy_", [S(a(2, 3), a(3)), S(a(2, 3), ints(2, 3)), S(ints(3), a(3))],
           ref=lambda x, y: np.broadcast_to(y, x.shape).astype(x.dtype), inplace=True),
    OpInfo("contiguous", [S(a(2, 3))], ref=np.copy),
    # Values past the old elements are uninitialized (opinfo._cases.UNINITIALIZED); tests/test_resize.py checks
    # the kept values, the storage and the views.
    OpInfo("resize_", [S(a(2, 3), [4]), S(a(2, 3), [3, 4]), S(a(2, 3), [2, 3]), S(a(3), []), S(a(2, 3), [0, 2]),
                       S(ints(2, 3), [1, 2, 3, 2])],
           grad=False, inplace=True, error_samples=[S(a(2), [-1]), S(a(2), [2, -3])]),
    OpInfo("to.dtype", [S(a(2, 3), opdispatch.float64, False, True), S(a(3), opdispatch.int32)], ref=_to),
    OpInfo("to.device", [S(a(2, 3), DEVICE, opdispatch.float64, False, True), S(ints(3), DEVICE, opdispatch.float32)],
           ref=lambda x, device, dtype, *rest: x.astype(dtype.to_numpy())),
    OpInfo("to.dtype_layout", [S(a(2, 3), dtype=opdispatch.float64, copy=True), S(ints(3), dtype=opdispatch.float16)],
           ref=_to),
    OpInfo("_to_copy", [S(a(2, 3)), S(a(3), dtype=opdispatch.float64), S(a(3), device=DEVICE)],
           ref=lambda x, dtype=None, device=None: _to(x, dtype)),
    OpInfo("add_.Tensor", [S(a(2, 3), a(3)), S(a(2, 3), a(2, 1), alpha=2), S(ints(3), ints(3))],
           ref=lambda x, y, alpha=1: x + alpha * y, inplace=True),
    OpInfo("sub_.Tensor", [S(a(2, 3), a(3)), S(a(3).astype(np.float32), a(3), alpha=0.5)],
           ref=lambda x, y, alpha=1: (x - alpha * y).astype(x.dtype), inplace=True),
    OpInfo("mul_.Tensor", [S(a(2, 3), a(3)), S(ints(3), ints(3))], ref=np.multiply, inplace=True),
    OpInfo("div_.Tensor", [S(a(2, 3), pos(3)), S(a(3).astype(np.float32), pos(1))],
           ref=lambda x, y: (x / y).astype(x.dtype), inplace=True),
    OpInfo("add_.Scalar", [S(a(2, 3), 2.5), S(a(2, 3), 2, 3), S(ints(3), 2)],
           ref=lambda x, y, alpha=1: (x + alpha * y).astype(x.dtype), inplace=True),
    OpInfo("sub_.Scalar", [S(a(2, 3), 2.5), S(a(3).astype(np.float32), 1, 0.5)],
           ref=lambda x, y, alpha=1: (x - alpha * y).astype(x.dtype), inplace=True),
    OpInfo("mul_.Scalar", [S(a(2, 3), 0.5), S(ints(3), 3)], ref=lambda x, y: (x * y).astype(x.dtype), inplace=True),
    OpInfo("div_.Scalar", [S(a(2, 3), 4.0), S(a(3).astype(np.float32), 3)], ref=lambda x, y: (x / y).astype(x.dtype),
           inplace=True),
    OpInfo("pow_.Tensor", [S(pos(2, 3), a(3)), S(ints(3), np.array([2, 3, 0]))], ref=np.power, inplace=True),
    OpInfo("pow_.Scalar", [S(a(2, 3), 2), S(pos(3), 0.5), S(ints(3), 3)], ref=lambda x, y: np.power(x, y).astype(x.dtype),
           inplace=True),
    OpInfo("zero_", [S(a(2, 3)), S(ints(3))], ref=np.zeros_like, inplace=True),
    OpInfo("fill_.Scalar", [S(a(2, 3), 2.5), S(ints(3), 7)], ref=lambda x, v: np.full_like(x, v), inplace=True),
    OpInfo("fill_.Tensor", [S(a(2, 3), a()), S(ints(3), a()), S(a(), a().astype(np.float32))],
           ref=lambda x, v: np.full_like(x, v), inplace=True, error_samples=[S(a(2, 3), a(1))]),
    # --- nn ----------------------------------------------------------------------------------------------------
    OpInfo("softmax.int", [S(a(2, 3), 1), S(a(2, 3), 0), S(a(3).astype(np.float32), -1, opdispatch.float64)],
           ref=lambda x, d, dtype=None: _softmax(x.astype(dtype.to_numpy()) if dtype else x, d)),
    OpInfo("log_softmax.int", [S(a(2, 3), 1), S(a(2, 3), 0), S(a(), 0)],
           ref=lambda x, d, dtype=None: np.log(_softmax(x, d if x.ndim else None))),
    OpInfo("nll_loss", [S(a(3, 4), np.array([0, 3, 1])),
                        S(a(3, 4), np.array([0, -100, 2]), Const(pos(4)), 1, -100),
                        S(a(3, 4), np.array([1, 2, 1]), None, 0), S(a(4), np.array(2), None, 2),
                        S(a(3, 4), np.array([3, 3, 0]), Const(pos(4)), 2, 0)],
           ref=_nll),
    OpInfo("nll_loss_forward", [S(a(3, 4), np.array([0, 3, 1]), None, 1, -100),
                                S(a(3, 4), np.array([0, -100, 2]), Const(pos(4)), 1, -100),
                                S(a(3, 4), np.array([1, 2, 1]), None, 0, -100), S(a(4), np.array(2), None, 2, -100),
                                S(a(3, 4), np.array([3, 3, 0]), Const(pos(4)), 2, 0)],
           ref=lambda *args: (_nll(*args), _total_weight(*args)), differentiable_outputs=(0,)),
    OpInfo("nll_loss_backward", [S(a(), a(3, 4), np.array([0, 3, 1]), None, 1, -100, Const(np.array(3.0))),
                                 S(a(3), a(3, 4), np.array([0, -100, 2]), Const(pos(4)), 0, -100,
                                   Const(np.array(0.0))),
                                 S(a(), a(4), np.array(2), None, 2, -100, Const(np.array(1.0))),
                                 S(a(), a(3, 4), np.array([3, 3, 0]), None, 1, 0, Const(np.array(2.0)))],
           ref=_nll_grad),
    OpInfo("_softmax_backward_data", [S(a(2, 3), a(2, 3), 1, opdispatch.float64),
                                      S(a(2, 3), a(2, 3), 0, opdispatch.float64),
                                      S(a(2, 3).astype(np.float32), a(2, 3).astype(np.float32), -1, opdispatch.float64)],
           ref=_softmax_grad,
           error_samples=[S(a(2, 3).astype(np.float32), a(2, 3), 1, opdispatch.float64)]),
    OpInfo("_log_softmax_backward_data", [S(a(2, 3), a(2, 3), 1, opdispatch.float64),
                                          S(a(2, 3), a(2, 3), 0, opdispatch.float64),
                                          S(a(3).astype(np.float32), a(3).astype(np.float32), 0, opdispatch.float64)],
           ref=_log_softmax_grad,
           error_samples=[S(a(2, 3).astype(np.float32), a(2, 3), 1, opdispatch.float64)]),
    # --- joining ---------------------------------------------------------------------------------------------------
    OpInfo("flip", [S(a(2, 3), [0, 1]), S(a(2, 3, 2), [-1]), S(a(2, 3), []), S(ints(4), [0]), S(a(), [])],
           ref=lambda x, dims: np.flip(x, tuple(dims)) if x.ndim else x,
           error_samples=[S(a(2, 3), [0, 0]), S(a(2, 3), [2])]),
    OpInfo("repeat", [S(a(2, 3), [2, 1, 2]), S(a(2, 3), [1, 3]), S(a(2, 3), [0, 2]), S(a(), []), S(a(), [2, 2]),
                      S(ints(3), [2])],
           ref=lambda x, r: np.tile(x, tuple(r)), error_samples=[S(a(2, 3), [2]), S(a(2, 3), [-1, 2])]),
    OpInfo("index_select", [S(a(2, 3), 1, np.array([2, 0, 2])), S(a(4, 2), 0, np.array(1)), S(a(), 0, np.array([0])),
                            S(a(2, 3), -1, np.array([1], dtype=np.int32)), S(a(2, 3), 0, np.zeros(0, np.int64))],
           ref=lambda x, d, i: x.copy() if x.ndim == 0 else np.take(x, i.reshape(-1), axis=d),
           error_samples=[S(a(2, 3), 1, np.array([[0]])), S(a(), 0, np.array([0, 0]))]),  # and test_indexing_ops
    OpInfo("index_select_backward", [S(a(2, 3), [2, 3], 1, np.array([2, 0, 2])), S(a(1, 3), [4, 3], 0, np.array(1))]),
    OpInfo("index.Tensor", [S(a(2, 3, 4), [None, np.array([0, 2]), None]), S(a(2, 3, 4), [np.array([1, 0]), None, np.array([3, 1])]),
                            S(a(2, 3, 4), [None, np.array([[0], [1]]), np.array([1, 2, 3])]), S(a(3, 4), [np.array([0, 0, 2])]),
                            S(a(3), [np.array([], dtype=np.int64)]), S(a(3, 2), [np.array(-1)])],
           ref=lambda x, indices: x[tuple(slice(None) if i is None else i for i in indices)],
           error_samples=[S(a(2, 3), [np.array([0.0])]), S(a(2, 3), [None, None, np.array([0])]),
                          S(a(2, 3), [np.array([0, 1]), np.array([0, 1, 2])]), S(a(2, 3), [])]),
    OpInfo("index_put", [S(a(5), [np.array([0, 2])], a(2)), S(a(5), [np.array([0, 0, 2])], a(3), True),
                         S(a(3, 4), [np.array([0, 1]), np.array([1, 1])], a(2)), S(a(3, 4), [None, np.array([3])], a(3, 1), True),
                         S(a(3, 4), [np.array([2, 0])], a(4), True)],
           error_samples=[S(a(2, 3), [np.array([0])], a(2)), S(a(2, 3), [np.array([0])], ints(3)),
                          S(a(2, 3), [np.array([0.0])], a(3))]),
    OpInfo("index_put_", [S(a(5), [np.array([0, 2])], a(2)), S(a(5), [np.array([0, 0, 2])], a(3), True),
                          S(a(3, 4), [np.array([0, 1]), np.array([1, 1])], a(2)),
                          S(a(3, 4), [None, np.array([3])], a(3, 1), True),
                          S(a(3, 4), [np.array([True, False, True])], a().astype(np.float32))],
           inplace=True,
           error_samples=[S(a(2, 3), [np.array([0])], a(2)), S(a(2, 3), [np.array([0])], ints(3)),
                          S(a(2, 3), [np.array([0.0])], a(3))]),
    OpInfo("gather", [S(a(3, 4), 1, np.array([[0, 3], [1, 1]])), S(a(3, 4), 0, np.array([[0], [2]])),
                      S(a(), 0, np.array(0)), S(a(2, 3), 1, np.zeros((2, 0), np.int64)),
                      S(a(2, 3), -1, np.array([[2, 2, 2, 0]]))],
           error_samples=[S(a(3, 4), 1, np.array([0])), S(a(3, 4), 1, np.zeros((4, 1), np.int64))]),
    OpInfo("scatter_add", [S(a(3, 4), 1, np.array([[0, 3], [1, 1]]), a(2, 2)),
                           S(a(3, 4), 0, np.array([[0, 0, 2]]), a(1, 3)), S(a(), 0, np.array(0), a()),
                           S(a(4), 0, np.array([1, 1, 1]), a(3))],
           error_samples=[S(a(3, 4), 1, np.array([[0, 3], [1, 1]]), a(1, 2))]),
    OpInfo("nonzero", [S(np.array([[0.0, 1.5, 0.0], [np.nan, 0.0, -2.0]])), S(ints(2, 3, 2)), S(np.array(3.0)),
                       S(np.array(0.0)), S(np.array([True, False, True])), S(np.zeros((0, 3))), S(np.zeros((2, 2)))],
           ref=lambda x: np.argwhere(x) if x.ndim else np.zeros((int(x != 0), 0), np.int64), grad=False,
           meta_raises=NotImplementedError),
    OpInfo("split_with_sizes", [S(a(2, 3), [1, 2], 1), S(a(4, 2), [2, 0, 2]), S(a(3, 2, 2), [3], -3), S(ints(3), [1, 1, 1]),
                                S(a(0, 2), [0, 0])],
           ref=lambda x, sizes, dim=0: tuple(np.split(x, np.cumsum(sizes)[:-1], axis=dim)),
           error_samples=[S(a(2, 3), [1, 1], 1), S(a(2, 3), [-1, 4], 1), S(a(2, 3), [2], 2), S(a(), [1])]),
    OpInfo("scatter.src", [S(a(3, 4), 1, np.array([[0, 3], [1, 2]]), a(2, 2)), S(a(3, 4), 0, np.array([[0, 2, 1]]), Const(a(2, 3))),
                           S(a(), 0, np.array(0), a()), S(ints(4), 0, np.array([3, 0]), ints(2)),
                           S(a(2, 3), 1, np.zeros((2, 0), np.int64), Const(a(2, 2)))],  # src larger than index: no
           # gradient for src (PyTorch's engine rejects gather's index-shaped one, as od's does)
           error_samples=[S(a(3, 4), 1, np.array([[0, 3]]), ints(1, 2)), S(a(3, 4), 1, np.array([[0, 3], [1, 1]]), a(1, 2)),
                          S(a(3, 4), 1, np.array([0]), a(1))]),
    OpInfo("scatter.value", [S(a(3, 4), 1, np.array([[0, 3], [1, 2]]), 2.5), S(ints(3), 0, np.array([1]), 2.7),
                             S(a(), -1, np.array(0), -1), S(mask(2, 2), 0, np.array([[1, 0]]), True)],
           error_samples=[S(a(3, 4), 2, np.array([[0]]), 1.0), S(a(3, 4), 1, np.array([[0.0]]), 1.0)]),
    OpInfo("scatter_reduce.two", [S(a(3), 0, np.array([0, 0, 2, 2]), a(4), reduce, include_self=include_self)
                                  for reduce in ("sum", "prod", "mean", "amax", "amin") for include_self in (True, False)]
           + [S(a(3, 4), 1, np.array([[0, 3, 0], [1, 1, 2]]), a(2, 3), "mean"), S(a(), 0, np.array(0), a(), "amax"),
              S(ints(3), 0, np.array([1, 1]), ints(2), "mean"), S(ints(3), 0, np.array([2, 2]), ints(2), "amin", include_self=False),
              S(Const(np.array([1.0, 2.0])), 0, np.array([0, 0, 1]), Const(np.array([1.0, 3.0, np.nan])), "amax")],
           error_samples=[S(a(3), 0, np.array([0]), a(1), "median"), S(a(3), 0, np.array([0]), ints(1), "sum")]),
    OpInfo("masked_scatter", [S(a(2, 3), np.array([True, False, True]), a(7)), S(a(3), np.array([[True], [False]]), a(2, 3)),
                              S(a(2, 2), np.zeros((2, 2), bool), a(1)), S(a(), np.array(True), a(1)),
                              S(ints(2, 3), mask(2, 3), ints(6)), S(a(2, 3), mask(2, 3), a(2, 3))],
           error_samples=[S(a(2, 3), np.array([1, 0, 1]), a(7)), S(a(2, 3), np.array([True, False, True]), ints(7)),
                          S(a(2, 3), np.array([True, False]), a(7))]),
    OpInfo("masked_scatter_backward", [S(a(2, 3), np.array([[True, False, True]] * 2), [2, 3]),
                                       S(a(2, 3), mask(2, 3), [7]), S(a(2, 2), np.array([[True, True], [True, False]]), [3])],
           grad=False),
    OpInfo("select_scatter", [S(a(2, 3), a(3), 0, -1), S(a(2, 3, 2), a(2, 2), 1, 0), S(a(2, 3), a(2), 1, 2)],
           error_samples=[S(a(2, 3), a(2), 0, 0), S(a(2, 3), a(3), 0, 2)]),
    OpInfo("slice_scatter", [S(a(2, 3), a(2, 2), 1, 1), S(a(2, 3), a(2, 2), 1, 0, None, 2),
                             S(a(2, 3), a(2, 1), 1, -1, 10), S(a(4, 2), a(4, 2))],
           error_samples=[S(a(2, 3), a(2, 3), 1, 1)]),
    OpInfo("cat", [S([a(2, 3), a(1, 3)]), S([a(2, 1), a(2, 2), a(2, 3)], -1), S([a(2), ints(2)])],
           ref=lambda ts, dim=0: np.concatenate(ts, axis=dim)),
    OpInfo("stack", [S([a(2, 3), a(2, 3)], 1), S([a(2), a(2), a(2)]), S([ints(2), a(2)], -1)],
           ref=lambda ts, dim=0: np.stack(ts, axis=dim)),
    OpInfo("split.Tensor", [S(a(5, 2), 2), S(a(2, 3), 3, 1), S(a(3, 4), 1, -1), S(ints(4), 4), S(a(0, 2), 0)],
           ref=lambda x, size, dim=0: tuple(np.split(x, range(size, x.shape[dim], size), axis=dim))
           if x.shape[dim] else (x,),
           error_samples=[S(a(2, 3), -1), S(a(2, 3), 0), S(a(), 1), S(a(2, 3), 1, 2)]),
    OpInfo("chunk", [S(a(5, 2), 2), S(a(5, 2), 3), S(a(2, 3), 3, 1), S(a(3, 2), 5), S(a(0, 2), 3), S(ints(4), 2, -1)],
           error_samples=[S(a(2, 3), 0), S(a(), 1), S(a(2, 3), 2, 2)]),
    OpInfo("narrow", [S(a(5, 2), 0, 1, 2), S(a(5, 2), 1, -1, 1), S(a(4, 3), -2, 0, 0), S(ints(3), 0, 3, 0)],
           ref=lambda x, d, start, n: np.take(x, range(start % x.shape[d] if start < 0 else start,
                                                       (start % x.shape[d] if start < 0 else start) + n), axis=d),
           error_samples=[S(a(), 0, 0, 1), S(a(5, 2), 0, 6, 1), S(a(5, 2), 0, -6, 1), S(a(5, 2), 0, 3, 3),
                          S(a(5, 2), 0, 1, -1), S(a(5, 2), 2, 0, 1)]),
]

# The families' samples (tests/opinfo/): imported here, after the helpers they use are defined.
from opinfo import family_ops  # noqa: E402

OPS += family_ops()

OPS_BY_NAME = {info.name: info for info in OPS}
assert len(OPS_BY_NAME) == len(OPS), "duplicate OpInfo names"
