"""PyTorch's torch.nn.functional names and signatures over the ``od``
operators: each function checks and normalises its arguments as PyTorch's
does and calls one operator (or the few PyTorch calls), so modes, autograd
and Meta kernels see the same operator calls as in PyTorch.

    import opdispatch.nn.functional as F
    y = F.max_pool2d(F.relu(F.conv2d(x, w, b, padding=1)), 2)
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .._builtins import (
    convolution,
    dropout as _dropout,
    elementwise,
    embedding as _embedding,
    factories,
    linear as _linear,
    loss,
    max_pooling,
    normalization,
)
from .._builtins import padding as padding_ops
from .._builtins import softmax as _softmax
from .._builtins._registry import Op
from .._tensor_type import Tensor

IntOrInts = Union[int, Sequence[int]]

#: ``reduction`` names and the operators' codes (PyTorch: torch.nn._reduction.get_enum).
_REDUCTIONS = {"none": loss.NONE, "mean": loss.MEAN, "sum": loss.SUM}


def _ints(value: IntOrInts, k: int, name: str) -> list[int]:
    """``value`` (an int or k ints) as a list of k ints. PyTorch: torch.nn.modules.utils._ntuple."""
    if isinstance(value, int):
        return [value] * k
    values = [int(v) for v in value]
    if len(values) == 1:
        return values * k
    if len(values) != k:
        raise ValueError(f"{name} must be an int or a sequence of {k} ints, got {list(values)}")
    return values


def _reduction(name: str) -> int:
    if name not in _REDUCTIONS:
        raise ValueError(f"{name!r} is not a valid value for reduction: use 'none', 'mean' or 'sum'")
    return _REDUCTIONS[name]


# --- convolution ---------------------------------------------------------------------------------------


def _conv(op: Op, k: int, input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: IntOrInts,
          padding: Union[str, IntOrInts], dilation: IntOrInts, groups: int) -> Tensor:
    strides, dilations = _ints(stride, k, "stride"), _ints(dilation, k, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = 0
        elif padding == "same":
            if any(s != 1 for s in strides):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (kk - 1) for d, kk in zip(dilations, weight.shape[2:])]
            padding = [t // 2 for t in total]
            extra = [t - 2 * (t // 2) for t in total]
            if any(extra):  # one more at the end of odd totals, as PyTorch's _convolution_mode pads
                input = padding_ops.constant_pad_nd(input, [p for e in reversed(extra) for p in (0, e)])
        else:
            raise ValueError(f"Invalid padding string {padding!r}, should be one of 'valid' or 'same'")
    return op(input, weight, bias, strides, _ints(padding, k, "padding"), dilations, groups)


def conv1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrInts = 1,
           padding: Union[str, IntOrInts] = 0, dilation: IntOrInts = 1, groups: int = 1) -> Tensor:
    """1-D convolution of input (N, C_in, L) or (C_in, L) with weight (C_out,
    C_in/groups, k): od::conv1d. ``padding``: ints, "valid" or "same".
    PyTorch: torch.nn.functional.conv1d."""
    return _conv(convolution.conv1d, 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrInts = 1,
           padding: Union[str, IntOrInts] = 0, dilation: IntOrInts = 1, groups: int = 1) -> Tensor:
    """2-D convolution of input (N, C_in, H, W) or (C_in, H, W) with weight
    (C_out, C_in/groups, kH, kW): od::conv2d. PyTorch: torch.nn.functional.conv2d."""
    return _conv(convolution.conv2d, 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrInts = 1,
           padding: Union[str, IntOrInts] = 0, dilation: IntOrInts = 1, groups: int = 1) -> Tensor:
    """3-D convolution of input (N, C_in, D, H, W) or unbatched: od::conv3d. PyTorch: torch.nn.functional.conv3d."""
    return _conv(convolution.conv3d, 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(op: Op, k: int, input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: IntOrInts,
                    padding: IntOrInts, output_padding: IntOrInts, groups: int, dilation: IntOrInts) -> Tensor:
    return op(input, weight, bias, _ints(stride, k, "stride"), _ints(padding, k, "padding"),
              _ints(output_padding, k, "output_padding"), groups, _ints(dilation, k, "dilation"))


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrInts = 1,
                     padding: IntOrInts = 0, output_padding: IntOrInts = 0, groups: int = 1,
                     dilation: IntOrInts = 1) -> Tensor:
    """Transposed 1-D convolution with weight (C_in, C_out/groups, k): od::conv_transpose1d.
    PyTorch: torch.nn.functional.conv_transpose1d."""
    return _conv_transpose(convolution.conv_transpose1d, 1, input, weight, bias, stride, padding, output_padding,
                           groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrInts = 1,
                     padding: IntOrInts = 0, output_padding: IntOrInts = 0, groups: int = 1,
                     dilation: IntOrInts = 1) -> Tensor:
    """Transposed 2-D convolution: od::conv_transpose2d.input. PyTorch: torch.nn.functional.conv_transpose2d."""
    return _conv_transpose(convolution.conv_transpose2d, 2, input, weight, bias, stride, padding, output_padding,
                           groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: IntOrInts = 1,
                     padding: IntOrInts = 0, output_padding: IntOrInts = 0, groups: int = 1,
                     dilation: IntOrInts = 1) -> Tensor:
    """Transposed 3-D convolution: od::conv_transpose3d.input. PyTorch: torch.nn.functional.conv_transpose3d."""
    return _conv_transpose(convolution.conv_transpose3d, 3, input, weight, bias, stride, padding, output_padding,
                           groups, dilation)


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """input (*, in) @ weight (out, in).T + bias (out,): od::linear. PyTorch: torch.nn.functional.linear."""
    return _linear.linear(input, weight, bias)


# --- activations ---------------------------------------------------------------------------------------


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0): od::relu (``inplace=True`` writes the result into input
    with od::copy_). PyTorch: torch.nn.functional.relu."""
    result = elementwise.relu(input)
    return input.copy_(result) if inplace else result


