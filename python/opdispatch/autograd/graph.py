"""The autograd graph: per-tensor autograd state, backward nodes, and the
context object through which nodes save tensors for backward.

A tensor's autograd state lives in its TensorImpl (``TensorBase._autograd_meta``),
so it survives while C++ holds the tensor. PyTorch: torch/csrc/autograd
(variable.h, function.h, saved_variable.h).
"""
from __future__ import annotations

import warnings
import weakref
from typing import Any, Callable, Optional, Sequence

from .. import _C
from .._tensor_type import Tensor

Edge = tuple[Optional["Node"], int]

#: input_layout entry of a Tensor input (a Tensor[] input has its length instead).
TENSOR = "Tensor"



#: The autograd state of one tensor (kept in its TensorImpl): ``grad``,
#: ``grad_fn``, ``output_nr``, ``retains_grad``, ``grad_accumulator`` (a weak
#: reference to a leaf's AccumulateGrad), ``view_of`` (the view operator that
#: made it while recording). ``AutogradMeta(grad_fn=None, output_nr=0)``. A C
#: type: one is made for every output of a recorded call.
AutogradMeta = _C._AutogradMeta


def get_meta(t: _C.TensorBase) -> Optional[AutogradMeta]:
    return t._autograd_meta


def meta_for_write(t: _C.TensorBase) -> AutogradMeta:
    meta = t._autograd_meta
    if meta is None:
        meta = AutogradMeta()
        t._autograd_meta = meta
    return meta


def grad_fn(t: _C.TensorBase) -> Optional["Node"]:
    meta = t._autograd_meta
    return None if meta is None else meta.grad_fn


def is_leaf(t: _C.TensorBase) -> bool:
    return grad_fn(t) is None


#: ``set_history(t, node, output_nr)``: makes ``t`` the ``output_nr``-th
#: output of ``node`` (``t`` then requires grad). In C (_C._set_history): it
#: runs for every output of a recorded call.
set_history = _C._set_history


#: ``gradient_edge(t) -> (node, input_nr)``: where the gradient of ``t``
#: flows: (its grad_fn, output_nr), its AccumulateGrad for a leaf that
#: requires grad (made when it has no live one: the leaf refers to it weakly,
#: the graph strongly), or (None, 0) for anything else. In C
#: (_C._gradient_edge): it runs for every tensor input of a recorded call.
gradient_edge = _C._gradient_edge


class Node:
    """A backward function: maps gradients of its outputs to gradients of its inputs.

    ``next_functions[i]`` is the edge the i-th input gradient flows along.
    Subclasses implement ``apply`` (and ``input_metadata`` when they know
    their outputs' shapes and dtypes). PyTorch: torch::autograd::Node.
    """

    # Class-level defaults, overridden per instance when set (nodes are made on every recorded call).
    _retained: Optional[dict[int, weakref.ref[Any]]] = None
    #: Whether the engine calls ``apply`` when every gradient arriving at the
    #: node is None (see Note [Nodes without incoming gradients] in engine.py).
    runs_without_grads = False

    def __init__(self, next_functions: Sequence[Edge]) -> None:
        self.next_functions: tuple[Edge, ...] = tuple(next_functions)

    def name(self) -> str:
        return type(self).__name__

    @property
    def num_outputs(self) -> int:
        return 1

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        """Gradients for each of ``next_functions`` (None where there is none)."""
        raise NotImplementedError

    def input_metadata(self, output_nr: int) -> Optional[tuple[Any, ...]]:
        """(shape, dtype[, device]) of the tensor whose gradient arrives at ``output_nr``, if known
        (the engine checks each gradient against them)."""
        return None

    def release(self) -> None:
        """Frees saved state after a backward pass that does not retain the graph."""

    def retain_output(self, output_nr: int, t: _C.TensorBase) -> None:
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(t)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """Adds the incoming gradient to a leaf's ``.grad``. (gradient_edge makes
    them in C, setting only ``variable``: keep what else they hold at class level.)"""

    __slots__ = ("variable",)
    next_functions: tuple[Edge, ...] = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def input_metadata(self, output_nr: int) -> Optional[tuple[Any, ...]]:
        return self.variable.shape, self.variable.dtype, self.variable.device


