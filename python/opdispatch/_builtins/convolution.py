"""Convolution: the Core ATen operators convolution (1 to 3 spatial
dimensions, stride, padding, dilation, groups, transposed with
output_padding) and convolution_backward (its single gradient operator),
and conv1d/conv2d/conv3d/conv_transpose1d/2d/3d as their
CompositeImplicitAutograd decompositions, as PyTorch splits them. The kernels
are im2col on NumPy: a window view of the padded input, one copy into
columns, one matmul per group."""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Sequence

import numpy as np

from . import views
from ._numpy import call_numpy, call_numpy_triple, check_device, meta_like, opmath
from ._registry import CORE, PT2, Op, defop
from ._windows import expand_param, padded, windows
from .._tensor_type import Tensor


@dataclasses.dataclass(frozen=True)
class ConvParams:
    """The arguments of one convolution, checked and expanded to ``k`` spatial dimensions."""

    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    transposed: bool
    output_padding: tuple[int, ...]
    groups: int

    @property
    def k(self) -> int:
        return len(self.stride)

    def out_size(self, size: Sequence[int], kernel: Sequence[int]) -> list[int]:
        """The output's spatial size for an input of spatial ``size``. PyTorch: conv_output_size, conv_input_size."""
        if self.transposed:
            return [(i - 1) * s - 2 * p + d * (kk - 1) + op + 1 for i, s, p, d, kk, op in
                    zip(size, self.stride, self.padding, self.dilation, kernel, self.output_padding)]
        return [(i + 2 * p - d * (kk - 1) - 1) // s + 1 for i, s, p, d, kk in
                zip(size, self.stride, self.padding, self.dilation, kernel)]


def _shape(t: Any) -> list[int]:
    return list(t.shape)


def conv_params(op: str, input: Tensor, weight: Tensor, bias_sizes: Optional[Sequence[int]], stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool, output_padding: Sequence[int],
                groups: int) -> ConvParams:
    """Checks a convolution's arguments as PyTorch does and expands its
    int[] arguments; RuntimeError naming ``op`` and the argument otherwise.
    PyTorch: check_shape_forward and expand_param_if_needed (Convolution.cpp, ConvUtils.h)."""
    k = weight.ndim - 2
    if not 1 <= k <= 3:
        raise RuntimeError(f"{op}: expected a weight of 3 to 5 dimensions (1 to 3 spatial), got weight of size "
                           f"{_shape(weight)}")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"{op}: Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                           f"{_shape(weight)}, but got {input.ndim}-dimensional input of size {_shape(input)} instead")
    if not (input.dtype == weight.dtype and input.dtype.is_floating_point):
        raise RuntimeError(f"{op}: expected input ({input.dtype}) and weight ({weight.dtype}) of one floating-point "
                           f"dtype")
    params = ConvParams(expand_param(op, "stride", stride, k), expand_param(op, "padding", padding, k),
                        expand_param(op, "dilation", dilation, k), transposed,
                        expand_param(op, "output_padding", output_padding, k), int(groups))
    if min(params.stride) <= 0:
        raise RuntimeError(f"{op}: non-positive stride is not supported (stride={list(params.stride)})")
    if min(params.padding) < 0:
        raise RuntimeError(f"{op}: negative padding is not supported (padding={list(params.padding)})")
    if min(params.dilation) <= 0:
        raise RuntimeError(f"{op}: dilation should be greater than zero (dilation={list(params.dilation)})")
    if min(params.output_padding) < 0:
        raise RuntimeError(f"{op}: negative output_padding is not supported")
    if params.groups <= 0:
        raise RuntimeError(f"{op}: non-positive groups is not supported (groups={params.groups})")
    channels, out_channels = input.shape[1], weight.shape[0]
    if out_channels % params.groups:
        raise RuntimeError(f"{op}: Given groups={params.groups}, expected weight to be divisible by {params.groups} "
                           f"at dimension 0, but got weight of size {_shape(weight)} instead")
    if transposed:
        if channels != out_channels:
            raise RuntimeError(f"{op}: Given transposed=1, weight of size {_shape(weight)}, expected input"
                               f"{_shape(input)} to have {out_channels} channels, but got {channels} channels instead")
        if any(op_ >= max(s, d) for op_, s, d in zip(params.output_padding, params.stride, params.dilation)):
            raise RuntimeError(f"{op}: output padding must be smaller than either stride or dilation, but got "
                               f"output_padding={list(params.output_padding)}, stride={list(params.stride)}, "
                               f"dilation={list(params.dilation)}")
        bias_channels = weight.shape[1] * params.groups
    else:
        if channels != weight.shape[1] * params.groups:
            raise RuntimeError(f"{op}: Given groups={params.groups}, weight of size {_shape(weight)}, expected input"
                               f"{_shape(input)} to have {weight.shape[1] * params.groups} channels, but got "
                               f"{channels} channels instead")
        kernel = [d * (kk - 1) + 1 for d, kk in zip(params.dilation, weight.shape[2:])]
        size = [i + 2 * p for i, p in zip(input.shape[2:], params.padding)]
        if any(kk > i for kk, i in zip(kernel, size)):
            raise RuntimeError(f"{op}: Calculated padded input size per channel: ({' x '.join(map(str, size))}). "
                               f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than "
                               f"actual input size")
        bias_channels = out_channels
    if bias_sizes is not None and list(bias_sizes) != [bias_channels]:
        raise RuntimeError(f"{op}: Given weight of size {_shape(weight)}, expected bias to be 1-dimensional with "
                           f"{bias_channels} elements, but got bias of size {list(bias_sizes)} instead")
    return params


