"""The autograd graph: per-tensor autograd state, backward nodes, and the
context object through which nodes save tensors for backward.

A tensor's autograd state lives in its TensorImpl (``TensorBase._autograd_meta``),
so it survives while C++ holds the tensor. PyTorch: torch/csrc/autograd
(variable.h, function.h, saved_variable.h).
"""
from __future__ import annotations

import weakref
from typing import Any, Callable, Optional, Sequence

from .. import _C

Edge = tuple[Optional["Node"], int]

#: input_layout entry of a Tensor input (a Tensor[] input has its length instead).
TENSOR = "Tensor"

_requires_grad_slot = _C.TensorBase.requires_grad
_requires_grad = _requires_grad_slot.__get__


class AutogradMeta:
    """Autograd state of one tensor."""

    __slots__ = ("grad", "grad_fn", "output_nr", "retains_grad", "grad_accumulator", "view_of", "__weakref__")

    def __init__(self, grad_fn: Optional["Node"] = None, output_nr: int = 0) -> None:
        self.grad: Any = None
        self.grad_fn = grad_fn
        self.output_nr = output_nr
        self.retains_grad = False
        self.grad_accumulator: Optional[weakref.ref] = None
        #: The view operator that made this tensor while recording (None if it is not a recorded view).
        self.view_of: Optional[str] = None


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


def set_history(t: _C.TensorBase, node: "Node", output_nr: int) -> None:
    """Makes ``t`` the ``output_nr``-th output of ``node`` (t then requires grad)."""
    meta = t._autograd_meta
    if meta is None:
        t._autograd_meta = AutogradMeta(node, output_nr)
    else:
        meta.grad_fn = node
        meta.output_nr = output_nr
        meta.grad_accumulator = None
    _requires_grad_slot.__set__(t, True)


def grad_accumulator(t: _C.TensorBase) -> "AccumulateGrad":
    """The AccumulateGrad node of a leaf that requires grad (one per leaf)."""
    meta = meta_for_write(t)
    acc = meta.grad_accumulator() if meta.grad_accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        meta.grad_accumulator = weakref.ref(acc)
    return acc


def gradient_edge(t: Any) -> Edge:
    """Where the gradient of ``t`` flows: (its grad_fn, output_nr), its
    AccumulateGrad for a leaf that requires grad, or (None, 0)."""
    if not isinstance(t, _C.TensorBase) or not _requires_grad(t):
        return (None, 0)
    meta = t._autograd_meta
    if meta is not None:
        if meta.grad_fn is not None:
            return (meta.grad_fn, meta.output_nr)
        acc = meta.grad_accumulator() if meta.grad_accumulator is not None else None
        if acc is not None:
            return (acc, 0)
    return (grad_accumulator(t), 0)


class Node:
    """A backward function: maps gradients of its outputs to gradients of its inputs.

    ``next_functions[i]`` is the edge the i-th input gradient flows along.
    """

    __slots__ = ("next_functions", "_retained", "__weakref__")

    def __init__(self, next_functions: Sequence[Edge]) -> None:
        self.next_functions: tuple[Edge, ...] = tuple(next_functions)
        self._retained: Optional[dict[int, weakref.ref]] = None

    def name(self) -> str:
        return type(self).__name__

    @property
    def num_outputs(self) -> int:
        return 1

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        """Gradients for each of ``next_functions`` (None where there is none)."""
        raise NotImplementedError

    def input_metadata(self, output_nr: int) -> Optional[tuple[tuple[int, ...], Any]]:
        """(shape, dtype) of the tensor whose gradient arrives at ``output_nr``, if known."""
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
    """Adds the incoming gradient to a leaf's ``.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: _C.TensorBase) -> None:
        super().__init__(())
        self.variable = variable

    def name(self) -> str:
        return "AccumulateGrad"

    def input_metadata(self, output_nr: int) -> Optional[tuple[tuple[int, ...], Any]]:
        return tuple(self.variable.shape), self.variable.dtype


class NotImplementedNode(Node):
    """The grad_fn of outputs of an operator with no autograd formula: raises at backward."""

    __slots__ = ("op_name",)

    def __init__(self, op_name: str, next_functions: Sequence[Edge]) -> None:
        super().__init__(next_functions)
        self.op_name = op_name

    def name(self) -> str:
        return f"NotImplemented[{self.op_name}]"

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        raise RuntimeError(
            f"derivative for {self.op_name} is not implemented: the operator has no autograd formula. "
            f"Register one with opdispatch.library.register_autograd('{self.op_name}', backward, "
            f"setup_context=...), or compute this value under opdispatch.autograd.no_grad()."
        )


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved."""

    __slots__ = ("tensor", "version")

    def __init__(self, t: Any) -> None:
        self.tensor = t
        self.version = t._version if isinstance(t, _C.TensorBase) else 0

    def unpack(self, saved_by: str) -> Any:
        t = self.tensor
        if isinstance(t, _C.TensorBase) and t._version != self.version:
            raise RuntimeError(
                f"one of the variables needed for gradient computation has been modified by an inplace "
                f"operation: a tensor of shape {tuple(t.shape)} saved by {saved_by} is at version "
                f"{t._version}; expected version {self.version} instead. Hint: clone the tensor before "
                f"modifying it in place, or do the in-place update after calling backward."
            )
        return t


