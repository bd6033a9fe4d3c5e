"""Samples of the pointwise operators of _builtins/binary_math.py, logical.py,
activation.py, pointwise_decompositions.py, erf, exp2 and the functional fill
and copy (and their in-place forms): 0-d and empty shapes,
broadcasting, integer, bool and float16/32/64 operands, NumPy references
where they are simple. PyTorch 2.13's values and dtypes for them are checked
in tests/test_pointwise_ops.py."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from op_db import Const, OpInfo, S, a, ints, mask, pos


def f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def f16(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16)


def nonzero_ints(*shape: int) -> np.ndarray:
    """Integers in [-5, 5] without 0 (divisors: integer division by zero raises)."""
    x = ints(*shape)
    return np.where(x == 0, 3, x)


def away_from(*points: float, shape: tuple[int, ...] = (2, 3)) -> np.ndarray:
    """Float64 values in [-2.5, 2.5] at least 0.1 from each of ``points`` (kinks of hardtanh, clamp)."""
    x = a(*shape) * 1.2
    for p in points:
        x = np.where(np.abs(x - p) < 0.1, p + 0.3, x)
    return x


def _trunc_div(x, y, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(x, y)
    q = np.trunc(np.true_divide(x, y)) if rounding_mode == "trunc" else np.floor_divide(x, y)
    return q.astype(np.result_type(x, y)) if np.result_type(x, y).kind in "iu" else q


def _clamp(x, lo=None, hi=None):
    lo_arr = getattr(lo, "array", lo)
    hi_arr = getattr(hi, "array", hi)
    out = x if lo_arr is None else np.maximum(x, lo_arr)
    return out if hi_arr is None else np.minimum(out, hi_arr)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def _elu(x, alpha=1, scale=1, input_scale=1):
    return np.where(x > 0, scale * x, alpha * scale * np.expm1(x * input_scale))


OPS = [
    # --- two operands -------------------------------------------------------------------------------------
    OpInfo("atan2", [S(a(2, 3), a(3)), S(a(), a(2, 1)), S(a(0, 3), a(3)), S(f32(a(3)), f32(a(3))),
                     S(ints(3), ints(3)).promotes_to(np.float32), S(f16(a(2)), f16(a(2)))], ref=np.arctan2),
    OpInfo("atan2.out", [S(a(2, 3), a(3), out=Const(np.zeros((2, 3)))),
                         S(f32(a(3)), f32(a(3)), out=Const(np.zeros(3)))],
           ref=lambda x, y, out: np.arctan2(x, y).astype(out.array.dtype), grad=False),
    OpInfo("div.Tensor_mode", [S(a(2, 3), pos(3), rounding_mode="trunc"), S(a(2, 3), a(2, 1), rounding_mode="floor"),
                               S(a(3), pos(3), rounding_mode=None), S(ints(2, 3), nonzero_ints(3), rounding_mode="trunc"),
                               S(ints(3), nonzero_ints(3), rounding_mode="floor"), S(a(), pos(0), rounding_mode="floor"),
                               S(f16(a(3)), f16(pos(3)), rounding_mode="trunc")],
           ref=lambda x, y, rounding_mode=None: _trunc_div(x, y, rounding_mode)),
    OpInfo("div.Scalar_mode", [S(a(2, 3), 0.7, rounding_mode="trunc"), S(a(2, 3), -2, rounding_mode="floor"),
                               S(ints(4), 3, rounding_mode="trunc"), S(ints(4), -3, rounding_mode="floor"),
                               S(a(3), 4.0, rounding_mode=None)],
           ref=lambda x, y, rounding_mode=None: _trunc_div(x, np.asarray(y, np.result_type(x, y)) if x.dtype.kind == "f"
                                                           else y, rounding_mode)),
    OpInfo("fmod.Tensor", [S(a(2, 3), pos(3)), S(a(3), a(2, 1)), S(ints(2, 3), nonzero_ints(3)), S(a(), pos(0)),
                           S(f32(a(3)), f32(pos(3)))], ref=np.fmod),
    OpInfo("fmod.Scalar", [S(a(2, 3), 0.7), S(ints(4), 3), S(ints(4), -3), S(a(), 1.5)], ref=np.fmod),
    OpInfo("remainder.Tensor", [S(a(2, 3), pos(3)), S(a(3), a(2, 1)), S(ints(2, 3), nonzero_ints(3)),
                                S(f32(a(3)), f32(pos(3)))], ref=np.remainder),
    OpInfo("remainder.Scalar", [S(a(2, 3), 0.7), S(ints(4), 3), S(ints(4), -3), S(a(0), 2.0)], ref=np.remainder),
    OpInfo("clamp", [S(away_from(-0.5, 0.5), -0.5, 0.5), S(away_from(0.0), 0.0), S(away_from(1.0), None, 1.0),
                     S(ints(4), 1, 4), S(ints(4), -1.5).promotes_to(np.float32), S(a(), 0.2, -0.2), S(a(0, 2), 0),
                     S(mask(3), 0).promotes_to(np.int64), S(f16(away_from(0.3)), 0.3)], ref=_clamp),
    OpInfo("clamp.Tensor", [S(away_from(0.0), Const(np.zeros(3)), None),
                            S(a(2, 3), np.full(3, -0.5), np.full((2, 1), 0.5)),
                            S(a(2, 3), None, Const(np.full(3, 0.1))), S(ints(4), ints(4), None),
                            S(ints(3), Const(np.array(0.5)))],
           ref=_clamp),
    # --- bitwise and logical ---------------------------------------------------------------------------------
    *[OpInfo(f"{name}.{overload}", samples, ref=ufunc, grad=False)
      for name, ufunc in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                          ("bitwise_xor", np.bitwise_xor))
      for overload, samples in (
          ("Tensor", [S(ints(2, 3, high=100), ints(3, high=100)), S(mask(3), mask(2, 3)),
                      S(ints(3).astype(np.uint8), ints(3).astype(np.int8)), S(ints(), ints(0))]),
          ("Scalar", [S(ints(2, 3, high=100), 6), S(mask(3), True), S(ints(3).astype(np.int16), 3)]))],
    *[OpInfo(name, [S(a(2, 3), ints(3)), S(mask(3), mask(2, 3)), S(a(), a(0)), S(f16(a(3)), mask(3))],
             ref=ufunc, grad=False)
      for name, ufunc in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                          ("logical_xor", np.logical_xor))],
    # --- one operand --------------------------------------------------------------------------------------------
    OpInfo("erf", [S(a(2, 3)), S(f32(a(3))), S(a()), S(a(0)), S(ints(3)).promotes_to(np.float32)], ref=erf),
    OpInfo("elu", [S(a(2, 3)), S(a(3), 0.5, 2.0, 1.5), S(f32(a(3))), S(a()), S(f16(a(3)))], ref=_elu),
    OpInfo("gelu", [S(a(2, 3)), S(a(2, 3), approximate="tanh"), S(f32(a(3))), S(a()), S(a(0)),
                    S(f16(a(3)), approximate="tanh")], ref=_gelu),
    OpInfo("hardtanh", [S(away_from(-1.0, 1.0)), S(away_from(-0.5, 2.0), -0.5, 2.0), S(ints(4), -2, 2), S(a()),
                        S(f16(away_from(-1.0, 1.0)))],
           ref=lambda x, lo=-1, hi=1: np.clip(x, lo, hi)),
    OpInfo("leaky_relu", [S(a(2, 3)), S(a(3), 0.2), S(f32(a(3)), -0.1), S(a()), S(f16(a(2)))],
           ref=lambda x, slope=0.01: np.where(x > 0, x, x * slope)),
    OpInfo("fill.Scalar", [S(a(2, 3), 2.5), S(ints(3), 2.7), S(a(), True), S(mask(2), 0)],
           ref=lambda x, v: np.full(x.shape, v, x.dtype)),
    OpInfo("copy", [S(a(2, 3), a(3)), S(a(2, 3), ints(2, 3)), S(ints(3), a(3)), S(f32(a(3)), a(1)), S(a(), a())],
           ref=lambda x, src, non_blocking=False: np.broadcast_to(src, x.shape).astype(x.dtype), grad=False),
    # --- backward operators -------------------------------------------------------------------------------------
    OpInfo("elu_backward", [S(a(2, 3), 1.0, 1.0, 1.0, False, a(2, 3)), S(a(3), 0.5, 2.0, 1.5, False, a(2, 3)),
                            S(a(2, 3), 1.0, 1.0, 1.0, True, a(2, 3))],
           ref=lambda g, alpha, scale, input_scale, is_result, x: np.where(
               x > 0, g * scale, g * input_scale * (x + alpha * scale) if is_result
               else g * input_scale * alpha * scale * np.exp(x * input_scale))),
    OpInfo("gelu_backward", [S(a(2, 3), a(2, 3)), S(a(3), a(2, 3), approximate="tanh"), S(f32(a(3)), f32(a(3)))]),
    OpInfo("hardtanh_backward", [S(a(2, 3), away_from(-1.0, 1.0), -1, 1), S(a(3), away_from(-0.5, 0.5), -0.5, 0.5)],
           ref=lambda g, x, lo, hi: np.where((x <= lo) | (x >= hi), 0, g)),
    OpInfo("leaky_relu_backward", [S(a(2, 3), a(2, 3), 0.01, False), S(a(3), a(2, 3), 0.2, True)],
           ref=lambda g, x, slope, is_result: np.where(x > 0, g, g * slope)),
    OpInfo("hardsigmoid_backward", [S(a(2, 3), away_from(-3.0, 3.0) * 2), S(f32(a(3)), f32(a(3)))], grad=False),
    OpInfo("hardswish_backward", [S(a(2, 3), away_from(-3.0, 3.0) * 2), S(a(3), a(2, 3))]),
    OpInfo("softplus_backward", [S(a(2, 3), a(2, 3), 1, 20), S(a(3), a(2, 3), 2.0, 1.0)]),
    OpInfo("silu_backward", [S(a(2, 3), a(2, 3)), S(f32(a(3)), f32(a(3)))], grad=False),
    # --- in-place forms ------------------------------------------------------------------------------------------
    OpInfo("clamp_", [S(away_from(-0.5, 0.5), -0.5, 0.5), S(ints(4), 1, 4), S(away_from(0.0), None, 0.0)],
           ref=_clamp, inplace=True),
    OpInfo("clamp_.Tensor", [S(away_from(0.0), Const(np.zeros(3)), None), S(ints(4), ints(4), None)],
           ref=_clamp, inplace=True),
    OpInfo("fmod_.Scalar", [S(a(2, 3), 0.7), S(ints(4), 3)], ref=np.fmod, inplace=True),
    OpInfo("fmod_.Tensor", [S(a(2, 3), pos(3)), S(ints(2, 3), nonzero_ints(3))], ref=np.fmod, inplace=True),
    OpInfo("remainder_.Scalar", [S(a(2, 3), 0.7), S(ints(4), -3)], ref=np.remainder, inplace=True),
    OpInfo("remainder_.Tensor", [S(a(2, 3), pos(3)), S(ints(2, 3), nonzero_ints(3))], ref=np.remainder, inplace=True),
    OpInfo("floor_divide_.Scalar", [S(a(2, 3), 0.7), S(ints(4), -2)], ref=np.floor_divide, inplace=True, grad=False),
    OpInfo("floor_divide_.Tensor", [S(a(2, 3), pos(3)), S(ints(2, 3), nonzero_ints(3))], ref=np.floor_divide,
           inplace=True, grad=False),
    OpInfo("clamp_min_", [S(away_from(0.3), 0.3), S(ints(4), 1)], ref=np.maximum, inplace=True),
    OpInfo("clamp_max_", [S(away_from(0.3), 0.3), S(ints(4), 1)], ref=np.minimum, inplace=True),
    *[OpInfo(f"{name}_.{overload}", samples, ref=ufunc, grad=False, inplace=True)
      for name, ufunc in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                          ("bitwise_xor", np.bitwise_xor))
      for overload, samples in (("Tensor", [S(ints(2, 3, high=100), ints(3, high=100)), S(mask(3), mask(3))]),
                                ("Scalar", [S(ints(2, 3, high=100), 6), S(mask(3), True)]))],
    # --- everyday non-core operators with kernels of their own ----------------------------------------------------
    OpInfo("floor_divide", [S(a(2, 3), pos(3)), S(ints(2, 3), nonzero_ints(3)), S(ints(3), pos(2, 1))],
           ref=np.floor_divide, grad=False),
    OpInfo("floor_divide.Scalar", [S(a(2, 3), 0.7), S(ints(4), -2), S(a(0), 2)], ref=np.floor_divide, grad=False),
    OpInfo("clamp_min", [S(away_from(0.3), 0.3), S(ints(4), 1), S(a(), 0.0)], ref=np.maximum),
    OpInfo("clamp_min.Tensor", [S(a(2, 3), a(3)), S(ints(3), ints(2, 3))], ref=np.maximum),
    OpInfo("clamp_max", [S(away_from(0.3), 0.3), S(ints(4), 1), S(a(0, 2), 0.0)], ref=np.minimum),
    OpInfo("clamp_max.Tensor", [S(a(2, 3), a(3)), S(ints(3), ints(2, 3))], ref=np.minimum),
    OpInfo("exp2", [S(a(2, 3)), S(f32(a(3))), S(a()), S(ints(3)).promotes_to(np.float32)], ref=np.exp2),
    OpInfo("silu", [S(a(2, 3)), S(f32(a(3))), S(a())], ref=lambda x: x / (1 + np.exp(-x))),
    OpInfo("hardsigmoid", [S(away_from(-3.0, 3.0) * 2), S(f32(a(3)))], ref=lambda x: np.clip(x / 6 + 0.5, 0, 1)),
    OpInfo("hardswish", [S(away_from(-3.0, 3.0) * 2), S(f32(a(3)))], ref=lambda x: x * np.clip(x + 3, 0, 6) / 6),
    OpInfo("softplus", [S(a(2, 3)), S(a(3) * 5, 2.0, 3.0), S(f32(a(3)))],
           ref=lambda x, beta=1, threshold=20: np.where(x * beta > threshold, x, np.log1p(np.exp(x * beta)) / beta)),
    # --- PyTorch's CompositeImplicitAutograd operators ---------------------------------------------------------------
    OpInfo("square", [S(a(2, 3)), S(ints(3)), S(mask(2)).promotes_to(np.int64)], ref=np.square),
    OpInfo("true_divide.Tensor", [S(a(2, 3), pos(3)), S(ints(3), nonzero_ints(3)).promotes_to(np.float32)],
           ref=np.true_divide),
    OpInfo("true_divide.Scalar", [S(a(2, 3), 4.0), S(ints(3), 2).promotes_to(np.float32)], ref=np.true_divide),
    OpInfo("divide.Tensor", [S(a(2, 3), pos(3))], ref=np.true_divide),
    OpInfo("divide.Scalar", [S(a(2, 3), 4.0)], ref=np.true_divide),
    OpInfo("divide.Tensor_mode", [S(a(2, 3), pos(3), rounding_mode="floor"), S(a(3), pos(3), rounding_mode=None)],
           ref=lambda x, y, rounding_mode=None: _trunc_div(x, y, rounding_mode)),
    OpInfo("multiply.Tensor", [S(a(2, 3), a(3))], ref=np.multiply),
    OpInfo("subtract.Tensor", [S(a(2, 3), a(3)), S(a(3), a(3), alpha=2)], ref=lambda x, y, alpha=1: x - alpha * y),
    OpInfo("negative", [S(a(2, 3)), S(ints(3))], ref=np.negative),
    OpInfo("conj_physical", [S(a(2, 3)), S(ints(3)), S(a(2, 3) + 1j * a(2, 3))], ref=np.conjugate),
    OpInfo("absolute", [S(a(2, 3)), S(ints(3))], ref=np.abs),
    OpInfo("positive", [S(a(2, 3)), S(ints(3))], ref=lambda x: x),
    OpInfo("fix", [S(a(2, 3) * 3), S(ints(3))], ref=lambda x: x.copy() if x.dtype.kind in "iub" else np.trunc(x)),
    OpInfo("arccos", [S(a(2, 3) * 0.45)], ref=np.arccos),
    OpInfo("arcsin", [S(a(2, 3) * 0.45)], ref=np.arcsin),
    OpInfo("arctan", [S(a(2, 3))], ref=np.arctan),
    OpInfo("arctan2", [S(a(2, 3), a(3))], ref=np.arctan2),
    OpInfo("clip", [S(away_from(-0.5, 0.5), -0.5, 0.5), S(ints(4), 1, 4)], ref=_clamp),
    OpInfo("clip.Tensor", [S(away_from(0.0), Const(np.zeros(3)), None)], ref=_clamp),
    OpInfo("relu6", [S(away_from(0.0, 6.0) * 4), S(f32(a(3)))], ref=lambda x: np.clip(x, 0, 6)),
    OpInfo("selu", [S(a(2, 3)), S(f32(a(3)))],
           ref=lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
]
