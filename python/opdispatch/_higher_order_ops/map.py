"""``map(f, xs, *args)``: ``f`` applied to each slice of ``xs`` along its
first dimension, the results stacked; tracing keeps it as one node whose
body is a subgraph traced once, on one slice. PyTorch:
torch/_higher_order_ops/map.py (map, and the operator map_impl).

    ys = map(lambda x, w: x @ w, xs, w)      # ys[i] == xs[i] @ w
"""
from __future__ import annotations

from typing import Any, Callable

from .. import _C
from .._functional import stack
from .._ops import HigherOrderOperator
from .._subclasses.fake_tensor import FakeTensorMode
from ..autograd.function import Function
from ..tracing import ProxyTorchDispatchMode
from ..utils._pytree import tree_flatten, tree_unflatten
from .utils import fill_grads, vjp_fn
from .._tensor_type import Tensor

__all__ = ["map", "map_impl"]

# Note [map]
# map_impl(f, xs, pos_args) is the HigherOrderOperator: ``xs`` a list of
# tensors with the same first size B >= 1, ``pos_args`` a list of values
# passed whole to every step; ``f(*slices, *pos_args)`` returns a pytree of
# tensors, and each output leaf is the stack of that leaf over the B steps.
# Its kernels:
#  - CompositeExplicitAutograd: the loop, then od::stack per output leaf;
#  - Autograd: an autograd.Function whose backward is itself a map_impl, of
#    the vector-Jacobian product of one step over (xs slices, output
#    gradient slices); the gradients of pos_args come out stacked per step
#    and are summed over the steps;
#  - ProxyTorchDispatchMode (make_fx): traces f once, on the first slices,
#    into body_graph_i and records map_impl(body_graph_i, xs, pos_args);
#  - FakeTensorMode: runs f on the first slices and gives each output leaf
#    the leading size B (contiguous, as od::stack's result is).
# map_impl was chosen as the second built-in higher-order operator (over
# while_loop and wrap) because its body is traced on tensors of another
# shape than the operator's inputs and its autograd rule is a map of its own
# (pos_args gradients reduced over the steps): it exercises the machinery
# beyond cond, whereas wrap adds nothing and while_loop has no autograd rule
# without a bound on its trip count.


class MapImpl(HigherOrderOperator):
    """``opdispatch.ops.higher_order.map_impl(f, xs, pos_args)``, the operator
    under :func:`map` (Note [map]): ``f`` a callable, ``xs`` a list of tensors
    sharing their first size B >= 1, ``pos_args`` a list of values passed
    whole to every step; returns ``f``'s output pytree with each tensor leaf
    stacked over the B steps. Kernels: CompositeExplicitAutograd, Autograd,
    ProxyTorchDispatchMode (make_fx), FakeTensorMode. PyTorch: MapImpl."""

    def __init__(self) -> None:
        super().__init__("map_impl")


map_impl = MapImpl()


def map(f: Callable[..., Any], xs: Any, *args: Any) -> Any:
    """``stack([f(x, *args) for x in xs])``, leaf by leaf: ``xs`` is a tensor
    or a pytree of tensors sharing their first size B (each step gets the
    pytree of the i-th slices); ``args`` are passed whole to every step. ``f``
    returns a pytree of tensors; the result has that structure, each tensor
    with a leading dimension of size B.

    Raises RuntimeError if a leaf of ``xs`` is not a tensor, if B is 0, or if
    the leaves' first sizes differ. PyTorch: torch._higher_order_ops.map.
    """
    flat_xs, xs_spec = tree_flatten(xs)
    flat_args, args_spec = tree_flatten(args)
    if not flat_xs or not all(isinstance(t, Tensor) for t in flat_xs):
        raise RuntimeError(f"map: the mapped xs can only consist of tensors (at least one), got {flat_xs}")
    shapes = [tuple(t.shape) for t in flat_xs]
    if any(len(s) == 0 for s in shapes):
        raise RuntimeError(f"map: every tensor of xs needs a dimension to map over, got shapes {shapes}")
    if shapes[0][0] == 0:
        raise RuntimeError("map: leading dimensions of mapped xs cannot be 0")
    if any(s[0] != shapes[0][0] for s in shapes):
        raise RuntimeError(f"map: leading dimensions of mapped xs must be consistent, got shapes {shapes}")
    num_xs = len(flat_xs)

    def step(*flat: Any) -> Any:
        return f(tree_unflatten(flat[:num_xs], xs_spec), *tree_unflatten(flat[num_xs:], args_spec))

    return map_impl(step, flat_xs, flat_args)