class NotImplementedNode(Node):
    """The grad_fn of outputs of an operator with no autograd kernel (the
    autograd fallback in "warn" mode): at backward it warns (UserWarning,
    naming the operator) and passes no gradient to the operator's inputs.
    PyTorch: the warnNotImplemented node of autograd_not_implemented_fallback.cpp."""

    def __init__(self, op_name: str, next_functions: Sequence[Edge]) -> None:
        super().__init__(next_functions)
        self.op_name = op_name

    def name(self) -> str:
        return f"NotImplemented[{self.op_name}]"

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        warnings.warn(
            f"{self.op_name}: an autograd kernel was not registered to the Autograd key(s) but we are trying to "
            f"backprop through it; no gradient reaches its inputs, which may be silently wrong. If the operator "
            f"is differentiable, register a formula (opdispatch.library.register_autograd('{self.op_name}', "
            f"backward, setup_context=...)); if it is not, register opdispatch.library.fallthrough_kernel at "
            f"its Autograd key, or call opdispatch._C._set_autograd_fallback_mode('nothing').",
            UserWarning, stacklevel=2)
        return [None] * len(self.next_functions)


_TensorBase = _C.TensorBase
_saved_versions = _C._saved_versions


class BackwardContext:
    """The ``ctx`` of a formula: ``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, ``mark_non_differentiable``, and any attributes the
    formula sets. PyTorch: torch.autograd.function.FunctionCtx.

    A saved tensor modified in place before backward makes ``saved_tensors``
    raise (the version it had when saved is kept). PyTorch: SavedVariable.
    """

    # Class-level defaults, overridden per instance when set (a context is made on every recorded call).
    _saved: Optional[tuple[Any, ...]] = ()
    _versions: tuple[int, ...] = ()
    #: (index in _saved, output_nr) of saved outputs of the node this context belongs to.
    _saved_outputs: tuple[tuple[int, int], ...] = ()
    _non_differentiable: tuple[Any, ...] = ()

    def __init__(self, op_name: str, needs_input_grad: tuple[bool, ...]) -> None:
        self._op_name = op_name
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for backward; modifying them in place
        before backward makes backward raise."""
        self._saved = tensors
        self._versions = _saved_versions(tensors)

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Marks output tensors as not differentiable (called from
        setup_context): they do not require grad, and backward receives zeros
        as their gradients. PyTorch: FunctionCtx.mark_non_differentiable."""
        self._non_differentiable = self._non_differentiable + outputs

    #: The saved values (``save_for_backward``'s arguments); RuntimeError if a
    #: backward without retain_graph freed them, or if a saved tensor was
    #: modified in place since it was saved. While grad mode is on (backward
    #: with create_graph), a saved output of this context's node is given its
    #: history again. In C (_C._saved_tensors): formulas read it on every
    #: backward. PyTorch: SavedVariable::unpack.
    saved_tensors = property(_C._saved_tensors)

    def _is_non_differentiable(self, t: Any) -> bool:
        return bool(self._non_differentiable) and any(t is m for m in self._non_differentiable)

    def _release(self) -> None:
        self._saved = None


#: ``unsave_outputs(node, outputs)``: replaces the outputs of ``node`` (the
#: ones whose grad_fn it is) among the tensors it saved by detached aliases (same memory and version
#: counter, no history), so that no reference cycle output -> node -> output
#: forms; saved_tensors gives them their history back when backward is
#: differentiated. PyTorch: SavedVariable's is_output (it saves outputs
#: without grad_fn). In C (_C._unsave_outputs): it runs on every recorded call
#: whose formula saves its output.
unsave_outputs = _C._unsave_outputs