class BackwardContext:
    """The ``ctx`` of a formula: ``save_for_backward``, ``saved_tensors``,
    ``needs_input_grad``, ``mark_non_differentiable``, and any attributes the
    formula sets. PyTorch: torch.autograd.function.FunctionCtx."""

    # Class-level defaults, overridden per instance when set (a context is made on every recorded call).
    _saved: Optional[tuple[SavedTensor, ...]] = ()
    _non_differentiable: tuple[Any, ...] = ()

    def __init__(self, op_name: str, needs_input_grad: tuple[bool, ...]) -> None:
        self._op_name = op_name
        self.needs_input_grad = needs_input_grad

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for backward; modifying them in place
        before backward makes backward raise."""
        self._saved = tuple(SavedTensor(t) for t in tensors)

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Marks output tensors as not differentiable (called from
        setup_context): they do not require grad, and backward receives zeros
        as their gradients. PyTorch: FunctionCtx.mark_non_differentiable."""
        self._non_differentiable = self._non_differentiable + outputs

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._saved is None:
            raise RuntimeError(
                f"Trying to backward through the graph a second time (or directly access saved tensors after "
                f"they have already been freed): the tensors saved by {self._op_name} were freed by the first "
                f"backward. Specify retain_graph=True on the first backward() or autograd.grad() call if you "
                f"need to backward through the graph a second time."
            )
        return tuple(s.unpack(self._op_name) for s in self._saved)

    def _is_non_differentiable(self, t: Any) -> bool:
        return bool(self._non_differentiable) and any(t is m for m in self._non_differentiable)

    def _release(self) -> None:
        self._saved = None


class Formula:
    """What the nodes of one operator's autograd formula share, fixed when the
    formula is registered: the operator's name, ``backward(ctx, *grads)``, the
    names of its positional inputs, and how to make the zero gradient of an
    output that received none."""

    __slots__ = ("op_name", "backward", "input_names", "materialize")

    def __init__(self, op_name: str, backward: Callable[..., Any], input_names: Sequence[str],
                 materialize: Callable[[tuple[int, ...], Any, Any], Any]) -> None:
        self.op_name = op_name
        self.backward = backward
        self.input_names = tuple(input_names)
        self.materialize = materialize