def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """Softmax along ``dim`` (od::softmax.int), computed in ``dtype`` if
    given. ``dim`` is required here (PyTorch's implicit choice is deprecated).
    PyTorch: torch.nn.functional.softmax."""
    return _softmax.softmax(input, _dim(dim, "softmax"), dtype)


def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """Log-softmax along ``dim``: od::log_softmax.int. PyTorch: torch.nn.functional.log_softmax."""
    return _softmax.log_softmax(input, _dim(dim, "log_softmax"), dtype)


def _dim(dim: Optional[int], name: str) -> int:
    if dim is None:
        raise TypeError(f"{name}: pass dim (PyTorch's implicit choice of dimension is deprecated)")
    return dim


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability ``p`` and scales the rest by
    1/(1-p) while ``training`` (od::dropout); ValueError unless 0 <= p <= 1.
    PyTorch: torch.nn.functional.dropout."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    result = _dropout.dropout(input, p, training)
    return input.copy_(result) if inplace and result is not input else result


# --- pooling -----------------------------------------------------------------------------------------------


def _max_pool(with_indices: Any, k: int, input: Tensor, kernel_size: IntOrInts, stride: Optional[IntOrInts],
              padding: IntOrInts, dilation: IntOrInts, ceil_mode: bool, return_indices: bool) -> Any:
    out, indices = with_indices(input, _ints(kernel_size, k, "kernel_size"),
                                [] if stride is None else _ints(stride, k, "stride"), _ints(padding, k, "padding"),
                                _ints(dilation, k, "dilation"), ceil_mode)
    return (out, indices) if return_indices else out