def _slices(xs: list[Any], i: int) -> list[Any]:
    return [x.select(0, i) for x in xs]


@map_impl.py_impl(_C.DispatchKey.CompositeExplicitAutograd)
def _map_dense(f: Callable[..., Any], xs: list[Any], pos_args: list[Any]) -> Any:
    steps = [tree_flatten(f(*_slices(xs, i), *pos_args)) for i in range(xs[0].shape[0])]
    spec = steps[0][1]
    for i, (_, s) in enumerate(steps):
        if s != spec:
            raise RuntimeError(f"map: step {i} returned {s} but step 0 returned {spec}; every step must return the "
                               f"same structure")
    for leaf in steps[0][0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"map: the mapped function must return tensors only, got {type(leaf).__name__}")
    stacked = [stack([leaves[j] for leaves, _ in steps]) for j in range(len(steps[0][0]))]
    return tree_unflatten(stacked, spec)


#: Marks where a saved tensor goes back among map_impl's inputs.
_SAVED = object()


class _MapAutograd(Function):
    """The Autograd kernel of map_impl (Note [map]). PyTorch: MapAutogradOp."""

    @staticmethod
    def forward(ctx: Any, f: Callable[..., Any], num_xs: int, out_spec: list[Any], *flat: Any) -> tuple[Any, ...]:
        ctx.f, ctx.num_xs = f, num_xs
        ctx.save_for_backward(*(a for a in flat if isinstance(a, Tensor)))
        ctx.non_tensors = [_SAVED if isinstance(a, Tensor) else a for a in flat]
        with _C._AutoDispatchBelowAutograd():
            out = map_impl(f, list(flat[:num_xs]), list(flat[num_xs:]))
        leaves, spec = tree_flatten(out)
        out_spec.append(spec)
        return tuple(leaves)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        saved = iter(ctx.saved_tensors)
        flat = tuple(next(saved) if a is _SAVED else a for a in ctx.non_tensors)
        num_xs, num_grads = ctx.num_xs, len(grads)
        wants_grad = ctx.needs_input_grad[3:]
        xs, pos_args = list(flat[:num_xs]), list(flat[num_xs:])
        bw = vjp_fn(ctx.f, tree_flatten(flat)[1], wants_grad)

        def step(*args: Any) -> tuple[Any, ...]:
            # map_impl passes (*x slices, *gradient slices, *pos_args); bw wants (*primals, *cotangents).
            x_slices, g_slices, rest = args[:num_xs], args[num_xs:num_xs + num_grads], args[num_xs + num_grads:]
            return bw(*x_slices, *rest, *g_slices)

        stacked = map_impl(step, xs + list(grads), pos_args)
        wanted = [i for i, w in enumerate(wants_grad) if w]
        grads_out = [g if i < num_xs else g.sum(0) for i, g in zip(wanted, stacked)]
        return (None, None, None, *fill_grads(grads_out, wants_grad))


@map_impl.py_autograd_impl
def _map_autograd(f: Callable[..., Any], xs: list[Any], pos_args: list[Any]) -> Any:
    out_spec: list[Any] = []
    leaves = _MapAutograd.apply(f, len(xs), out_spec, *xs, *pos_args)
    return tree_unflatten(leaves, out_spec[0])


@map_impl.py_impl(ProxyTorchDispatchMode)
def _map_trace(mode: ProxyTorchDispatchMode, f: Callable[..., Any], xs: list[Any], pos_args: list[Any]) -> Any:
    (body_graph,), lifted = mode.trace_subgraphs([("body_graph", f)], (*_slices(xs, 0), *pos_args))
    args = (body_graph, list(xs), [*pos_args, *lifted])
    return mode.record(map_impl, args, {}, map_impl(*args))


@map_impl.py_impl(FakeTensorMode)
def _map_fake(mode: FakeTensorMode, f: Callable[..., Any], xs: list[Any], pos_args: list[Any]) -> Any:
    with mode:
        first = tree_flatten(f(*_slices(xs, 0), *pos_args))
        size = xs[0].shape[0]
        leaves = [t.unsqueeze(0).expand([size, *t.shape]).contiguous() for t in first[0]]
    return tree_unflatten(leaves, first[1])