# --- the NumPy kernels ---------------------------------------------------------------------------------


def _columns(x: np.ndarray, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int],
             pad_lo: Sequence[int], pad_hi: Sequence[int], out: Sequence[int], groups: int) -> np.ndarray:
    """im2col: ``(G, N * prod(out), C/G * prod(kernel))`` from ``x`` (N, C, *spatial)."""
    n, c = x.shape[:2]
    k = len(kernel)
    win = windows(padded(x, pad_lo, pad_hi), kernel, stride, dilation, out)  # (N, C, *out, *kernel)
    win = win.reshape(n, groups, c // groups, *win.shape[2:])
    order = (1, 0, *range(3, 3 + k), 2, *range(3 + k, 3 + 2 * k))
    cols: np.ndarray = win.transpose(order).reshape(groups, n * math.prod(out), (c // groups) * math.prod(kernel))
    return cols


def _group_products(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a[g] @ b[g]`` for each group g of (G, M, K) and (G, K, N) stacks: one
    2-D product when G is 1 (ndarray.dot goes straight to BLAS; a stacked
    np.matmul was 80x slower with two BLAS threads on a busy machine)."""
    if a.shape[0] == 1:
        product: np.ndarray = a[0].dot(b[0])[None]
        return product
    stacked: np.ndarray = np.matmul(a, b)
    return stacked


def _correlate(x: np.ndarray, w: np.ndarray, stride: Sequence[int], pad_lo: Sequence[int], pad_hi: Sequence[int],
               dilation: Sequence[int], groups: int) -> np.ndarray:
    """The cross-correlation of x (N, C, *spatial) with w (O, C/G, *kernel) (a
    negative pad crops): (N, O, *out)."""
    n = x.shape[0]
    kernel = w.shape[2:]
    out = [(i + lo + hi - d * (kk - 1) - 1) // s + 1
           for i, lo, hi, d, kk, s in zip(x.shape[2:], pad_lo, pad_hi, dilation, kernel, stride)]
    cols = _columns(x, kernel, stride, dilation, pad_lo, pad_hi, out, groups)
    wm = w.reshape(groups, w.shape[0] // groups, cols.shape[-1])
    result = _group_products(cols, wm.transpose(0, 2, 1))  # (G, N * P, O/G)
    result = result.reshape(groups, n, math.prod(out), w.shape[0] // groups)
    correlation: np.ndarray = result.transpose(1, 0, 3, 2).reshape(n, w.shape[0], *out)
    return correlation


def _dilated(x: np.ndarray, stride: Sequence[int]) -> np.ndarray:
    """``x`` with ``stride - 1`` zeros between neighbours along its spatial dimensions."""
    if all(s == 1 for s in stride):
        return x
    z = np.zeros(x.shape[:2] + tuple((i - 1) * s + 1 if i else 0 for i, s in zip(x.shape[2:], stride)), x.dtype)
    z[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)] = x
    return z


def _transposed_weight(w: np.ndarray, groups: int) -> np.ndarray:
    """The weight (C, O/G, *kernel) of a transposed convolution as the weight
    (O, C/G, *kernel) of the correlation that computes it: in and out
    channels swapped within each group, the kernel flipped."""
    c, og = w.shape[:2]
    kernel = w.shape[2:]
    wg = w.reshape(groups, c // groups, og, *kernel).swapaxes(1, 2).reshape(groups * og, c // groups, *kernel)
    return np.flip(wg, axis=tuple(range(2, w.ndim)))


def _transposed(x: np.ndarray, w: np.ndarray, stride: Sequence[int], padding: Sequence[int],
                dilation: Sequence[int], output_padding: Sequence[int], groups: int) -> np.ndarray:
    """The transposed convolution of x (N, C, *spatial) with w (C, O/G, *kernel):
    a correlation of x dilated by the stride, padded by ``d*(k-1) - p``
    (plus output_padding after), with the flipped kernel."""
    kernel = w.shape[2:]
    lo = [d * (kk - 1) - p for d, kk, p in zip(dilation, kernel, padding)]
    hi = [pad + op for pad, op in zip(lo, output_padding)]
    return _correlate(_dilated(x, stride), _transposed_weight(w, groups), [1] * len(kernel), lo, hi, dilation, groups)


def _weight_grad(x: np.ndarray, go: np.ndarray, kernel: Sequence[int], stride: Sequence[int],
                 padding: Sequence[int], dilation: Sequence[int], groups: int) -> np.ndarray:
    """The gradient of the weight (O, C/G, *kernel) of the correlation of x (N,
    C, *in) giving go (N, O, *out): each column of x times go, summed over
    the batch and the output positions."""
    n, c = x.shape[:2]
    o, out = go.shape[1], go.shape[2:]
    cols = _columns(x, kernel, stride, dilation, padding, padding, out, groups)  # (G, N * P, C/G * K)
    gom = go.reshape(n, groups, o // groups, math.prod(out)).transpose(1, 2, 0, 3).reshape(
        groups, o // groups, cols.shape[1])
    return _group_products(gom, cols).reshape(o, c // groups, *kernel)


def _bias_added(out: np.ndarray, bias: Optional[np.ndarray]) -> np.ndarray:
    if bias is not None:
        out += bias.reshape(-1, *([1] * (out.ndim - 2)))
    return out


@opmath
def _convolution_of(x: np.ndarray, w: np.ndarray, bias: Optional[np.ndarray], p: ConvParams) -> np.ndarray:
    if p.transposed:
        out = _transposed(x, w, p.stride, p.padding, p.dilation, p.output_padding, p.groups)
    else:
        out = _correlate(x, w, p.stride, p.padding, p.padding, p.dilation, p.groups)
    return _bias_added(np.ascontiguousarray(out), bias)


def _check_bias(op: str, input: Tensor, bias: Optional[Tensor]) -> Optional[list[int]]:
    if bias is None:
        return None
    if bias.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected bias of the input's dtype {input.dtype}, got {bias.dtype}")
    return _shape(bias)


def _convolution_cpu(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Sequence[int],
                     padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                     output_padding: Sequence[int], groups: int) -> Tensor:
    p = conv_params("od::convolution", input, weight, _check_bias("od::convolution", input, bias), stride, padding,
                    dilation, transposed, output_padding, groups)
    return call_numpy(_convolution_of, input, weight, bias, p)


def _out_shape(input: Tensor, weight: Tensor, p: ConvParams) -> list[int]:
    channels = weight.shape[1] * p.groups if p.transposed else weight.shape[0]
    return [input.shape[0], channels, *p.out_size(input.shape[2:], weight.shape[2:])]


def _convolution_meta(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Sequence[int],
                      padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                      output_padding: Sequence[int], groups: int) -> Tensor:
    check_device("od::convolution", input, weight, *([bias] if bias is not None else []))
    p = conv_params("od::convolution", input, weight, _check_bias("od::convolution", input, bias), stride, padding,
                    dilation, transposed, output_padding, groups)
    return meta_like(_out_shape(input, weight, p), input.dtype)


def _convolution_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    input, weight, bias, *ctx.args = inputs
    ctx.bias_sizes = None if bias is None else _shape(bias)
    ctx.save_for_backward(input, weight)


def _convolution_backward(ctx: Any, grad: Tensor) -> tuple[Any, ...]:
    """PyTorch: derivatives.yaml convolution (convolution_backward)."""
    input, weight = ctx.saved_tensors
    mask = [bool(m) for m in ctx.needs_input_grad[:3]]
    gi, gw, gb = convolution_backward(grad, input, weight, ctx.bias_sizes, *ctx.args, mask)
    return (gi if mask[0] else None, gw if mask[1] else None, gb if mask[2] else None) + (None,) * 6


convolution: Op = defop(
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, "
    "bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor", tags=CORE,
    cpu=_convolution_cpu, meta=_convolution_meta, backward=_convolution_backward, setup_context=_convolution_setup)


# --- convolution_backward ----------------------------------------------------------------------------------
# Note [Gradients not asked for]
# PyTorch's backward operators return undefined tensors (None in Python) for
# the outputs their output_mask does not ask for. opdispatch's Tensor returns
# cannot be None, so these operators return an empty tensor (shape (0,)) of
# the input's dtype there instead, and compute nothing for it.


def _unasked(like: np.ndarray) -> np.ndarray:
    return np.empty(0, like.dtype)


@opmath
def _convolution_backward_of(go: np.ndarray, x: np.ndarray, w: np.ndarray, p: ConvParams, mask: Sequence[bool]
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    kernel = w.shape[2:]
    gi = gw = gb = _unasked(x)
    if p.transposed:  # the transposed convolution's input gradient is the plain correlation
        if mask[0]:
            gi = _correlate(go, w, p.stride, p.padding, p.padding, p.dilation, p.groups)
        if mask[1]:
            gw = _weight_grad(go, x, kernel, p.stride, p.padding, p.dilation, p.groups)
    else:
        if mask[0]:
            covered = ConvParams(p.stride, p.padding, p.dilation, True, p.output_padding, p.groups)
            extra = [i - o for i, o in zip(x.shape[2:], covered.out_size(go.shape[2:], kernel))]
            gi = _transposed(go, w, p.stride, p.padding, p.dilation, extra, p.groups)
        if mask[1]:
            gw = _weight_grad(x, go, kernel, p.stride, p.padding, p.dilation, p.groups)
    if mask[2]:
        gb = np.add.reduce(go, axis=(0, *range(2, go.ndim)))
    return np.ascontiguousarray(gi), np.ascontiguousarray(gw), np.ascontiguousarray(gb)


def _check_backward(op: str, grad_output: Tensor, input: Tensor, weight: Tensor, bias_sizes: Optional[Sequence[int]],
                    p: ConvParams) -> None:
    expected = _out_shape(input, weight, p)
    if _shape(grad_output) != expected or grad_output.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected grad_output of shape {expected} and dtype {input.dtype}, got "
                           f"{_shape(grad_output)} ({grad_output.dtype})")


def _convolution_backward_cpu(grad_output: Tensor, input: Tensor, weight: Tensor,
                              bias_sizes: Optional[Sequence[int]], stride: Sequence[int], padding: Sequence[int],
                              dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
                              output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    op = "od::convolution_backward"
    p = conv_params(op, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups)
    _check_backward(op, grad_output, input, weight, bias_sizes, p)
    result = call_numpy_triple(_convolution_backward_of, grad_output, input, weight, p,
                                                       list(output_mask))
    return result


def _convolution_backward_meta(grad_output: Tensor, input: Tensor, weight: Tensor,
                               bias_sizes: Optional[Sequence[int]], stride: Sequence[int], padding: Sequence[int],
                               dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
                               output_mask: Sequence[bool]) -> tuple[Tensor, Tensor, Tensor]:
    op = "od::convolution_backward"
    check_device(op, grad_output, input, weight)
    p = conv_params(op, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups)
    _check_backward(op, grad_output, input, weight, bias_sizes, p)
    channels = grad_output.shape[1]
    shapes = (input.shape, weight.shape, (channels,))
    gi, gw, gb = (meta_like(s if m else (0,), input.dtype) for s, m in zip(shapes, output_mask))
    return gi, gw, gb


def _convolution_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    grad_output, input, weight, ctx.bias_sizes, *ctx.args, ctx.mask = inputs
    ctx.save_for_backward(grad_output, input, weight)


def _convolution_backward_backward(ctx: Any, ggi: Optional[Tensor], ggw: Optional[Tensor], ggb: Optional[Tensor]
                                   ) -> tuple[Any, ...]:
    """The three input gradients are linear in grad_output and bilinear in
    (grad_output, input) and (grad_output, weight): their gradients are
    convolutions and convolution_backward calls with the incoming gradients
    in place of the input or weight. PyTorch: _convolution_double_backward
    (FunctionsManual.cpp)."""
    go, input, weight = ctx.saved_tensors
    args = ctx.args
    ggi = ggi if ctx.mask[0] else None
    ggw = ggw if ctx.mask[1] else None
    ggb = ggb if ctx.mask[2] else None
    needs = ctx.needs_input_grad
    g_go = g_input = g_weight = None
    if needs[0]:
        terms = []
        if ggi is not None:
            terms.append(convolution(ggi, weight, None, *args))
        if ggw is not None:
            terms.append(convolution(input, ggw, None, *args))
        if ggb is not None:
            terms.append(views.view(ggb, [1, -1, *([1] * (go.ndim - 2))]).expand(go.shape))
        g_go = terms[0] if terms else None
        for t in terms[1:]:
            g_go = g_go + t
    if needs[1] and ggw is not None:
        g_input = convolution_backward(go, input, ggw, None, *args, [True, False, False])[0]
    if needs[2] and ggi is not None:
        g_weight = convolution_backward(go, ggi, weight, None, *args, [False, True, False])[1]
    return (g_go, g_input, g_weight) + (None,) * 8


convolution_backward = defop(
    "convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, "
    "bool[3] output_mask) -> (Tensor, Tensor, Tensor)", tags=CORE,
    cpu=_convolution_backward_cpu, meta=_convolution_backward_meta, backward=_convolution_backward_backward,
    setup_context=_convolution_backward_setup)


# --- conv1d/2d/3d, conv_transpose1d/2d/3d ------------------------------------------------------------------


def _batched(op: str, input: Tensor, weight: Tensor) -> bool:
    """Whether ``input`` has a batch dimension (else the caller adds one);
    RuntimeError naming ``op`` if it has neither shape."""
    k = weight.ndim - 2
    if input.ndim == k + 2:
        return True
    if input.ndim == k + 1:
        return False
    raise RuntimeError(f"{op}: Expected {k + 1}D (unbatched) or {k + 2}D (batched) input to {op.split('::')[-1]}, "
                       f"but got input of size: {_shape(input)}")


def _conv_nd(name: str, k: int) -> Any:
    def conv(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Sequence[int] = (1,),
             padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), groups: int = 1) -> Tensor:
        batched = _batched(f"od::{name}", input, weight)
        x = input if batched else views.unsqueeze(input, 0)
        out = convolution(x, weight, bias, stride, padding, dilation, False, [0] * k, groups)
        return out if batched else views.squeeze_dim(out, 0)

    conv.__name__ = name
    conv.__doc__ = (f"PyTorch: at::native::{name} (CompositeImplicitAutograd): convolution of a batched input, "
                    f"an unbatched one through unsqueeze and squeeze.")
    return conv


def _conv_transpose_nd(name: str, k: int) -> Any:
    def conv_transpose(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: Sequence[int] = (1,),
                       padding: Sequence[int] = (0,), output_padding: Sequence[int] = (0,), groups: int = 1,
                       dilation: Sequence[int] = (1,)) -> Tensor:
        batched = _batched(f"od::{name}", input, weight)
        x = input if batched else views.unsqueeze(input, 0)
        out = convolution(x, weight, bias, stride, padding, dilation, True, output_padding, groups)
        return out if batched else views.squeeze_dim(out, 0)

    conv_transpose.__name__ = name
    conv_transpose.__doc__ = f"PyTorch: at::native::{name} (CompositeImplicitAutograd)."
    return conv_transpose


def _ints(k: int, value: int) -> str:
    return "[" + ", ".join([str(value)] * k) + "]"


def _conv_schema(name: str, k: int) -> str:
    return (f"{name}(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{k}] stride={_ints(k, 1)}, "
            f"SymInt[{k}] padding={_ints(k, 0)}, SymInt[{k}] dilation={_ints(k, 1)}, SymInt groups=1) -> Tensor")


def _conv_transpose_schema(name: str, k: int) -> str:
    return (f"{name}(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{k}] stride={_ints(k, 1)}, "
            f"SymInt[{k}] padding={_ints(k, 0)}, SymInt[{k}] output_padding={_ints(k, 0)}, SymInt groups=1, "
            f"SymInt[{k}] dilation={_ints(k, 1)}) -> Tensor")


conv1d: Op = defop(_conv_schema("conv1d", 1), tags=PT2, composite=_conv_nd("conv1d", 1))
conv2d: Op = defop(_conv_schema("conv2d", 2), tags=PT2, composite=_conv_nd("conv2d", 2))
conv3d: Op = defop(_conv_schema("conv3d", 3), tags=PT2, composite=_conv_nd("conv3d", 3))
conv_transpose1d: Op = defop(_conv_transpose_schema("conv_transpose1d", 1), tags=PT2,
                             composite=_conv_transpose_nd("conv_transpose1d", 1))
conv_transpose2d: Op = defop(_conv_transpose_schema("conv_transpose2d.input", 2), tags=PT2,
                             composite=_conv_transpose_nd("conv_transpose2d", 2))
conv_transpose3d: Op = defop(_conv_transpose_schema("conv_transpose3d.input", 3), tags=PT2,
                             composite=_conv_transpose_nd("conv_transpose3d", 3))
