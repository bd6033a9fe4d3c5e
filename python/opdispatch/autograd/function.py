"""opdispatch.autograd.Function: differentiable operations written in Python
(a forward and a backward), recorded on the same graph as operator formulas.

Each Function subclass gets a backward-node class ``<Name>Backward``; one
instance per recorded call is both the graph node and the ``ctx`` the
forward, setup_context and backward see. PyTorch: torch/autograd/function.py
(Function, FunctionCtx, BackwardCFunction, once_differentiable) and
torch/csrc/autograd/python_function.cpp (THPFunction_apply, _wrap_outputs).
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Optional, TypeVar

from .._tensor_type import Tensor
from . import graph
from .grad_mode import is_grad_enabled, no_grad

__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "once_differentiable"]

F = TypeVar("F", bound=Callable[..., Any])


def _differentiable(t: Tensor) -> bool:
    dtype = t.dtype
    return dtype.is_floating_point or dtype.is_complex


def _zeros(meta: tuple[tuple[int, ...], Any, Any]) -> Any:
    from .. import zeros

    shape, dtype, device = meta
    return zeros(shape, dtype=dtype, device=device)


class FunctionCtx(graph.BackwardContext):
    """The ``ctx`` of a :class:`Function`: what forward (or setup_context)
    records for backward. PyTorch: torch.autograd.function.FunctionCtx.

    Attributes: ``needs_input_grad`` (one bool per positional input of
    ``apply``: whether it is a tensor that requires grad), ``saved_tensors``
    (``()`` until forward returns; RuntimeError if a saved tensor was
    modified in place since, or after a backward that did not retain the
    graph), ``materialize_grads``, and anything the forward sets.
    """

    # Class-level defaults, overridden per instance when set.
    to_save: Optional[tuple[Any, ...]] = ()
    dirty_tensors: tuple[Any, ...] = ()
    materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        """Saves tensors (or None) for backward, where ``ctx.saved_tensors``
        returns them. They are packed when forward returns, so an in-place
        update inside forward (of a tensor marked dirty) is part of the saved
        version; an in-place update after that makes backward raise.
        TypeError for anything but a tensor or None."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save tensors (or None), but argument {i} is of type "
                                f"{type(t).__name__}")
        self.to_save = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        """Marks inputs that forward modified in place; each must be returned
        as an output, and gets this call's node as its grad_fn (RuntimeError
        at the end of apply otherwise, or if one is a leaf that requires grad).
        TypeError for anything but a tensor."""
        for i, t in enumerate(tensors):
            if not isinstance(t, Tensor):
                raise TypeError(f"mark_dirty can only mark tensors, but argument {i} is of type {type(t).__name__}")
        self.dirty_tensors = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zeros (True, the default) or None for
        outputs that got no gradient (non-tensor outputs always get None)."""
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, graph.Node):
    """The graph node of one :meth:`Function.apply` call, and its ``ctx``.
    Subclassed per Function as ``<Name>Backward`` (``_forward_cls`` is the
    Function). Gradient edges: one per tensor input, in order.
    PyTorch: torch.autograd.function.BackwardCFunction."""

    _forward_cls: Any
    runs_without_grads = True

    def __init__(self, needs_input_grad: tuple[bool, ...], input_is_tensor: tuple[bool, ...],
                 next_functions: tuple[graph.Edge, ...]) -> None:
        graph.Node.__init__(self, next_functions)
        graph.BackwardContext.__init__(self, type(self).__name__, needs_input_grad)
        # One per positional input: whether it is a tensor (has an edge).
        self._input_is_tensor = input_is_tensor
        # One per output position: (shape, dtype, device) of a tensor output, None otherwise.
        self._outputs_meta: tuple[Optional[tuple[tuple[int, ...], Any, Any]], ...] = ()

    @property
    def num_outputs(self) -> int:
        return len(self._outputs_meta)

    def input_metadata(self, output_nr: int) -> Optional[tuple[Any, ...]]:
        """(shape, dtype, device) of output ``output_nr`` (None for a non-tensor)."""
        return self._outputs_meta[output_nr]

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        """Runs the Function's backward (or vjp) and returns one gradient per
        tensor input (None for inputs that need none).

        Raises RuntimeError for a wrong number of gradients (extra trailing
        Nones are allowed), a gradient for a non-tensor input, or a gradient
        that is neither a tensor nor None. PyTorch: PyNode::apply and
        THPFunction's result checks."""
        grads = [_zeros(meta) if g is None and meta is not None and self.materialize_grads else g
                 for g, meta in zip(grad_outputs, self._outputs_meta)]
        result = self._forward_cls._backward_fn()(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_inputs = len(self._input_is_tensor)
        if len(result) > n_inputs and all(g is None for g in result[n_inputs:]):
            result = result[:n_inputs]
        if len(result) != n_inputs:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients (expected "
                               f"{n_inputs}, got {len(result)})")
        out = []
        for i, (is_tensor, g) in enumerate(zip(self._input_is_tensor, result)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different than None at position "
                                       f"{i + 1}, but the corresponding forward input was not a Tensor")
                continue
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"function {self.name()} returned {type(g).__name__} as the gradient at position "
                                   f"{i + 1}; expected a Tensor or None")
            out.append(g if self.needs_input_grad[i] else None)
        return out

    def release(self) -> None:
        self._release()


