"""Helpers the higher-order operators share: the vector-Jacobian product of a
branch or body function, used by their autograd rules. PyTorch:
torch/_higher_order_ops/utils.py (create_bw_fn)."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

from .. import _C
from ..autograd import engine
from ..autograd.grad_mode import enable_grad
from ..utils._pytree import TreeSpec, tree_flatten, tree_unflatten
from .._tensor_type import Tensor


_AUTOGRAD_KEYS = list(_C._dispatch_get_runtime_keyset(_C.DispatchKey.Autograd))


@contextlib.contextmanager
def _recording() -> Iterator[None]:
    """Grad mode on and the autograd keys not excluded, for its block: a
    higher-order operator's kernel runs below autograd (the keys excluded), and
    its backward must record the branch it differentiates. Grad mode alone is
    not enough (Note [Grad mode is its own flag])."""
    excluded = [k for k in _AUTOGRAD_KEYS if _C._dispatch_tls_is_dispatch_key_excluded(k)]
    for k in excluded:
        _C._dispatch_tls_set_dispatch_key_excluded(k, False)
    try:
        with enable_grad():
            yield
    finally:
        for k in excluded:
            _C._dispatch_tls_set_dispatch_key_excluded(k, True)


def vjp_fn(fn: Callable[..., Any], args_spec: TreeSpec, wants_grad: Sequence[bool]) -> Callable[..., tuple[Any, ...]]:
    """The backward of ``fn``: ``bw(*primals, *cotangents)`` runs
    ``fn(*tree_unflatten(primals, args_spec))`` recording (grad mode on and the
    autograd keys not excluded, also when called below autograd, as a
    higher-order operator's kernel is) on detached
    copies of the primals, and returns the gradients of the primals flagged in
    ``wants_grad`` (a zero tensor where one was not used), one cotangent per
    tensor output of ``fn`` in order. Outputs that do not require grad are
    skipped. The same metadata comes out whatever ``fn`` computes, so the
    backwards of two branches agree. PyTorch: create_bw_fn."""
    n = len(wants_grad)

    def bw(*flat: Any) -> tuple[Any, ...]:
        primals, cotangents = flat[:n], flat[n:]
        with _recording():
            inputs = [p.detach().requires_grad_(w) if isinstance(p, Tensor) else p
                      for p, w in zip(primals, wants_grad)]
            outs = [o for o in tree_flatten(fn(*tree_unflatten(inputs, args_spec)))[0]
                    if isinstance(o, Tensor)]
            pairs = [(o, g) for o, g in zip(outs, cotangents) if o.requires_grad]
            wrt = [x for x, w in zip(inputs, wants_grad) if w]
            grads: Sequence[Any] = [None] * len(wrt)
            if pairs and wrt:
                grads = engine.grad([o for o, _ in pairs], wrt, [g for _, g in pairs], allow_unused=True)
        return tuple(x.new_zeros(x.shape) if g is None else g for x, g in zip(wrt, grads))

    return bw


def fill_grads(grads: Sequence[Any], wants_grad: Sequence[bool]) -> list[Any]:
    """One entry per input: the next of ``grads`` where ``wants_grad``, else None."""
    it = iter(grads)
    return [next(it) if w else None for w in wants_grad]
