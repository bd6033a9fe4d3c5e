"""``cond(pred, true_fn, false_fn, operands)``: structured if/else that
tracing keeps as one node with both branches as subgraphs. PyTorch:
torch/_higher_order_ops/cond.py (torch.cond).

    def f(x):
        return cond(x.sum() > 0, lambda x: x.sin(), lambda x: x.cos(), (x,))

    f(opdispatch.randn(3))                 # eager: runs one branch
    make_fx(f)(opdispatch.randn(3))        # one cond node; true_graph_0 and false_graph_0
"""
from __future__ import annotations

from typing import Any, Callable

from .. import _C
from .._ops import HigherOrderOperator
from .._subclasses.fake_tensor import FakeTensorMode
from ..autograd.function import Function
from ..tracing import ProxyTorchDispatchMode
from ..utils._pytree import TreeSpec, tree_flatten, tree_unflatten
from .utils import fill_grads, vjp_fn
from .._tensor_type import Tensor

__all__ = ["cond"]

# Note [cond]
# cond is a HigherOrderOperator (Note [Dispatching a higher-order operator]
# in _ops.py) with four kernels:
#  - CompositeExplicitAutograd (every backend, and calls with no tensor):
#    runs true_fn(*operands) if pred is true, else false_fn(*operands);
#  - Autograd (an operand requires grad): an autograd.Function whose forward
#    runs cond below autograd and whose backward is itself a cond, of the
#    vector-Jacobian products of the two branches, so that a traced backward
#    keeps both too;
#  - ProxyTorchDispatchMode (make_fx): traces both branches into subgraphs
#    and records one node cond(pred, true_graph_i, false_graph_i, operands)
#    (Note [Tracing higher-order operators] in tracing.py); a real trace
#    requires the branches' tensor outputs to have the same dim and dtype,
#    as PyTorch 2.13's merge of the branches does;
#  - FakeTensorMode: runs both branches on the fake operands and requires
#    their outputs to agree (structure, and per tensor shape, dtype, device
#    and strides), since either may run: the error names what differs.
# pred is a bool or a one-element tensor (of any dtype, read with bool());
# operands a tuple or list, possibly nested, of tensors.


class CondOp(HigherOrderOperator):
    """``opdispatch.ops.higher_order.cond``. Calling it validates the
    arguments (RuntimeError naming the problem) and dispatches. PyTorch: CondOp."""

    def __init__(self) -> None:
        super().__init__("cond")

    def __call__(self, /, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                 operands: tuple[Any, ...] | list[Any] = ()) -> Any:
        _validate(pred, true_fn, false_fn, operands)
        return super().__call__(pred, true_fn, false_fn, operands)


cond_op = CondOp()


def cond(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
         operands: tuple[Any, ...] | list[Any] = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, as an
    operator that tracing (make_fx) records as one node keeping both branches
    (Note [cond]).

    Args:
        pred: a bool, or a tensor with one element (nonzero is true).
        true_fn, false_fn: callables taking ``*operands``; they must return
            the same structure of tensors with the same shape, dtype, device
            and strides (checked when traced with fake tensors).
        operands: a tuple or list (possibly nested) of tensors. Tensors the
            branches need gradients for must be operands.

    Raises RuntimeError for a bad ``pred``, a non-callable branch or
    non-tensor operands, and when the branches' outputs differ under
    FakeTensorMode. PyTorch: torch.cond (without torch.compile).
    """
    return cond_op(pred, true_fn, false_fn, operands)


def _validate(pred: Any, true_fn: Any, false_fn: Any, operands: Any) -> None:
    """PyTorch's checks (torch.cond's _validate_input), with its messages."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"cond: Expected pred to be bool or single-element tensor, but got a tensor of shape "
                               f"{tuple(pred.shape)}")
    elif not isinstance(pred, bool):
        raise RuntimeError(f"cond: Expected pred to be bool or tensor, but got {type(pred).__name__} {pred!r}")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError(f"cond: Expect both branches to be callable, got {type(true_fn).__name__} and "
                           f"{type(false_fn).__name__}")
    if not isinstance(operands, (tuple, list)) or any(
            not isinstance(t, Tensor) for t in tree_flatten(operands)[0]):
        raise RuntimeError(f"cond: Expect operands to be a tuple of possibly nested dict/list/tuple that only "
                           f"consists of tensor leaves, but got {operands!r}")


def _check_same_structure(true_spec: TreeSpec, false_spec: TreeSpec) -> None:
    if true_spec != false_spec:
        raise RuntimeError(f"cond: the branches return different structures: true_fn returns {true_spec}, false_fn "
                           f"returns {false_spec}; both must return the same pytree of tensors")


@cond_op.py_impl(_C.DispatchKey.CompositeExplicitAutograd)
def _cond_dense(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                operands: tuple[Any, ...] | list[Any]) -> Any:
    return true_fn(*operands) if bool(pred) else false_fn(*operands)


