"""The backward engine: runs the graph from output gradients to inputs.

Nodes run in dependency order (a node runs once every node that feeds it a
gradient has run), gradients arriving at one node output are summed, leaves
accumulate into ``.grad``. PyTorch: torch/csrc/autograd/engine.cpp.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from .. import _C
from .._tensor_type import Tensor
from . import graph

TensorOrTensors = Union[Tensor, Sequence[Tensor]]


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _ones_like(t: Tensor) -> Any:
    from .. import ones_like

    return ones_like(t)


def _root_grads(outputs: tuple[Any, ...], grad_outputs: tuple[Any, ...], create_graph: bool) -> list[Any]:
    if grad_outputs and len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(grad_outputs)} gradients for {len(outputs)} outputs; pass one per output")
    grads = []
    for i, out in enumerate(outputs):
        g = grad_outputs[i] if grad_outputs else None
        if g is None:
            if out.numel() != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs; output {i} has shape "
                    f"{tuple(out.shape)}: pass a gradient (e.g. ones_like(output))"
                )
            g = _ones_like(out)  # has no history
        elif tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"mismatch in shape: grad_output[{i}] has shape {tuple(g.shape)} and output[{i}] has shape "
                f"{tuple(out.shape)}"
            )
        elif not create_graph:
            g = g.detach()
        grads.append(g)
    return grads


#: ``_accumulate_into(t, g, create_graph)``: adds ``g`` to ``t.grad`` (out of
#: place: a .grad handed out is never changed). Without create_graph,
#: gradients carry no history already (grad mode is off); one that is a
#: tensor requiring grad (a formula returned an input) is detached. In C
#: (_C._accumulate_grad): the engine runs it for every leaf.
_accumulate_into = _C._accumulate_grad


def _accumulate_retained(node: graph.Node, grads: list[Any], create_graph: bool) -> None:
    """Accumulates into ``.grad`` of the live outputs of ``node`` that retain_grad() the gradients arriving there."""
    assert node._retained is not None
    for nr, ref in node._retained.items():
        t = ref()
        if t is not None and grads[nr] is not None:
            _accumulate_into(t, grads[nr], create_graph)


# Note [Nodes without incoming gradients]
# When every gradient arriving at a node is None (its outputs were used only
# where no gradient flows back), PyTorch's engine still calls it. Its
# generated nodes then return undefined gradients without computing
# anything (they check any_grad_defined), so the engine skips the built-in
# formulas here and passes None on. A custom autograd.Function and a
# register_autograd formula are called: their backward receives zeros, or
# None per ctx.set_materialize_grads(False) (PyTorch: PyNode::apply), and
# whatever it returns flows on (zeros reach .grad, as in PyTorch).


def _run(
    roots: list[graph.Edge],
    root_grads: list[Any],
    retain_graph: bool,
    create_graph: bool,
    captures: Optional[dict[graph.Edge, Any]],
) -> None:
    """Runs backward from ``roots``: nodes in dependency order (a node runs
    once every node that feeds it a gradient has run), gradients arriving at
    one node output summed, each checked against the input it reaches (summed
    down to a broadcast input's shape, cast to its dtype; PyTorch:
    validate_outputs), leaves accumulating
    into ``.grad``, grad mode set to ``create_graph``, nodes released after
    they ran unless ``retain_graph``. With ``captures`` (autograd.grad), the
    gradients reaching those edges are stored there and no ``.grad`` changes.
    The loop is C++ (_C._run_backward, csrc/python/Engine.cpp); the nodes are
    called through their Python methods."""
    _C._run_backward(roots, root_grads, retain_graph, create_graph, captures)


def backward(
    tensors: TensorOrTensors,
    grad_tensors: Optional[TensorOrTensors] = None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    inputs: Optional[TensorOrTensors] = None,
) -> None:
    """Accumulates into ``.grad`` of the leaves the gradients of ``tensors``
    (scalars, or weighted by ``grad_tensors``). With ``inputs``, only those
    leaves accumulate. ``retain_graph`` (default ``create_graph``) keeps saved
    tensors for another backward; ``create_graph`` records the backward
    computation so it can be differentiated again.

    Raises RuntimeError for an output that does not require grad, a
    non-scalar output without a gradient, or a second backward through a
    freed graph. PyTorch: torch.autograd.backward.
    """
    outputs = _as_tuple(tensors)
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn: it was not computed "
                f"from a tensor with requires_grad=True (or was computed under no_grad)"
            )
    if retain_graph is None:
        retain_graph = create_graph
    grads = _root_grads(outputs, _as_tuple(grad_tensors), create_graph)
    roots = [graph.gradient_edge(out) for out in outputs]
    if inputs is None:
        _run(roots, grads, retain_graph, create_graph, None)
        return
    targets = _as_tuple(inputs)
    captures: dict[graph.Edge, Any] = {graph.gradient_edge(t): None for t in targets}
    _run(roots, grads, retain_graph, create_graph, captures)
    for t in targets:
        g = captures[graph.gradient_edge(t)]
        if g is not None:
            _accumulate_into(t, g, create_graph)


def grad(
    outputs: TensorOrTensors,
    inputs: TensorOrTensors,
    grad_outputs: Optional[TensorOrTensors] = None,
    retain_graph: Optional[bool] = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Any, ...]:
    """The gradients of ``outputs`` with respect to ``inputs`` (a tuple, one
    per input), without touching any ``.grad``. Raises RuntimeError if an
    input was not used to compute the outputs, unless ``allow_unused`` (then
    its gradient is None). PyTorch: torch.autograd.grad.
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    for i, t in enumerate(ins):
        if not t.requires_grad:
            raise RuntimeError(f"input {i} does not require grad; grad() needs inputs with requires_grad=True")
    for i, out in enumerate(outs):
        if not out.requires_grad:
            raise RuntimeError(f"output {i} does not require grad and does not have a grad_fn")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _root_grads(outs, _as_tuple(grad_outputs), create_graph)
    edges = [graph.gradient_edge(t) for t in ins]
    captures: dict[graph.Edge, Any] = {e: None for e in edges}
    _run([graph.gradient_edge(o) for o in outs], grads, retain_graph, create_graph, captures)
    result = []
    for i, e in enumerate(edges):
        g = captures[e]
        if g is None and not allow_unused:
            raise RuntimeError(
                f"One of the differentiated Tensors (input {i}) appears to not have been used in the graph. "
                f"Set allow_unused=True if this is the desired behavior."
            )
        # (Gradients computed without create_graph have no history; one that is a tensor requiring grad, which
        # a formula returned unchanged, is detached.)
        result.append(g.detach() if g is not None and not create_graph and g.requires_grad else g)
    return tuple(result)


_C._set_engine_callbacks(_accumulate_retained, graph.OpNode.input_metadata)
