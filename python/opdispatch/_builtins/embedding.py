"""Embeddings: the Core ATen operators embedding (rows of a weight matrix
picked by integer indices) and embedding_dense_backward (the rows'
gradients added back, np.add.at), as PyTorch splits them."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _C
from . import comparison, elementwise, views
from ._numpy import call_numpy, check_device, meta_like
from ._registry import CORE, Op, defop

_INDEX_DTYPES = (_C.int64, _C.int32)


def _check_indices(op: str, indices: Any) -> None:
    if indices.dtype not in _INDEX_DTYPES:
        raise RuntimeError(f"{op}: Expected tensor for argument #1 'indices' to have one of the following scalar "
                           f"types: Long, Int; but got {indices.dtype} instead")


def _check_embedding(weight: Any, indices: Any) -> None:
    if weight.ndim != 2:
        raise RuntimeError(f"od::embedding: 'weight' must be 2-D, got shape {list(weight.shape)}")
    _check_indices("od::embedding", indices)


def _rows(w: np.ndarray, i: np.ndarray) -> np.ndarray:
    if i.size and (i.min() < 0 or i.max() >= w.shape[0]):
        raise IndexError(f"od::embedding: index out of range in self (indices must be in [0, {w.shape[0]}))")
    picked: np.ndarray = w[i]
    return picked


def _embedding_cpu(weight: Any, indices: Any, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                   sparse: bool = False) -> Any:
    _check_embedding(weight, indices)
    return call_numpy(_rows, weight, indices)


def _embedding_meta(weight: Any, indices: Any, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                    sparse: bool = False) -> Any:
    check_device("od::embedding", weight, indices)
    _check_embedding(weight, indices)
    return meta_like([*indices.shape, weight.shape[1]], weight.dtype)


def _embedding_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    weight, indices, ctx.padding_idx, ctx.scale_grad_by_freq, ctx.sparse = inputs
    ctx.num_weights = weight.shape[0]
    ctx.save_for_backward(indices)


def _embedding_backward(ctx: Any, grad: Any) -> tuple[Any, None, None, None, None]:
    """PyTorch: derivatives.yaml embedding (embedding_backward, dense)."""
    if ctx.sparse:
        raise NotImplementedError("od::embedding: sparse=True gradients need sparse tensors, which opdispatch does "
                                  "not have; use sparse=False")
    (indices,) = ctx.saved_tensors
    return (embedding_dense_backward(grad, indices, ctx.num_weights, ctx.padding_idx, ctx.scale_grad_by_freq),
            None, None, None, None)


embedding: Op = defop("embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
                      "bool sparse=False) -> Tensor", tags=CORE, cpu=_embedding_cpu, meta=_embedding_meta,
                      backward=_embedding_backward, setup_context=_embedding_setup)


def _accumulated(go: np.ndarray, i: np.ndarray, num_weights: int, padding_idx: int, scale: bool) -> np.ndarray:
    """The gradient of each weight row: the sum of the gradients of its
    lookups (each over the index's count in the batch if ``scale``), none
    for padding_idx. PyTorch: embedding_dense_backward_cpu."""
    flat, rows = i.reshape(-1), go.reshape(-1, go.shape[-1])
    keep = flat != padding_idx
    if scale:
        counts = np.bincount(flat[keep], minlength=num_weights)
        rows = rows / counts[flat].reshape(-1, 1).clip(min=1).astype(go.dtype)
    out = np.zeros((num_weights, go.shape[-1]), go.dtype)
    np.add.at(out, flat[keep], rows[keep])
    return out


def _check_backward(grad_output: Any, indices: Any) -> None:
    _check_indices("od::embedding_dense_backward", indices)
    if list(grad_output.shape[:-1]) != list(indices.shape):
        raise RuntimeError(f"od::embedding_dense_backward: expected grad_output of shape {list(indices.shape)} + "
                           f"[embedding_dim], got {list(grad_output.shape)}")


def _embedding_dense_backward_cpu(grad_output: Any, indices: Any, num_weights: int, padding_idx: int,
                                  scale_grad_by_freq: bool) -> Any:
    _check_backward(grad_output, indices)
    return call_numpy(_accumulated, grad_output, indices, num_weights, padding_idx, scale_grad_by_freq)


def _embedding_dense_backward_meta(grad_output: Any, indices: Any, num_weights: int, padding_idx: int,
                                   scale_grad_by_freq: bool) -> Any:
    check_device("od::embedding_dense_backward", grad_output, indices)
    _check_backward(grad_output, indices)
    return meta_like([num_weights, grad_output.shape[-1]], grad_output.dtype)


def _dense_backward_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    _, indices, _, ctx.padding_idx, ctx.scale = inputs
    ctx.save_for_backward(indices)


def _dense_backward_backward(ctx: Any, grad: Any) -> tuple[Any, None, None, None, None]:
    """The rows of the incoming gradient picked by the indices (zero for
    padding_idx, over the counts if scaled). PyTorch: derivatives.yaml
    embedding_dense_backward (embedding_dense_double_backward)."""
    if ctx.scale:
        raise RuntimeError("od::embedding_dense_backward: the derivative with scale_grad_by_freq=True is not "
                           "implemented (PyTorch's formula leaves the scaling out)")
    (indices,) = ctx.saved_tensors
    picked = embedding(grad, indices)
    kept = views.unsqueeze(comparison.ne_scalar(indices, ctx.padding_idx), -1)
    return elementwise.mul(picked, kept), None, None, None, None


embedding_dense_backward: Op = defop(
    "embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, "
    "bool scale_grad_by_freq) -> Tensor", tags=CORE, cpu=_embedding_dense_backward_cpu,
    meta=_embedding_dense_backward_meta, backward=_dense_backward_backward, setup_context=_dense_backward_setup)