class _CondAutograd(Function):
    """The Autograd kernel of cond (Note [cond]). PyTorch: CondAutogradOp."""

    @staticmethod
    def forward(ctx: Any, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], spec: TreeSpec,
                out_spec: list[Any], *flat_operands: Any) -> tuple[Any, ...]:
        ctx.pred, ctx.true_fn, ctx.false_fn, ctx.spec = pred, true_fn, false_fn, spec
        ctx.save_for_backward(*flat_operands)
        with _C._AutoDispatchBelowAutograd():
            out = cond_op(pred, true_fn, false_fn, tree_unflatten(flat_operands, spec))
        leaves, spec_out = tree_flatten(out)
        out_spec.append(spec_out)
        return tuple(leaves)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        operands = ctx.saved_tensors
        wants_grad = ctx.needs_input_grad[5:]
        cotangents = tuple(g for g in grads if isinstance(g, Tensor))
        true_bw = vjp_fn(ctx.true_fn, ctx.spec, wants_grad)
        false_bw = vjp_fn(ctx.false_fn, ctx.spec, wants_grad)
        operand_grads = cond_op(ctx.pred, true_bw, false_bw, (*operands, *cotangents))
        return (None, None, None, None, None, *fill_grads(operand_grads, wants_grad))


@cond_op.py_autograd_impl
def _cond_autograd(pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                   operands: tuple[Any, ...] | list[Any]) -> Any:
    flat, spec = tree_flatten(operands)
    out_spec: list[Any] = []
    leaves = _CondAutograd.apply(pred, true_fn, false_fn, spec, out_spec, *flat)
    return tree_unflatten(leaves, out_spec[0])


@cond_op.py_impl(ProxyTorchDispatchMode)
def _cond_trace(mode: ProxyTorchDispatchMode, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
                operands: tuple[Any, ...] | list[Any]) -> Any:
    (true_graph, false_graph), lifted = mode.trace_subgraphs(
        [("true_graph", true_fn), ("false_graph", false_fn)], tuple(operands))
    _check_same_structure(true_graph._out_spec, false_graph._out_spec)
    if mode.fake_mode is None:  # (a fake trace's cond call below checks all metadata: _cond_fake)
        for t, f in zip(_traced_outputs(true_graph), _traced_outputs(false_graph)):
            _check_mergeable(t, f)
    args = (pred, true_graph, false_graph, (*operands, *lifted))
    return mode.record(cond_op, args, {}, cond_op(*args))


def _check_mergeable(t: Any, f: Any) -> None:
    """What PyTorch 2.13 requires of two branches' tensor outputs when it
    merges them (a real trace, through torch.compile there): the same number
    of dimensions and dtype, with its messages; sizes may differ (PyTorch
    makes them new symbols). RuntimeError otherwise."""
    if not (isinstance(t, Tensor) and isinstance(f, Tensor)):
        return
    for what, a, b in (("dim", t.dim(), f.dim()), ("dtype", t.dtype, f.dtype)):
        if a != b:
            raise RuntimeError(f"When merging two branches' output in cond, expected same {what} but got {a} and {b}")


def _traced_outputs(gm: Any) -> list[Any]:
    """The values a traced branch returned (its output node's traced values)."""
    return [a.meta.get("val") if hasattr(a, "meta") else a for a in gm.graph.nodes[-1].args[0]]


@cond_op.py_impl(FakeTensorMode)
def _cond_fake(mode: FakeTensorMode, pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any],
               operands: tuple[Any, ...] | list[Any]) -> Any:
    with mode:
        true_out = true_fn(*operands)
        false_out = false_fn(*operands)
    true_leaves, true_spec = tree_flatten(true_out)
    false_leaves, false_spec = tree_flatten(false_out)
    _check_same_structure(true_spec, false_spec)
    for i, (t, f) in enumerate(zip(true_leaves, false_leaves)):
        _check_same_metadata(i, t, f)
    return true_out


def _check_same_metadata(i: int, t: Any, f: Any) -> None:
    if isinstance(t, Tensor) != isinstance(f, Tensor):
        raise RuntimeError(f"cond: output {i} of true_fn is a {type(t).__name__} but that of false_fn a "
                           f"{type(f).__name__}; both branches must return tensors in the same places")
    if not isinstance(t, Tensor):
        if t != f:
            raise RuntimeError(f"cond: output {i} is {t!r} in true_fn but {f!r} in false_fn; non-tensor outputs "
                               f"must be equal")
        return
    for what, a, b in (("shape", tuple(t.shape), tuple(f.shape)), ("dtype", (t.dtype,), (f.dtype,)),
                       ("device", (t.device,), (f.device,)), ("stride", tuple(t.stride()), tuple(f.stride()))):
        # Sizes may be SymInts (data-dependent): equal only to the same expression.
        if len(a) != len(b) or any(type(x) is not type(y) or x != y for x, y in zip(a, b)):
            shown = (a, b) if what in ("shape", "stride") else (a[0], b[0])
            raise RuntimeError(f"cond: the branches' outputs must have the same metadata, but output {i} has {what} "
                               f"{shown[0]} in true_fn and {shown[1]} in false_fn")