class FunctionMeta(type):
    """Gives each Function subclass its backward-node class ``<Name>Backward``
    (``cls._backward_cls``). PyTorch: torch.autograd.function.FunctionMeta."""

    def __init__(cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> None:
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """A differentiable operation defined by static methods; use it through
    :meth:`apply`.

    Either ``forward(ctx, *args, **kwargs)``, or ``forward(*args, **kwargs)``
    plus ``setup_context(ctx, inputs, output)``; and ``backward(ctx,
    *grad_outputs)`` (or ``vjp``) returning one gradient per positional input
    (None for non-tensors and inputs that need none). See :class:`FunctionCtx`
    for what ctx offers. PyTorch: torch.autograd.Function.

    Example::

        class Exp(Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, grad):
                y, = ctx.saved_tensors
                return grad * y

        y = Exp.apply(x)
    """

    _backward_cls: type[BackwardCFunction]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      f"you should invoke them on the class itself (e.g. {type(self).__name__}.apply(...)).",
                      DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"Legacy autograd function with non-static forward method is not supported: call "
                           f"{type(self).__name__}.apply(...) with a static forward method.")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """Computes the outputs; runs with grad mode off. Override it."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Saves what backward needs, when forward does not take ctx. Override it or not."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """The gradients of the inputs from those of the outputs. Override it (or vjp)."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def _backward_fn(cls) -> Callable[..., Any]:
        """The user's backward: vjp or backward, whichever is overridden.
        RuntimeError if both are. PyTorch: BackwardCFunction._get_user_fn."""
        backward_overridden = cls.backward is not Function.backward
        vjp_overridden = cls.vjp is not Function.vjp
        if backward_overridden and vjp_overridden:
            raise RuntimeError(f"Implementing both 'backward' and 'vjp' for {cls.__name__} is not allowed. You "
                               f"should only implement one of them.")
        return cls.vjp if vjp_overridden else cls.backward

    @classmethod
    def _bind(cls, args: tuple[Any, ...], kwargs: dict[str, Any], uses_setup_context: bool
              ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """``args`` and ``kwargs`` bound to forward's parameters: the ones that
        can be positional become positional inputs (so they get gradients and
        ``needs_input_grad`` entries); with setup_context, defaults are filled
        in too (its ``inputs`` hold every parameter). TypeError if they do not
        bind. PyTorch: Function.apply (bind_default_args) and THPFunction_apply."""
        signature = inspect.signature(cls.forward)
        if uses_setup_context:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return bound.args, bound.kwargs
        bound = signature.bind(None, *args, **kwargs)  # None stands for ctx
        return bound.args[1:], bound.kwargs

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Runs forward (with grad mode off) and, if grad mode is on and a
        tensor among the positional ``args`` requires grad, records a node
        whose backward is the Function's.

        Outputs: a tensor forward made gets the node as its grad_fn (unless
        marked non-differentiable or not of a floating/complex dtype); an
        input returned unchanged comes back as a new tensor sharing its
        memory (so the input keeps its own history); an input marked dirty
        comes back as itself with the node as its new grad_fn; other values
        pass through (tensors inside lists are not tracked). Returns what
        forward returned (a tuple or one value).

        Raises RuntimeError if an input marked dirty is not returned or is a
        leaf that requires grad; what forward raises passes through.
        PyTorch: torch.autograd.Function.apply (THPFunction_apply).
        """
        uses_setup_context = cls.setup_context is not Function.setup_context
        if uses_setup_context or kwargs:
            args, kwargs = cls._bind(args, kwargs, uses_setup_context)
        input_is_tensor = tuple(isinstance(a, Tensor) for a in args)
        needs_input_grad = tuple(is_tensor and a.requires_grad for a, is_tensor in zip(args, input_is_tensor))
        executable = True in needs_input_grad and is_grad_enabled()
        edges = tuple(graph.gradient_edge(a) if executable else (None, 0)
                      for a, is_tensor in zip(args, input_is_tensor) if is_tensor)
        node = cls._backward_cls(needs_input_grad, input_is_tensor, edges)
        with no_grad():
            if uses_setup_context:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(node, args, output)
            else:
                output = cls.forward(node, *args, **kwargs)
        return _wrap_outputs(node, args, output, executable)


def _is_in(t: Any, values: tuple[Any, ...]) -> bool:
    return any(t is v for v in values)


def _wrap_outputs(node: BackwardCFunction, inputs: tuple[Any, ...], output: Any, executable: bool) -> Any:
    """The outputs of ``apply`` (see there), with the node recording them
    when ``executable``, and the saved tensors packed.
    PyTorch: _wrap_outputs in torch/csrc/autograd/custom_function.cpp."""
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    dirty = node.dirty_tensors
    if dirty and not all(_is_in(d, outputs) for d in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. The "
                           "inputs that are modified inplace must all be outputs of the Function.")
    for i, d in enumerate(dirty):
        if not _is_in(d, dirty[:i]):
            if executable:
                graph.check_inplace(node._forward_cls.__name__, d)
            d._bump_version()
    wrapped: list[Any] = []
    metas: list[Optional[tuple[tuple[int, ...], Any, Any]]] = []
    for nr, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            metas.append(None)
            continue
        is_dirty = bool(dirty) and _is_in(o, dirty)
        differentiable = executable and _differentiable(o) and not node._is_non_differentiable(o)
        if not is_dirty and _is_in(o, inputs):
            o = o.detach()
        if differentiable:
            graph.set_history(o, node, nr)
        wrapped.append(o)
        metas.append((tuple(o.shape), o.dtype, o.device))
    node._outputs_meta = tuple(metas)
    if node.to_save:
        graph.BackwardContext.save_for_backward(node, *node.to_save)
        node.to_save = None  # packed (PyTorch clears ctx.to_save too)
        graph.unsave_outputs(node, wrapped)
    return tuple(wrapped) if is_tuple else wrapped[0]


class _DelayedError(graph.Node):
    """A node that raises ``message`` when backward reaches it.
    PyTorch: torch::autograd::DelayedError."""

    __slots__ = ("message", "_num_outputs")

    def __init__(self, message: str, num_outputs: int) -> None:
        super().__init__(())
        self.message = message
        self._num_outputs = num_outputs

    def name(self) -> str:
        return "DelayedError"

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    def apply(self, grad_outputs: list[Any]) -> list[Any]:
        raise RuntimeError(self.message)


def once_differentiable(fn: F) -> F:
    """Decorates a Function's backward that cannot itself be differentiated:
    it runs with grad mode off, and when the graph of the backward is being
    recorded (create_graph) and an incoming gradient requires grad, its
    tensor results come back requiring grad through a node that raises
    "trying to differentiate twice a function that was marked with
    @once_differentiable" if backward reaches it.
    PyTorch: torch.autograd.function.once_differentiable."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        values = outputs if is_tuple else (outputs,)
        error = _DelayedError("trying to differentiate twice a function that was marked with @once_differentiable",
                              len(values))
        wrapped = []
        for nr, v in enumerate(values):
            if isinstance(v, Tensor):
                v = v.detach()
                graph.set_history(v, error, nr)
            wrapped.append(v)
        return tuple(wrapped) if is_tuple else wrapped[0]

    return wrapper  # type: ignore[return-value]
