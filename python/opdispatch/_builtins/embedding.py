"""Embeddings: the Core ATen operators embedding (rows of a weight matrix
picked by integer indices) and embedding_dense_backward (the rows'
gradients added back, np.add.at), as PyTorch splits them."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import _C
from . import comparison, elementwise, views
from ._numpy import call_numpy, check_device, meta_like
from ._registry import CORE, PT2, Op, defop

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

# --- _embedding_bag -------------------------------------------------------------------------------

_BAG_MODES = {0: "sum", 1: "mean", 2: "max"}


def _check_embedding_bag(weight: Any, indices: Any, offsets: Any, mode: int, per_sample_weights: Any) -> None:
    """The checks that need no data (PyTorch's messages; RuntimeError)."""
    op = "od::_embedding_bag"
    if weight.ndim != 2:
        raise RuntimeError(f"{op}: 'weight' must be 2-D, got shape {list(weight.shape)}")
    _check_indices(op, indices)
    if offsets.dtype not in _INDEX_DTYPES or offsets.ndim != 1:
        raise RuntimeError(f"{op}: 'offsets' must be a 1-D Long or Int tensor, got {offsets.dtype} of shape "
                           f"{list(offsets.shape)}")
    if mode not in _BAG_MODES:
        raise RuntimeError(f"{op}: `mode` must be sum, mean, or max.")
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError(f"{op}: embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dtype != weight.dtype or per_sample_weights.numel() != indices.numel():
            raise RuntimeError(f"{op}: per_sample_weights must have weight's dtype and one value per index, got "
                               f"{per_sample_weights.dtype} of shape {list(per_sample_weights.shape)}")


def _is_fast_path(weight: Any, per_sample_weights: Any, padding_idx: int) -> bool:
    """Whether PyTorch's CPU kernel takes its index_select fast path: a
    float32/float16 weight (bfloat16 too, which od lacks) with unit row stride, a unit-stride
    per_sample_weights, no padding_idx. That path sums each bag from its
    offset to the next and, for mode sum, makes no offset2bag.
    PyTorch: is_fast_path (EmbeddingBag.cpp)."""
    return (weight.dtype in (_C.float32, _C.float16) and weight.stride()[1] == 1 and padding_idx < 0
            and (per_sample_weights is None or per_sample_weights.stride()[0] == 1))


def _bag_shapes(weight: Any, indices: Any, offsets: Any, mode: int, include_last_offset: bool,
                padding_idx: int, fast: bool) -> list[list[int]]:
    """The shapes of output, offset2bag, bag_size and max_indices."""
    bags = max(offsets.shape[0] - int(include_last_offset), 0)
    dim = weight.shape[1]
    offset2bag = [0] if mode == 0 and fast else [indices.numel()]
    return [[bags, dim], offset2bag, [bags], [bags, dim] if mode == 2 else [bags]]


def _bags(w: np.ndarray, i: np.ndarray, offsets: np.ndarray, psw: Any, mode: int, include_last_offset: bool,
          padding_idx: int, fast: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch 2.13's CPU _embedding_bag, vectorised. Each index belongs to
    the bag of the last offset at or before its position (offset2bag; with
    include_last_offset the last offset starts no bag, so indices past it
    join the last bag). On the fast path (_is_fast_path) sums (mean's too)
    add the rows from each bag's offset to the next, the last offset ending
    the last bag with include_last_offset; everything else — counts, max,
    the other sums — uses offset2bag, leaving padding_idx's rows out."""
    i = i.reshape(-1)
    n, (rows_n, dim) = i.size, w.shape
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(f"od::_embedding_bag: offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offsets[0]}")
    if offsets.size and offsets[-1] > n:
        raise RuntimeError(f"od::_embedding_bag: offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offsets[-1]}")
    bad = np.flatnonzero((i < 0) | (i >= rows_n))
    if bad.size:
        raise RuntimeError(f"od::_embedding_bag: Index {bad[0]} of input takes value {i[bad[0]]} which is not in the "
                           f"valid range [0, {rows_n})")
    bags = max(offsets.size - int(include_last_offset), 0)
    positions = np.arange(n)
    bag_of = np.searchsorted(offsets[1:bags], positions, side="right")
    kept = i != padding_idx if padding_idx >= 0 else np.ones(n, bool)
    rows = w[i] if psw is None else w[i] * psw.reshape(-1, 1)
    out = np.zeros((bags, dim), w.dtype)
    counts = np.bincount(bag_of[kept], minlength=bags) if n else np.zeros(bags, np.int64)
    if mode == 2:
        best = np.full((bags, dim), -np.inf)
        np.maximum.at(best, bag_of[kept], rows[kept])
        filled = np.isfinite(best) | (counts[:, None] > 0)
        out[...] = np.where(filled, best, 0)
        first = np.full((bags, dim), n)  # the first position holding each maximum, as PyTorch's scan keeps
        p, c = np.nonzero((rows == best[bag_of]) & kept[:, None])
        np.minimum.at(first, (bag_of[p], c), p)
        max_indices = np.where(first < n, np.append(i, 0)[first], 0)
    else:
        summed = kept & (positions < (offsets[bags] if include_last_offset and bags else n)) if fast else kept
        np.add.at(out, bag_of[summed], rows[summed])
        if mode == 1:
            out = np.where(counts[:, None] > 0, out / np.maximum(counts, 1)[:, None], 0).astype(w.dtype)
    bag_size = counts if mode else np.zeros(bags, np.int64)
    if mode != 2:
        max_indices = bag_size
    offset2bag = bag_of if mode or not fast else np.zeros(0, np.int64)
    index_dtype = offsets.dtype
    return (out, offset2bag.astype(index_dtype), bag_size.astype(index_dtype),
            np.asarray(max_indices).astype(index_dtype))


def _embedding_bag_cpu(weight: Any, indices: Any, offsets: Any, scale_grad_by_freq: bool = False, mode: int = 0,
                       sparse: bool = False, per_sample_weights: Any = None, include_last_offset: bool = False,
                       padding_idx: int = -1) -> Any:
    _check_embedding_bag(weight, indices, offsets, mode, per_sample_weights)
    check_device("od::_embedding_bag", weight, indices, offsets)
    psw = None if per_sample_weights is None else per_sample_weights.numpy(force=True)
    fast = _is_fast_path(weight, per_sample_weights, padding_idx)
    return call_numpy(lambda w, i, o: _bags(w, i, o, psw, mode, include_last_offset, padding_idx, fast),
                      weight, indices, offsets)


def _embedding_bag_meta(weight: Any, indices: Any, offsets: Any, scale_grad_by_freq: bool = False, mode: int = 0,
                        sparse: bool = False, per_sample_weights: Any = None, include_last_offset: bool = False,
                        padding_idx: int = -1) -> Any:
    _check_embedding_bag(weight, indices, offsets, mode, per_sample_weights)
    shapes = _bag_shapes(weight, indices, offsets, mode, include_last_offset, padding_idx,
                         _is_fast_path(weight, per_sample_weights, padding_idx))
    return (meta_like(shapes[0], weight.dtype),) + tuple(meta_like(s, offsets.dtype) for s in shapes[1:])


def _bag_of(offsets: np.ndarray, n: int) -> np.ndarray:
    """PyTorch's make_offset2bag over all of ``offsets`` (what its backward
    recomputes when the fast sum path made no offset2bag): each position's
    count of offsets past 0 at or before it."""
    return np.searchsorted(offsets[1:], np.arange(n), side="right")


def _bag_backward(g: np.ndarray, i: np.ndarray, offsets: np.ndarray, offset2bag: np.ndarray, bag_size: np.ndarray,
                  max_indices: np.ndarray, num_weights: int, scale_grad_by_freq: bool, mode: int, psw: Any,
                  padding_idx: int) -> np.ndarray:
    i = i.reshape(-1)
    n = i.size
    bag_of = offset2bag if offset2bag.size == n and n else _bag_of(offsets, n)
    out = np.zeros((num_weights, g.shape[1]), g.dtype)
    if mode == 2:
        filled = bag_size > 0
        cols = np.broadcast_to(np.arange(g.shape[1]), max_indices.shape)
        np.add.at(out, (max_indices[filled], cols[filled]), g[filled])
    else:
        kept = (i != padding_idx) & (bag_of < g.shape[0])  # PyTorch drops indices past include_last_offset's end
        scale = np.ones(n, g.dtype) if psw is None else psw.reshape(-1).astype(g.dtype)
        if mode == 1:
            scale = scale / np.maximum(bag_size[np.minimum(bag_of, max(len(bag_size) - 1, 0))], 1)
        if scale_grad_by_freq:
            scale = scale / np.bincount(i, minlength=num_weights)[i]
        np.add.at(out, i[kept], g[bag_of[kept]] * scale[kept, None])
    if padding_idx >= 0:
        out[padding_idx] = 0
    return out


def _embedding_bag_backward_cpu(grad: Any, indices: Any, offsets: Any, offset2bag: Any, bag_size: Any,
                                maximum_indices: Any, num_weights: int, scale_grad_by_freq: bool, mode: int,
                                sparse: bool, per_sample_weights: Any = None, padding_idx: int = -1) -> Any:
    psw = None if per_sample_weights is None else per_sample_weights.numpy(force=True)
    def kernel(g: np.ndarray, i: np.ndarray, o: np.ndarray, o2b: np.ndarray, size: np.ndarray,
               most: np.ndarray) -> np.ndarray:
        return _bag_backward(g, i, o, o2b, size, most, num_weights, scale_grad_by_freq, mode, psw, padding_idx)

    return call_numpy(kernel, grad, indices, offsets, offset2bag, bag_size, maximum_indices)


#: The weight's gradient of _embedding_bag (dense; ``sparse`` is not supported). PyTorch: aten::_embedding_bag_backward
#: (CompositeImplicitAutograd over _embedding_bag_dense_backward there; one NumPy kernel here).
_embedding_bag_backward: Op = defop(
    "_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, "
    "Tensor maximum_indices, SymInt num_weights, bool scale_grad_by_freq, int mode, bool sparse, "
    "Tensor? per_sample_weights, int padding_idx=-1) -> Tensor", tags=PT2, cpu=_embedding_bag_backward_cpu,
    meta=lambda grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights, *rest, **kw: meta_like(
        [num_weights, grad.shape[1]], grad.dtype))


def _psw_backward(g: np.ndarray, w: np.ndarray, i: np.ndarray, offsets: np.ndarray, offset2bag: np.ndarray,
                  padding_idx: int) -> np.ndarray:
    i = i.reshape(-1)
    bag_of = offset2bag if offset2bag.size == i.size and i.size else _bag_of(offsets, i.size)
    kept = (i != padding_idx) & (bag_of < g.shape[0])
    out = np.zeros(i.size, g.dtype)
    out[kept] = np.einsum("ij,ij->i", g[bag_of[kept]], w[i[kept]])
    return out


#: The per_sample_weights gradient of _embedding_bag (mode sum): each index's row dotted with its bag's gradient.
#: PyTorch: aten::_embedding_bag_per_sample_weights_backward.
_embedding_bag_per_sample_weights_backward: Op = defop(
    "_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, "
    "Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor", tags=PT2,
    cpu=lambda grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1: call_numpy(
        lambda g, w, i, o, o2b: _psw_backward(g, w, i, o, o2b, padding_idx), grad, weight, indices, offsets,
        offset2bag),
    meta=lambda grad, weight, indices, *rest, **kw: meta_like([indices.numel()], grad.dtype))


def _embedding_bag_setup(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    names = ("weight", "indices", "offsets", "scale_grad_by_freq", "mode", "sparse", "per_sample_weights",
             "include_last_offset", "padding_idx")
    defaults = (None, None, None, False, 0, False, None, False, -1)
    for name, value in zip(names, tuple(inputs) + defaults[len(inputs):]):
        setattr(ctx, name, value)
    ctx.offset2bag, ctx.bag_size, ctx.maximum_indices = output[1:]
    ctx.num_weights = inputs[0].shape[0]


def _embedding_bag_formula(ctx: Any, grad: Any, *unused: Any) -> tuple[Any, ...]:
    """weight: _embedding_bag_backward; per_sample_weights:
    _embedding_bag_per_sample_weights_backward. PyTorch: derivatives.yaml (_embedding_bag)."""
    weight_grad = psw_grad = None
    if grad is not None and ctx.needs_input_grad[0]:
        weight_grad = _embedding_bag_backward(grad, ctx.indices, ctx.offsets, ctx.offset2bag, ctx.bag_size,
                                             ctx.maximum_indices, ctx.num_weights, ctx.scale_grad_by_freq, ctx.mode,
                                             ctx.sparse, ctx.per_sample_weights, ctx.padding_idx)
    if grad is not None and ctx.per_sample_weights is not None and ctx.needs_input_grad[6]:
        psw_grad = _embedding_bag_per_sample_weights_backward(grad, ctx.weight, ctx.indices, ctx.offsets,
                                                             ctx.offset2bag, ctx.mode, ctx.padding_idx)
    return weight_grad, None, None, None, None, None, psw_grad, None, None


#: Sums, means or maxima of bags of embedding rows (torch.nn.functional.embedding_bag's operator).
_embedding_bag: Op = defop(
    "_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, "
    "bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) "
    "-> (Tensor, Tensor, Tensor, Tensor)", tags=CORE, cpu=_embedding_bag_cpu, meta=_embedding_bag_meta,
    backward=_embedding_bag_formula, setup_context=_embedding_bag_setup)
