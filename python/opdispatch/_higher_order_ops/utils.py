"""Helpers the higher-order operators share, and that authors of new ones
import: the vector-Jacobian product of a branch or body function (their
autograd rules), :func:`register_fake`, :func:`redirect_to_mode` and
:func:`autograd_not_implemented`. PyTorch: torch/_higher_order_ops/utils.py."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Optional, Sequence

from .. import _C
from .._ops import HigherOrderOperator, OperatorBase
from ..autograd import engine
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, is_grad_enabled
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


# hop -> its fake function (register_fake), which FakeTensorMode runs for it. PyTorch: same name.
registered_hop_fake_fns: dict[HigherOrderOperator, Callable[..., Any]] = {}


def redirect_to_mode(hop: OperatorBase, mode: type) -> Callable[..., Any]:
    """Registers ``hop``'s kernel for the dispatch-mode class ``mode``: it
    hands the call to the mode's ``__torch_dispatch__(hop, [], args,
    kwargs)``. Returns the kernel. PyTorch: same name."""

    @hop.py_impl(mode)
    def impl(mode: Any, *args: Any, **kwargs: Any) -> Any:
        return mode.__torch_dispatch__(hop, [], args, kwargs)

    return impl


def register_fake(hop: HigherOrderOperator, fn: Optional[Callable[..., Any]] = None) -> Any:
    """Registers ``fn`` (same arguments as ``hop``) as ``hop``'s fake
    function: under a FakeTensorMode, ``hop`` runs ``fn`` with the mode
    active, so the tensors it makes are fakes. A decorator when ``fn`` is
    omitted; returns ``fn``. Raises RuntimeError if ``hop`` has one
    already. PyTorch: torch._higher_order_ops.utils.register_fake."""
    if hop in registered_hop_fake_fns:
        raise RuntimeError(f"register_fake: higher-order operator {hop.name()} already has a fake function")

    def register(func: Callable[..., Any]) -> Callable[..., Any]:
        from .._subclasses.fake_tensor import FakeTensorMode

        redirect_to_mode(hop, FakeTensorMode)
        registered_hop_fake_fns[hop] = func
        return func

    return register if fn is None else register(fn)


class _DelayedError(Function):
    """Passes its input on; its backward raises RuntimeError(``message``).
    PyTorch: torch._C._functions.DelayedError."""

    @staticmethod
    def forward(ctx: Any, message: str, x: Any) -> Any:
        ctx.message = message
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: Any) -> Any:
        raise RuntimeError(ctx.message)


def autograd_not_implemented(op: OperatorBase, deferred_error: bool) -> Callable[..., Any]:
    """An Autograd kernel for ``op`` (``op.py_autograd_impl(...)``) that runs
    it below autograd and, when grad mode is on and an input requires grad,
    raises RuntimeError("Autograd not implemented for <op>") — at once, or
    with ``deferred_error`` at backward (the floating-point outputs then
    require grad, through a node that raises).
    PyTorch: torch._higher_order_ops.utils.autograd_not_implemented."""

    def kernel(*args: Any, **kwargs: Any) -> Any:
        with _C._AutoDispatchBelowAutograd():
            result = op(*args, **kwargs)  # type: ignore[operator]  # (OperatorBase's subclasses are callable)
        operands = tree_flatten((args, kwargs))[0]
        if not (is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad for t in operands)):
            return result
        message = f"Autograd not implemented for {op.name()}"
        if not deferred_error:
            raise RuntimeError(message)

        def delayed(t: Any) -> Any:
            if not isinstance(t, Tensor) or not (t.is_floating_point() or t.is_complex()):
                return t
            return _DelayedError.apply(message, t.detach().requires_grad_(True))

        flat, spec = tree_flatten(result)
        return tree_unflatten([delayed(t) for t in flat], spec)

    return kernel