class Formula:
    """What the nodes of one operator's autograd formula share, fixed when the
    formula is registered: the operator's name, ``backward(ctx, *grads)``, the
    names of its positional inputs, and how to make the zero gradient of an
    output that received none (None: backward gets None for it, as PyTorch's
    generated nodes and ``ctx.set_materialize_grads(False)``)."""

    __slots__ = ("op_name", "backward", "input_names", "materialize")

    def __init__(self, op_name: str, backward: Callable[..., Any], input_names: Sequence[str],
                 materialize: Optional[Callable[[tuple[int, ...], Any, Any], Any]]) -> None:
        self.op_name = op_name
        self.backward = backward
        self.input_names = tuple(input_names)
        self.materialize = materialize


class OpNode(Node, BackwardContext):
    """The grad_fn of an operator with an autograd formula, and the formula's
    ``ctx`` (as PyTorch's autograd.Function nodes are their ctx).

    ``backward(ctx, *grads)`` receives one gradient per output of the
    operator: a tensor (zeros where the output got none), a list for a
    Tensor[] output, None for a non-tensor output. It returns a tuple of one
    gradient per positional input, or only for the ones the caller passed (a
    bare value for a single one): a tensor or None, a list (or None) for a
    Tensor[] input, None for non-tensor inputs. A gradient may keep the
    shape and dtype of the output it came from where its input was broadcast
    or promoted: the engine sums and casts it (as PyTorch's validate_outputs).
    PyTorch: torch._library.autograd.make_autograd_impl (backward and its checks).

    Made per recorded call; the recording kernel sets ``outputs_meta`` (one
    (shape, dtype, device) per flattened output, None for a non-tensor) and
    ``output_layout`` (one entry per return: None for a non-tensor, TENSOR for
    a tensor, n for a list of n tensors) once the operator has run.
    """

    # Slots for what every node has (a node needs no __dict__ unless its formula's setup_context stores
    # something); the base classes' defaults for the rest.
    __slots__ = ("formula", "needs_input_grad", "next_functions", "input_layout", "num_passed", "outputs_meta")
    output_layout: tuple[Optional[Any], ...] = (TENSOR,)
    outputs_meta: Sequence[Optional[tuple[Any, ...]]]

    # (_C._PlainAutogradKernel makes its nodes with these five attributes without calling __init__.)
    def __init__(self, formula: Formula, needs_input_grad: tuple[bool, ...], next_functions: tuple[Edge, ...],
                 input_layout: Sequence[Optional[Any]], num_passed: int) -> None:
        # input_layout[i], one per positional input: None for a non-tensor (or
        # a Tensor? passed None), TENSOR for a tensor, n for a list of n tensors.
        self.formula = formula
        self.needs_input_grad = needs_input_grad
        self.next_functions = next_functions
        self.input_layout = input_layout
        self.num_passed = num_passed

    @property
    def _op_name(self) -> str:  # type: ignore[override]
        return self.formula.op_name

    @property
    def runs_without_grads(self) -> bool:  # type: ignore[override]
        """True for a formula that materializes missing gradients as zeros
        (register_autograd's; PyTorch runs a custom op's backward then)."""
        return self.formula.materialize is not None

    @property
    def ctx(self) -> "OpNode":
        """The formula's context: the node itself."""
        return self

    def name(self) -> str:
        return f"{self.formula.op_name}Backward"

    @property
    def num_outputs(self) -> int:
        return len(self.outputs_meta)

    def input_metadata(self, output_nr: int) -> Optional[tuple[Any, ...]]:
        """(shape, dtype, device) of output ``output_nr`` (None for a non-tensor)."""
        return self.outputs_meta[output_nr]

    def _grads_per_output(self, grad_outputs: list[Any]) -> list[Any]:
        materialize = self.formula.materialize
        flat = grad_outputs if materialize is None else [
            g if g is not None or meta is None else materialize(*meta) for g, meta in zip(grad_outputs, self.outputs_meta)]
        if self.output_layout is _ONE_TENSOR:
            return flat
        grads: list[Any] = []
        i = 0
        for layout in self.output_layout:
            if layout is None or layout == TENSOR:
                grads.append(flat[i] if layout == TENSOR else None)
                i += 1
            else:
                grads.append(flat[i:i + layout])
                i += layout
        return grads

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        """Calls ``formula.backward(self, *grads)`` (one gradient per output,
        grouped and materialized by _grads_per_output) and flattens what it
        returns into one gradient per ``next_functions`` entry. RuntimeError,
        naming the operator, for a wrong number of gradients, a gradient for a
        non-Tensor input, or one that is not a Tensor or None. In C
        (_C._apply_op_node; the engine calls it without this frame)."""
        return _C._apply_op_node(self, grad_outputs)

    #: Frees the saved tensors (the engine does it in C for nodes that keep this method).
    release = BackwardContext._release