def max_pool1d(input: Tensor, kernel_size: IntOrInts, stride: Optional[IntOrInts] = None, padding: IntOrInts = 0,
               dilation: IntOrInts = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over windows of input (N, C, L) or (C, L): od::max_pool1d (with
    ``return_indices``, od::max_pool2d_with_indices over a height-1 plane). PyTorch: torch.nn.functional.max_pool1d."""
    if return_indices:
        out, indices = max_pool2d(input.unsqueeze(-2), [1, _ints(kernel_size, 1, "kernel_size")[0]],
                                  None if stride is None else [1, _ints(stride, 1, "stride")[0]],
                                  [0, _ints(padding, 1, "padding")[0]], [1, _ints(dilation, 1, "dilation")[0]],
                                  ceil_mode, True)
        return out.squeeze(-2), indices.squeeze(-2)
    return max_pooling.max_pool1d(input, _ints(kernel_size, 1, "kernel_size"),
                                  [] if stride is None else _ints(stride, 1, "stride"), _ints(padding, 1, "padding"),
                                  _ints(dilation, 1, "dilation"), ceil_mode)


def max_pool2d(input: Tensor, kernel_size: IntOrInts, stride: Optional[IntOrInts] = None, padding: IntOrInts = 0,
               dilation: IntOrInts = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over windows of input (N, C, H, W) or (C, H, W) (stride defaults
    to the kernel size): od::max_pool2d_with_indices, with the flat indices
    of the maxima if ``return_indices``. PyTorch: torch.nn.functional.max_pool2d."""
    return _max_pool(max_pooling.max_pool2d_with_indices, 2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input: Tensor, kernel_size: IntOrInts, stride: Optional[IntOrInts] = None, padding: IntOrInts = 0,
               dilation: IntOrInts = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """Max over windows of input (N, C, D, H, W) or unbatched: od::max_pool3d_with_indices.
    PyTorch: torch.nn.functional.max_pool3d."""
    return _max_pool(max_pooling.max_pool3d_with_indices, 3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


# --- normalisation -------------------------------------------------------------------------------------------


def batch_norm(input: Tensor, running_mean: Optional[Tensor], running_var: Optional[Tensor],
               weight: Optional[Tensor] = None, bias: Optional[Tensor] = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-05) -> Tensor:
    """Batch norm of input (N, C, *) per channel: with the batch's
    statistics while ``training`` (updating the running ones in place), else
    with the running ones: od::batch_norm. ValueError for a training batch
    with one value per channel. PyTorch: torch.nn.functional.batch_norm."""
    if training:
        size = input.shape
        per_channel = size[0] * int(_prod(size[2:])) if len(size) >= 2 else 0
        if per_channel == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(size)}")
    return normalization.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, False)


def _prod(values: Sequence[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result


def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor] = None,
               bias: Optional[Tensor] = None, eps: float = 1e-05) -> Tensor:
    """Normalises over the trailing ``normalized_shape`` dimensions: od::layer_norm.
    PyTorch: torch.nn.functional.layer_norm."""
    return normalization.layer_norm(input, list(normalized_shape), weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               eps: float = 1e-05) -> Tensor:
    """Normalises input (N, C, *) over groups of C/num_groups channels: od::group_norm.
    PyTorch: torch.nn.functional.group_norm."""
    return normalization.group_norm(input, num_groups, weight, bias, eps)


# --- padding -------------------------------------------------------------------------------------------------


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
    """Pads the trailing len(pad)/2 dimensions (pad lists the last
    dimension's (before, after) first): od::pad, which calls
    constant_pad_nd or the reflection / replication operator of the mode
    ("constant", "reflect", "replicate"). PyTorch: torch.nn.functional.pad."""
    return padding_ops.pad(input, list(pad), mode, value)


# --- losses ----------------------------------------------------------------------------------------------------


def nll_loss(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Any = None,
             ignore_index: int = -100, reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood of class indices ``target`` under
    log-probabilities ``input`` (N, C) or (C,): od::nll_loss (N-d inputs:
    use cross_entropy). ``size_average`` / ``reduce`` are PyTorch's
    deprecated spellings and must be None. PyTorch: torch.nn.functional.nll_loss."""
    _no_legacy(size_average, reduce)
    return loss.nll_loss(input, target, weight, _reduction(reduction), ignore_index)


def cross_entropy(input: Tensor, target: Tensor, weight: Optional[Tensor] = None, size_average: Any = None,
                  ignore_index: int = -100, reduce: Any = None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy of logits ``input`` (N, C, *) or (C,) with class
    indices or class probabilities ``target``: od::cross_entropy_loss.
    PyTorch: torch.nn.functional.cross_entropy."""
    _no_legacy(size_average, reduce)
    return loss.cross_entropy_loss(input, target, weight, _reduction(reduction), ignore_index, label_smoothing)


#: embedding_bag's ``mode`` names and _embedding_bag's codes.
_BAG_MODES = {"sum": 0, "mean": 1, "max": 2}


def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None, max_norm: Optional[float] = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    """The sums, means or maxima (``mode``) of bags of rows of ``weight``
    (num_embeddings, embedding_dim) picked by ``input``: a 2-D (B, N)
    ``input`` is B bags of N indices; a 1-D one is split into bags where
    ``offsets`` (1-D) start them. Returns (bags, embedding_dim), through one
    od::_embedding_bag call. ``padding_idx`` may be negative (counted from
    the end); its rows are left out. ValueError for the argument combinations
    PyTorch refuses (its messages); ``max_norm`` (which renormalises weight
    in place) is not supported (NotImplementedError).
    PyTorch: torch.nn.functional.embedding_bag."""
    if max_norm is not None:
        raise NotImplementedError("embedding_bag: max_norm is not supported in opdispatch")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        offsets = factories.arange_start_step(0, input.numel(), input.shape[1], dtype=input.dtype,
                                              device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in _BAG_MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if padding_idx is None:
        padding_idx = -1
    elif not -weight.shape[0] <= padding_idx < weight.shape[0]:
        raise ValueError("padding_idx must be within the number of embeddings")
    elif padding_idx < 0:
        padding_idx += weight.shape[0]
    output: Tensor = _embedding._embedding_bag(weight, input, offsets, scale_grad_by_freq, _BAG_MODES[mode], sparse,
                                               per_sample_weights, include_last_offset, padding_idx)[0]
    return output


def _no_legacy(size_average: Any, reduce: Any) -> None:
    if size_average is not None or reduce is not None:
        raise ValueError("size_average and reduce are deprecated in PyTorch and not supported: use reduction=")


__all__ = [
    "batch_norm", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cross_entropy", "dropout", "embedding_bag", "group_norm", "layer_norm", "linear", "log_softmax", "max_pool1d", "max_pool2d",
    "max_pool3d", "nll_loss", "pad", "relu", "softmax",
]


def __dir__() -> list[str]:
    return sorted(__all__)