class OpNode(Node):
    """The grad_fn of an operator with an autograd formula.

    ``backward(ctx, *grads)`` receives one gradient per output of the
    operator: a tensor (zeros where the output got none), a list for a
    Tensor[] output, None for a non-tensor output. It returns a tuple of one
    gradient per positional input, or only for the ones the caller passed (a
    bare value for a single one): a tensor or None, a list (or None) for a
    Tensor[] input, None for non-tensor inputs. PyTorch:
    torch._library.autograd.make_autograd_impl (backward and its checks).
    """

    __slots__ = ("formula", "ctx", "outputs_meta", "output_layout", "input_layout", "num_passed")

    def __init__(
        self,
        formula: Formula,
        ctx: BackwardContext,
        next_functions: tuple[Edge, ...],
        input_layout: Sequence[Optional[Any]],
        num_passed: int,
        outputs_meta: tuple[Optional[tuple[tuple[int, ...], Any, Any]], ...],
        output_layout: tuple[Optional[Any], ...],
    ) -> None:
        # (Node.__init__ inlined: a node is made on every recorded call.)
        self.next_functions = next_functions
        self._retained = None
        self.formula = formula
        self.ctx = ctx
        # input_layout[i] (one per positional input) and output_layout[j] (one
        # per return): None for a non-tensor, TENSOR for a tensor, n for a list of n tensors.
        self.input_layout = input_layout
        self.num_passed = num_passed
        # One (shape, dtype, device) per flattened output; None for a non-tensor.
        self.outputs_meta = outputs_meta
        self.output_layout = output_layout

    def name(self) -> str:
        return f"{self.formula.op_name}Backward"

    @property
    def num_outputs(self) -> int:
        return len(self.outputs_meta)

    def input_metadata(self, output_nr: int) -> Optional[tuple[tuple[int, ...], Any]]:
        meta = self.outputs_meta[output_nr]
        return None if meta is None else (meta[0], meta[1])

    def _grads_per_output(self, grad_outputs: list[Any]) -> list[Any]:
        materialize = self.formula.materialize
        flat = [g if g is not None or meta is None else materialize(*meta)
                for g, meta in zip(grad_outputs, self.outputs_meta)]
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
        formula = self.formula
        result = formula.backward(self.ctx, *self._grads_per_output(grad_outputs))
        n_inputs = len(self.input_layout)
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) not in (self.num_passed, n_inputs):
            expected = str(n_inputs) if self.num_passed == n_inputs else f"{self.num_passed} or {n_inputs}"
            raise RuntimeError(
                f"The backward formula for {formula.op_name} returned an incorrect number of gradients (expected "
                f"{expected}, got {len(result)}). Expected one gradient for each forward input, or for each "
                f"positional input to the operator. Use None for inputs that do not require a gradient."
            )
        flat: list[Any] = []
        for i, layout in enumerate(self.input_layout):
            g = result[i] if i < len(result) else None
            name = formula.input_names[i]
            if layout is None:
                if g is not None:
                    raise RuntimeError(
                        f"The backward formula for {formula.op_name} returned a gradient for input '{name}', which "
                        f"is not a Tensor: return None for non-Tensor inputs."
                    )
            elif layout == TENSOR:
                flat.append(_check_grad(formula.op_name, name, g))
            else:
                items = [None] * layout if g is None else g
                if not isinstance(items, (list, tuple)) or len(items) != layout:
                    raise RuntimeError(
                        f"The backward formula for {formula.op_name} must return a list of {layout} gradients (or "
                        f"None) for the Tensor[] input '{name}', got {type(g).__name__}"
                        + (f" of length {len(g)}" if isinstance(g, (list, tuple)) else "") + "."
                    )
                flat.extend(_check_grad(formula.op_name, f"{name}[{k}]", item) for k, item in enumerate(items))
        return flat

    def release(self) -> None:
        self.ctx._release()


def _check_grad(op_name: str, name: str, g: Any) -> Any:
    if g is not None and not isinstance(g, _C.TensorBase):
        raise RuntimeError(
            f"The backward formula for {op_name} returned {type(g).__name__} as the gradient of input '{name}'; "
            f"expected a Tensor or None."
        )
    return g


def check_inplace(op_name: str, t: Any) -> None:
    """RuntimeError if recording an in-place update of ``t`` by ``op_name``
    is not allowed: ``t`` is a leaf that requires grad, or a recorded view
    (PyTorch rebases the viewed tensor's history with CopySlices; opdispatch
    refuses instead). PyTorch: check_inplace in
    torch/csrc/autograd/VariableTypeUtils.h."""
    if not isinstance(t, _C.TensorBase) or not t.requires_grad:
        return
    if is_leaf(t):
        raise RuntimeError(
            f"{op_name}: a leaf tensor that requires grad is being used in an in-place operation; "
            f"do the update under opdispatch.autograd.no_grad(), or clone the tensor first."
        )
    view_of = t._autograd_meta.view_of
    if view_of is not None:
        raise RuntimeError(
            f"{op_name}: in-place update of a view (an output of {view_of}) that requires grad is not supported: "
            f"the gradient of the tensor it views would be wrong. Clone the view first, or use the out-of-place "
            f"operator."
        )