#: The output_layout of a node whose operator returns one Tensor.
_ONE_TENSOR = OpNode.output_layout


_C._set_accumulate_grad_class(AccumulateGrad)
_C._set_op_node_class(OpNode)


def check_inplace(op_name: str, t: Any, *, rebases_views: bool = False) -> None:
    """RuntimeError if recording an in-place update of ``t`` by ``op_name``
    is not allowed: ``t`` is a leaf that requires grad, or (unless the
    caller rebases a view's history with rebase_view, as operators' autograd
    kernels do) a recorded view. PyTorch: check_inplace in
    torch/csrc/autograd/VariableTypeUtils.h."""
    if not isinstance(t, _C.TensorBase) or not t.requires_grad:
        return
    if is_leaf(t):
        raise RuntimeError(
            f"{op_name}: a leaf tensor that requires grad is being used in an in-place operation; "
            f"do the update under opdispatch.autograd.no_grad(), or clone the tensor first."
        )
    meta = t._autograd_meta
    assert meta is not None  # not a leaf: it has a grad_fn
    view_of = meta.view_of
    base = meta.view_base
    if view_of is not None and base is not None and base.requires_grad and is_leaf(base):
        raise RuntimeError(
            f"{op_name}: a view of a leaf tensor that requires grad is being used in an in-place operation; "
            f"do the update under opdispatch.autograd.no_grad(), or clone the tensor first."
        )
    if view_of is not None and not rebases_views:
        raise RuntimeError(
            f"{op_name}: in-place update of a view (an output of {view_of}) that requires grad is not supported: "
            f"the gradient of the tensor it views would be wrong. Clone the view first, or use the out-of-place "
            f"operator."
        )


def mark_view(t: _C.TensorBase, op_name: str, input: Any) -> None:
    """Records that ``t`` (which has history) is a view made by ``op_name``
    of the tensor ``input``: its view_base is input's base (a view of a view
    views the first one's base). In C for plain schemas (setViewOf)."""
    meta = t._autograd_meta
    assert meta is not None
    meta.view_of = op_name
    if isinstance(input, _C.TensorBase):
        input_meta = input._autograd_meta
        base = input_meta.view_base if input_meta is not None else None
        meta.view_base = input if base is None else base


# Note [In-place updates of views]
# A recorded view shares memory with its base, so an in-place operator on the
# view changes the base too: the base's history must include the update, and
# the view's must pass through the base's. As PyTorch's rebase_history does,
# rebase_view makes the base the output of a CopySlices node that wraps the
# in-place operator's node (given the gradient of the whole base, it runs the
# operator's formula on the viewed part and puts the result for self back in
# place), and gives the view a ViewOfBase node (the gradient of the view,
# embedded at its place in a zero gradient of the base) leading to it. The
# geometry of both is kept (sizes, strides, storage offsets), so any view —
# a select, a slice, a transpose, a view of a view — is handled as
# as_strided. Unlike PyTorch, other views of the same base taken before the
# update keep their old history (PyTorch regenerates it from version counters).


