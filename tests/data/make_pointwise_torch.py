"""Regenerates tests/data/pointwise_torch.json: what PyTorch 2.13 gives for
the pointwise operators of issue 31 (values, dtypes, shapes, gradients,
errors, schemas and tags), the reference for tests/test_pointwise_ops.py.

Run with a Python that has PyTorch (torch is not a test dependency):

    /path/to/torch-venv/bin/python tests/data/make_pointwise_torch.py

A tensor argument is written {"values": nested list, "dtype": name} and, with
"t": true, passed transposed (a non-contiguous view of the values' transpose).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent

F = [[-1.7, -0.6, 0.0], [0.45, 1.2, 2.6]]
G = [[0.3, -1.1, 0.8], [1.5, -0.2, 0.7]]
I = [[-7, -3, 0], [3, 7, 5]]
J = [[2, -3, 4], [-2, 5, 3]]
B = [[True, False, True], [False, False, True]]
B2 = [[True, True, False], [False, True, True]]
ROW = [0.5, -2.0, 1.25]


def t(values, dtype="float64", transposed=False):
    return {"values": values, "dtype": dtype, "t": transposed}


def float_cases(op, *extra, **kw):
    """op on F in float64 (contiguous and transposed), float32 and float16, 0-d, empty, and integers."""
    return [(op, [t(F), *extra], kw), (op, [t(F, transposed=True), *extra], kw),
            (op, [t(F, "float32"), *extra], kw), (op, [t(F, "float16"), *extra], kw),
            (op, [t(0.7), *extra], kw), (op, [t([]), *extra], kw), (op, [t(I, "int64"), *extra], kw)]


CASES = [
    *[c for op in ("atan2",) for c in [
        (op, [t(F), t(G)], {}), (op, [t(F), t(ROW)], {}), (op, [t(F, transposed=True), t(G, transposed=True)], {}),
        (op, [t(F, "float32"), t(G, "float16")], {}), (op, [t(I, "int64"), t(J, "int32")], {}),
        (op, [t(F, "float32"), t(0.5)], {}), (op, [t(B, "bool"), t(J, "int8")], {}), (op, [t(0.3), t([])], {})]],
    ("atan2.out", [t(F), t(G)], {"out": t([[0.0] * 3] * 2, "float32")}),
    ("atan2.out", [t(F), t(G)], {"out": t([[0] * 3] * 2, "int64")}),
    *[("div.Tensor_mode", [x, y], {"rounding_mode": mode}) for mode in (None, "trunc", "floor")
      for x, y in ((t(F), t(G)), (t(I, "int64"), t(J, "int64")), (t(I, "int32"), t(ROW)),
                   (t(I, "int64", True), t(J, "int16", True)), (t(F, "float16"), t(J, "int64")))],
    ("div.Tensor_mode", [t(I, "int64"), t([[0, 1, 1], [1, 1, 1]], "int64")], {"rounding_mode": "floor"}),
    ("div.Tensor_mode", [t(F), t(G)], {"rounding_mode": "round"}),
    *[("div.Scalar_mode", [x, y], {"rounding_mode": mode}) for mode in (None, "trunc", "floor")
      for x, y in ((t(F), 0.7), (t(I, "int64"), 3), (t(I, "int64"), -2.5), (t(B, "bool"), 2))],
    *[(f"{op}.Tensor", [x, y], {}) for op in ("fmod", "remainder")
      for x, y in ((t(F), t(G)), (t(I, "int64"), t(J, "int64")), (t(I, "int8"), t(J, "uint8")),
                   (t(F, "float32", True), t(G, "float32", True)), (t(I, "int64"), t(ROW)))],
    *[(f"{op}.Scalar", [x, y], {}) for op in ("fmod", "remainder")
      for x, y in ((t(F), 0.7), (t(I, "int64"), 3), (t(I, "int64"), -3), (t(I, "int16"), 2.5), (t(F), 0.0))],
    ("fmod.Scalar", [t(I, "int64"), 0], {}), ("remainder.Tensor", [t(I, "int64"), t(0, "int64")], {}),
    *[("clamp", [x], kw) for x in (t(F), t(I, "int64"), t(F, "float16"), t(B, "bool"), t(F, transposed=True))
      for kw in ({"min": -0.5, "max": 1.0}, {"min": 0}, {"max": 0.5}, {"min": 1.0, "max": -1.0})],
    ("clamp", [t(F)], {}),
    *[("clamp.Tensor", [x], kw) for x in (t(F), t(I, "int64"))
      for kw in ({"min": t(ROW)}, {"min": t(0.2), "max": t(G)}, {"max": t(J, "int32")})],
    *[(f"{op}.Tensor", [x, y], {}) for op in ("bitwise_and", "bitwise_or", "bitwise_xor")
      for x, y in ((t(I, "int64"), t(J, "int64")), (t(B, "bool"), t(B2, "bool")), (t(I, "uint8"), t(J, "int8")),
                   (t(I, "int32", True), t(J, "int32", True)), (t(F), t(G)))],
    *[(f"{op}.Scalar", [x, y], {}) for op in ("bitwise_and", "bitwise_or", "bitwise_xor")
      for x, y in ((t(I, "int64"), 6), (t(B, "bool"), True), (t(B, "bool"), 3), (t(I, "int16"), -1))],
    *[(op, [x, y], {}) for op in ("logical_and", "logical_or", "logical_xor")
      for x, y in ((t(F), t(I, "int64")), (t(B, "bool"), t(B2, "bool")), (t(F, "float16", True), t(G, "float16")),
                   (t(F), t(0.0)))],
    *float_cases("erf"),
    *float_cases("elu"), ("elu", [t(F), 0.5, 2.0, 1.5], {}),
    *float_cases("gelu"), *[c for c in float_cases("gelu", approximate="tanh")], ("gelu", [t(F)], {"approximate": "x"}),
    *float_cases("hardtanh"), ("hardtanh", [t(F), -0.5, 2.0], {}),
    *float_cases("leaky_relu"), ("leaky_relu", [t(F), 0.2], {}),
    ("fill.Scalar", [t(F), 2.5], {}), ("fill.Scalar", [t(I, "int64"), 2.7], {}), ("fill.Scalar", [t(F), True], {}),
    ("fill.Scalar", [t(B, "bool"), 0], {}), ("fill.Scalar", [t(F, transposed=True), -1], {}),
    ("copy", [t(F), t(G)], {}), ("copy", [t(F), t(ROW, "float32")], {}), ("copy", [t(I, "int64"), t(G)], {}),
    ("copy", [t(F, transposed=True), t(J, "int32", True)], {}), ("copy", [t(ROW), t(F)], {}),
    ("gelu_backward", [t(G), t(F)], {}), ("gelu_backward", [t(G), t(F)], {"approximate": "tanh"}),
    ("elu_backward", [t(G), 1.0, 1.0, 1.0, False, t(F)], {}), ("elu_backward", [t(G), 0.5, 2.0, 1.5, True, t(F)], {}),
    ("hardtanh_backward", [t(G), t(F), -1.0, 1.0], {}), ("leaky_relu_backward", [t(G), t(F), 0.2, False], {}),
    # in-place forms: the result (self, updated) and errors for results self cannot hold
    ("clamp_", [t(F)], {"min": -0.5, "max": 1.0}), ("clamp_", [t(I, "int64")], {"min": 0.5}),
    ("clamp_", [t(F, transposed=True)], {"max": 0.0}), ("clamp_.Tensor", [t(F)], {"min": t(ROW)}),
    ("clamp_.Tensor", [t(ROW)], {"min": t(F)}),
    *[(f"{op}_.Scalar", [x, y], {}) for op in ("fmod", "remainder", "floor_divide")
      for x, y in ((t(F), 0.7), (t(I, "int64"), 3), (t(I, "int64"), 2.5))],
    *[(f"{op}_.Tensor", [x, y], {}) for op in ("fmod", "remainder", "floor_divide")
      for x, y in ((t(F), t(G)), (t(I, "int32"), t(J, "int64")), (t(F, "float32"), t(ROW)))],
    *[(f"{op}_.{ov}", [x, y], {}) for op in ("bitwise_and", "bitwise_or", "bitwise_xor")
      for ov, x, y in (("Tensor", t(I, "int64"), t(J, "int8")), ("Tensor", t(B, "bool"), t(B2, "bool")),
                       ("Scalar", t(I, "int16"), 6), ("Tensor", t(B, "bool"), t(J, "int64")))],
    ("clamp_min_", [t(F), 0.3], {}), ("clamp_max_", [t(I, "int64"), 2], {}), ("clamp_max_", [t(I, "int64"), 2.5], {}),
    # everyday non-core operators (PyTorch gives them kernels of their own)
    *[("floor_divide", [x, y], {}) for x, y in ((t(F), t(G)), (t(I, "int64"), t(J, "int64")), (t(I, "int8"), t(ROW)))],
    ("floor_divide.Scalar", [t(I, "int64"), -2], {}), ("floor_divide.Scalar", [t(F), 0.7], {}),
    *[c for op in ("clamp_min", "clamp_max") for c in [
        (op, [t(F), 0.3], {}), (op, [t(I, "int64"), 2], {}), (op, [t(I, "int64"), 2.5], {}),
        (f"{op}.Tensor", [t(F), t(ROW)], {}), (f"{op}.Tensor", [t(I, "int64"), t(G)], {})]],
    *float_cases("exp2"),
    *[c for op in ("silu", "hardsigmoid", "hardswish", "softplus") for c in float_cases(op)],
    ("softplus", [t([[-3.0, 0.5, 4.0], [9.0, 11.0, -0.2]]), 2.0, 10.0], {}),
    ("hardsigmoid_backward", [t(G), t([[-3.5, -1.0, 0.0], [2.0, 3.5, 2.9]])], {}),
    ("hardswish_backward", [t(G), t([[-3.5, -1.0, 0.0], [2.0, 3.5, 2.9]])], {}),
    ("softplus_backward", [t(G), t(F), 2.0, 3.0], {}),
    # PyTorch's CompositeImplicitAutograd operators
    *[(op, [x], {}) for op in ("square", "negative", "absolute", "fix", "positive", "arccos", "arcsin", "arctan",
                                 "relu6", "selu")
      for x in (t([[-0.9, -0.4, 0.0], [0.3, 0.6, 0.8]]), t(I, "int64"), t(F, "float32", True))],
    ("positive", [t(B, "bool")], {}), ("square", [t(B, "bool")], {}),
    *[(op, [x, y], {}) for op in ("true_divide.Tensor", "divide.Tensor", "multiply.Tensor", "subtract.Tensor",
                                  "arctan2")
      for x, y in ((t(F), t(G)), (t(I, "int64"), t(J, "int64")), (t(I, "int32"), t(ROW)))],
    ("subtract.Tensor", [t(F), t(G)], {"alpha": 2}),
    *[(op, [x, 3], {}) for op in ("true_divide.Scalar", "divide.Scalar") for x in (t(F), t(I, "int64"))],
    *[("divide.Tensor_mode", [t(I, "int64"), t(J, "int64")], {"rounding_mode": m}) for m in (None, "trunc", "floor")],
    ("clip", [t(F)], {"min": -0.5, "max": 1.0}), ("clip", [t(I, "int64")], {"min": 0.5}),
    ("clip.Tensor", [t(F)], {"min": t(ROW)}), ("silu_backward", [t(G), t(F)], {}),
]

#: Tensor methods, public functions and Python operators (the operator module's names), called the same way
#: on PyTorch and opdispatch tensors: (kind, name, args, kwargs).
CALLS = [
    ("method", "atan2", [t(F), t(G)], {}), ("function", "atan2", [t(F), t(ROW)], {}),
    ("method", "clamp", [t(F)], {"min": 0}), ("function", "clamp", [t(I, "int64")], {"min": -1, "max": 2.5}),
    ("method", "clamp", [t(F), t(ROW)], {}), ("method", "clamp_", [t(F)], {"max": 0.5}),
    ("method", "clip", [t(F), -1, 1], {}), ("method", "clamp_min", [t(F), 0.5], {}),
    ("method", "clamp_max", [t(F), t(ROW)], {}), ("method", "clamp_min_", [t(F), 0.1], {}),
    ("method", "isnan", [t(F)], {}), ("method", "floor", [t(F)], {}), ("method", "erf", [t(F)], {}),
    ("method", "exp2", [t(I, "int64")], {}), ("function", "square", [t(I, "int32")], {}),
    ("method", "div", [t(I, "int64"), 2], {"rounding_mode": "floor"}),
    ("function", "div", [t(F), t(G)], {"rounding_mode": "trunc"}), ("method", "divide", [t(I, "int64"), 4], {}),
    ("method", "true_divide", [t(I, "int64"), t(J, "int64")], {}), ("method", "floor_divide", [t(F), 0.7], {}),
    ("method", "fmod", [t(F), t(G)], {}), ("function", "remainder", [t(I, "int64"), -3], {}),
    ("method", "fmod_", [t(F), 0.5], {}), ("method", "remainder_", [t(I, "int64"), t(J, "int64")], {}),
    ("method", "bitwise_and", [t(I, "int64"), 3], {}), ("function", "bitwise_xor", [t(B, "bool"), t(B2, "bool")], {}),
    ("method", "bitwise_or_", [t(I, "int16"), t(J, "int16")], {}), ("method", "logical_and", [t(F), t(I, "int64")], {}),
    ("function", "logical_or", [t(B, "bool"), t(G)], {}), ("method", "multiply", [t(F), t(G)], {}),
    ("method", "subtract", [t(F), t(G)], {"alpha": 3}), ("function", "negative", [t(I, "int8")], {}),
    ("function", "absolute", [t(F)], {}), ("method", "fix", [t(F)], {}), ("function", "arccos", [t(ROW, "float32")], {}),
    ("operator", "and_", [t(I, "int64"), t(J, "int64")], {}), ("operator", "and_", [5, t(I, "int64")], {}),
    ("operator", "or_", [t(B, "bool"), True], {}), ("operator", "xor", [t(I, "uint8"), t(J, "int8")], {}),
    ("operator", "invert", [t(I, "int64")], {}), ("operator", "invert", [t(B, "bool")], {}),
    ("operator", "floordiv", [t(I, "int64"), 2], {}), ("operator", "floordiv", [7, t(J, "int64")], {}),
    ("operator", "floordiv", [t(F), t(G)], {}), ("operator", "mod", [t(I, "int64"), 3], {}),
    ("operator", "mod", [7.5, t(G)], {}), ("operator", "mod", [t(F), t(G)], {}), ("operator", "pos", [t(F)], {}),
    ("operator", "pos", [t(B, "bool")], {}), ("operator", "iand", [t(I, "int64"), 6], {}),
    ("operator", "ior", [t(B, "bool"), t(B2, "bool")], {}), ("operator", "ixor", [t(I, "int64"), t(J, "int64")], {}),
    ("operator", "ifloordiv", [t(I, "int64"), 3], {}), ("operator", "imod", [t(F), 0.5], {}),
    ("operator", "imod", [t(I, "int64"), 2.5], {}), ("operator", "truediv", [3, t(I, "int64")], {}),
    ("function", "result_type", [t(I, "int32"), 2.5], {}), ("function", "result_type", [t(F, "float16"), t(1, "int64")], {}),
]

#: Operators whose float64 gradients are recorded (sum of the output, backward).
DIFFERENTIABLE = {"atan2", "div.Tensor_mode", "div.Scalar_mode", "fmod.Tensor", "fmod.Scalar", "remainder.Tensor",
                  "remainder.Scalar", "clamp", "clamp.Tensor", "erf", "elu", "gelu", "hardtanh", "leaky_relu",
                  "fill.Scalar", "gelu_backward", "elu_backward", "hardtanh_backward", "leaky_relu_backward",
                  "clamp_min", "clamp_max", "clamp_min.Tensor", "clamp_max.Tensor", "exp2", "silu", "hardsigmoid",
                  "hardswish", "softplus", "hardsigmoid_backward", "hardswish_backward", "softplus_backward",
                  "square", "negative", "absolute", "fix", "positive", "arccos", "arcsin", "arctan", "relu6", "selu",
                  "true_divide.Tensor", "divide.Tensor", "multiply.Tensor", "subtract.Tensor", "arctan2",
                  "true_divide.Scalar", "divide.Scalar", "clip", "clip.Tensor", "silu_backward"}

NEW_OPS = sorted({name for name, _, _ in CASES})


def make(spec, requires_grad=False):
    if not isinstance(spec, dict):
        return spec
    dtype = getattr(torch, spec["dtype"])
    x = torch.tensor(spec["values"], dtype=dtype)
    if spec["t"]:
        x = x.t().contiguous().t() if x.dim() == 2 else x
    if requires_grad and x.dtype.is_floating_point:
        x = x.detach().requires_grad_()
    return x


def plain(x):
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if isinstance(x, list):
        return [plain(v) for v in x]
    return x


def overload(name):
    base, _, ov = name.partition(".")
    return getattr(getattr(torch.ops.aten, base), ov or "default")


def run(name, args, kwargs):
    op = overload(name)
    case = {"op": name, "args": args, "kwargs": kwargs}
    try:
        out = op(*[make(a) for a in args], **{k: make(v) for k, v in kwargs.items()})
    except Exception as e:  # noqa: BLE001  (the error is what is recorded)
        case["error"] = [type(e).__name__, str(e).split("\n")[0]]
        return case
    case["dtype"] = str(out.dtype).removeprefix("torch.")
    case["shape"] = list(out.shape)
    case["values"] = plain(out.tolist())
    if name in DIFFERENTIABLE and "out" not in kwargs and all(
            not isinstance(a, dict) or a["dtype"] == "float64" for a in [*args, *kwargs.values()]):
        leaves = [make(a, True) for a in args]
        kw = {k: make(v, True) for k, v in kwargs.items()}
        out = op(*leaves, **kw)
        inputs = [x for x in [*leaves, *kw.values()] if isinstance(x, torch.Tensor) and x.requires_grad]
        if out.requires_grad:
            try:
                grads = torch.autograd.grad(out.sum(), inputs, allow_unused=True)
            except RuntimeError as e:  # "derivative for aten::... is not implemented"
                case["grad_error"] = str(e).split("\n")[0]
            else:
                case["grads"] = [None if g is None else plain(g.tolist()) for g in grads]
    return case


def call(kind, name, args, kwargs):
    """A method, function or operator call (see CALLS): its result (values, or a dtype's name) or its error."""
    import operator

    case = {"kind": kind, "name": name, "args": args, "kwargs": kwargs}
    values = [make(a) for a in args]
    fn = {"method": lambda: getattr(values[0], name)(*values[1:], **{k: make(v) for k, v in kwargs.items()}),
          "function": lambda: getattr(torch, name)(*values, **{k: make(v) for k, v in kwargs.items()}),
          "operator": lambda: getattr(operator, name)(*values)}[kind]
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001  (the error is what is recorded)
        case["error"] = [type(e).__name__, str(e).split("\n")[0]]
        return case
    if isinstance(out, torch.dtype):
        case["dtype_result"] = str(out).removeprefix("torch.")
        return case
    case["dtype"] = str(out.dtype).removeprefix("torch.")
    case["shape"] = list(out.shape)
    case["values"] = plain(out.tolist())
    return case


def main() -> None:
    data = {
        "calls": [call(*c) for c in CALLS],
        "source": f"PyTorch {torch.__version__} (tests/data/make_pointwise_torch.py)",
        "cases": [run(*c) for c in CASES],
        "schemas": {name: str(overload(name)._schema).removeprefix("aten::") for name in NEW_OPS},
        "tags": {name: sorted(t.name for t in overload(name).tags) for name in NEW_OPS},
    }
    (HERE / "pointwise_torch.json").write_text(json.dumps(data, indent=0) + "\n")


if __name__ == "__main__":
    main()
