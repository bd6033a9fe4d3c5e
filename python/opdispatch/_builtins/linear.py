"""The linear layer: linear (input @ weight.T + bias) as PyTorch's
CompositeImplicitAutograd decomposition: addmm for a 2-D input with a bias
(and a contiguous one of more dimensions with a 1-D bias, flattened to 2-D),
matmul and add otherwise."""
from __future__ import annotations

from typing import Optional

from . import elementwise, linalg, views
from ._registry import PT2, Op, defop
from .._tensor_type import Tensor


def _linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """PyTorch: at::native::linear (with _flatten_nd_linear for contiguous inputs of 3 or more dimensions)."""
    if weight.ndim not in (1, 2):
        raise RuntimeError(f"od::linear: expected a 1-D or 2-D weight, got shape {list(weight.shape)}")
    weight_t = views.transpose(weight, 0, 1) if weight.ndim == 2 else weight
    if bias is not None and weight.ndim == 2:
        if input.ndim == 2:
            return linalg.addmm(bias, input, weight_t)
        if input.ndim >= 3 and bias.ndim == 1 and input.is_contiguous():
            rows = views.view(input, [-1, input.shape[-1]])
            return views.view(linalg.addmm(bias, rows, weight_t), [*input.shape[:-1], weight.shape[0]])
    out = linalg.matmul(input, weight_t)
    return out if bias is None else elementwise.add(out, bias)


linear: Op = defop("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", tags=PT2, composite=_linear)