def _geometry(t: _C.TensorBase, offset: int) -> tuple[list[int], list[int], int]:
    return list(t.shape), list(t.stride()), t.storage_offset() - offset


class _OverBase(Node):
    """A node whose gradient has a base's geometry, holding a view's place in
    it (Note [In-place updates of views])."""

    def __init__(self, next_functions: Sequence[Edge], base: Tensor, view: Tensor) -> None:
        super().__init__(next_functions)
        self.base_meta = (tuple(base.shape), base.dtype, base.device)
        self.base_stride = list(base.stride())
        self.view_geometry = _geometry(view, base.storage_offset())

    def _base_and_slice(self) -> tuple[Tensor, Tensor]:
        """A new uninitialised tensor of the base's geometry, and the view's place in it."""
        from .._builtins import factories, views  # the built-ins import this module

        shape, dtype, device = self.base_meta
        result = factories.empty_strided(list(shape), self.base_stride, dtype=dtype, device=device)
        return result, views.as_strided(result, *self.view_geometry)


class CopySlices(_OverBase):
    """The node of a base whose view was updated in place (Note [In-place
    updates of views]). Inputs: the base's previous history, then the wrapped
    node's inputs other than self. PyTorch: torch::autograd::CopySlices."""

    def __init__(self, base: Tensor, view: Tensor, fn: Node, base_edge: Edge) -> None:
        super().__init__((base_edge,) + tuple(fn.next_functions[1:]), base, view)
        self.fn = fn

    def name(self) -> str:
        return "CopySlices"

    def input_metadata(self, output_nr: int) -> Optional[tuple[Any, ...]]:
        return self.base_meta

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        from .._builtins import copy  # the built-ins import this module
        from .._builtins._numpy import CONTIGUOUS_FORMAT

        grad = grad_outputs[0]
        if grad is None:
            return [None] * len(self.next_functions)
        result, grad_slice = self._base_and_slice()
        copy.copy_(result, grad)
        res = self.fn.apply([copy.clone(grad_slice, memory_format=CONTIGUOUS_FORMAT)])
        if res[0] is None:
            copy.zero_(grad_slice)
        else:
            copy.copy_(grad_slice, res[0])
        return [result] + list(res[1:])

    def release(self) -> None:
        self.fn.release()


class ViewOfBase(_OverBase):
    """The node of a view whose base was rebased (Note [In-place updates of
    views]): the view's gradient, embedded at its place in zeros of the
    base's geometry. PyTorch: AsStridedBackward0, as a rebased view's grad_fn."""

    def __init__(self, base: Tensor, view: Tensor) -> None:
        super().__init__((gradient_edge(base),), base, view)
        self.view_meta = (tuple(view.shape), view.dtype, view.device)

    def name(self) -> str:
        return "AsStridedBackward0"

    def input_metadata(self, output_nr: int) -> Optional[tuple[Any, ...]]:
        return self.view_meta

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        from .._builtins import copy  # the built-ins import this module

        grad = grad_outputs[0]
        if grad is None:
            return [None]
        result, grad_slice = self._base_and_slice()
        copy.zero_(result)
        copy.copy_(grad_slice, grad)
        return [result]


def rebase_view(view: Tensor, node: Node) -> None:
    """After ``node`` (whose first input is self) recorded an in-place update
    of the recorded view ``view`` (``view``'s history is now ``node``):
    rebases the history of view's base and of ``view`` (Note [In-place
    updates of views]). Nothing for a tensor that is not a recorded view.
    PyTorch: rebase_history (VariableTypeUtils.h)."""
    meta = view._autograd_meta
    base = None if meta is None else meta.view_base
    if base is None:
        return
    copy_slices = CopySlices(base, view, node, gradient_edge(base))
    set_history(base, copy_slices, 0)
    set_history(view, ViewOfBase(base, view), 0)
