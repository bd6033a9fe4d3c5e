"""Autograd kernels for operators: the kernel registered at the Autograd key
for an operator with a formula (``register_autograd``, the built-in
operators), and the fallback that marks outputs of operators without one.

An autograd kernel calls the operator below autograd, and when an input
requires grad records an OpNode whose backward is the formula.
PyTorch: torch/_library/autograd.py, torch/csrc/autograd/autograd_not_implemented_fallback.cpp.
"""
from __future__ import annotations

import inspect
import sys
from types import FunctionType
from typing import Any, Callable, Optional, Union

from .. import _C
from ..autograd import graph
from ..autograd.grad_mode import is_grad_enabled, set_grad_enabled
from ..autograd.graph import check_inplace
from .utils import check_callable, is_tensor_like_type, is_tensorlist_like_type
from .._tensor_type import Tensor

BackwardFn = Callable[..., Any]
SetupContextFn = Callable[..., None]

# The dtypes whose tensors get gradients (floating point and complex).
_DIFFERENTIABLE_DTYPES = frozenset({_C.float16, _C.float32, _C.float64, _C.complex64, _C.complex128})

# The most tensor inputs _C._PlainAutogradKernel handles (kMaxTensors in csrc/python/AutogradKernel.cpp).
_MAX_PLAIN_TENSORS = 16


def _is_float_tensor(t: Any) -> bool:
    return isinstance(t, Tensor) and t.dtype in _DIFFERENTIABLE_DTYPES


def _flat_outputs(out: Any) -> list[Any]:
    if isinstance(out, (tuple, list)):
        flat: list[Any] = []
        for o in out:
            flat.extend(o if isinstance(o, list) else [o])
        return flat
    return [out]


def _zeros(shape: tuple[int, ...], dtype: Any, device: Any) -> Any:
    from .. import zeros

    return zeros(shape, dtype=dtype, device=device)


class _SchemaInfo:
    """What an autograd kernel needs from a schema, computed once (in one
    pass over the arguments: every built-in operator makes one at import)."""

    def __init__(self, schema: _C.FunctionSchema) -> None:
        self.positional: list[_C.Argument] = []
        self.kwarg_only: list[_C.Argument] = []
        self.positional_defaults: list[Any] = []
        self.kwarg_defaults: dict[str, Any] = {}
        self.positional_names: list[str] = []
        # (index, is a list) of the positional inputs that hold tensors; the
        # input_layout of a call that passes none of them.
        self.tensor_positions: list[tuple[int, bool]] = []
        self.mutated: list[int] = []
        # Every tensor input a required plain Tensor, one Tensor result, nothing mutated (Note [Recording a call]).
        plain_inputs = True
        for i, a in enumerate(schema.arguments):
            typ = a.type
            kind = _tensor_kind(typ)
            has_default = a.has_default_value()
            alias = a.alias_info
            if alias is not None and alias.is_write:
                self.mutated.append(i)
            if a.kwarg_only:
                self.kwarg_only.append(a)
                if has_default:
                    self.kwarg_defaults[a.name] = a.default_value
                plain_inputs = plain_inputs and kind is None
                continue
            self.tensor_positions.extend(() if kind is None else ((len(self.positional), kind == "list"),))
            self.positional.append(a)
            self.positional_defaults.append(a.default_value if has_default else None)
            self.positional_names.append(a.name)
            if kind is not None:
                plain_inputs = plain_inputs and not has_default and isinstance(typ, _C.TensorType)
        self.no_tensors = (None,) * len(self.positional)
        returns = schema.returns
        self.return_kinds = [_tensor_kind(r.type) for r in returns]
        self.returns_one_tensor = len(returns) == 1 and isinstance(returns[0].type, _C.TensorType)
        self.is_view = not self.mutated and any(r.alias_info is not None for r in returns)
        self.plain = (plain_inputs and self.returns_one_tensor and not self.mutated and
                      0 < len(self.tensor_positions) <= _MAX_PLAIN_TENSORS)
        self.name = f"{schema.name}" + (f".{schema.overload_name}" if schema.overload_name else "")

    def full_inputs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Positional inputs with defaults filled in, and all keyword-only inputs."""
        positional = list(args)
        for i in range(len(args), len(self.positional)):
            positional.append(self.positional_defaults[i])
        keyword = dict(self.kwarg_defaults)
        keyword.update(kwargs)
        return tuple(positional), keyword


def _tensor_kind(typ: _C.Type) -> Optional[str]:
    """"tensor" for Tensor / Tensor?, "list" for Tensor[] / Tensor?[] (optional or not), else None."""
    if is_tensor_like_type(typ):
        return "tensor"
    return "list" if is_tensorlist_like_type(typ) else None


def _output_layout(info: _SchemaInfo, out: Any) -> tuple[Any, ...]:
    values = [out] if len(info.return_kinds) == 1 else list(out)
    return tuple(graph.TENSOR if kind == "tensor" else len(v) if kind == "list" else None
                 for kind, v in zip(info.return_kinds, values))


# The getset's __get__ (to type checkers the class attribute is a property).
_tensor_requires_grad: Callable[[Tensor], bool] = Tensor.__dict__["requires_grad"].__get__


def _requires_grad(x: Any) -> bool:
    if isinstance(x, Tensor):
        return _tensor_requires_grad(x)
    if isinstance(x, (list, tuple)):
        return any(isinstance(t, Tensor) and _tensor_requires_grad(t) for t in x)
    return False


def _check_inplace_on_leaf(info: _SchemaInfo, inputs: tuple[Any, ...], kw_inputs: dict[str, Any]) -> None:
    values = list(inputs) + [kw_inputs.get(a.name) for a in info.kwarg_only]
    for i in info.mutated:
        check_inplace(info.name, values[i], rebases_views=True)


def _wants_keyword_only(setup_context: SetupContextFn) -> bool:
    """Whether ``setup_context`` has a parameter named ``keyword_only_inputs``
    (read from a plain function's code object: inspect.signature costs ~10 us,
    and every built-in formula asks at import)."""
    if type(setup_context) is FunctionType and not hasattr(setup_context, "__wrapped__"):
        code = setup_context.__code__
        n = (code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & inspect.CO_VARARGS) +
             bool(code.co_flags & inspect.CO_VARKEYWORDS))
        return "keyword_only_inputs" in code.co_varnames[:n]
    try:
        return "keyword_only_inputs" in inspect.signature(setup_context).parameters
    except (TypeError, ValueError):
        return False


def _record_outputs(info: _SchemaInfo, node: graph.OpNode, flat: list[Any], base: Any) -> None:
    """Makes the floating-point tensors among the flattened outputs outputs of
    ``node``; for a view operator, views of ``base`` (its self)."""
    for nr, o in enumerate(flat):
        if _is_float_tensor(o) and not (node._non_differentiable and node._is_non_differentiable(o)):
            graph.set_history(o, node, nr)
            if info.is_view:
                graph.mark_view(o, info.name, base)


def make_autograd_kernel(op: Any, backward: BackwardFn, setup_context: Optional[SetupContextFn] = None, *,
                         materialize_grads: bool = True, grad_mode_below: bool = False) -> Callable[..., Any]:
    """The Autograd-key kernel (registered with ``with_keyset=True``) of ``op``
    (an OpOverload) with formula ``backward(ctx, *grads)``;
    ``setup_context(ctx, inputs, output)`` — or ``(ctx, inputs,
    keyword_only_inputs, output)`` — saves what backward needs. Outputs that
    received no gradient get zeros in backward, or None without
    ``materialize_grads`` (PyTorch: ctx.set_materialize_grads).

    The kernel records only while grad mode is on (Note [Grad mode is its own
    flag]). A recorded call runs the operator with grad mode off, as the
    forward of PyTorch's autograd.Function that register_autograd builds;
    ``grad_mode_below=True`` keeps it on, as PyTorch's built-in operators
    (VariableType) do.

    Mutating operators are supported: an in-place update of a leaf that
    requires grad raises RuntimeError; otherwise the mutated tensor's history
    is rebased onto the new node. PyTorch: torch._library.autograd.make_autograd_impl.
    """
    info = _SchemaInfo(op._schema)
    op_name = info.name
    check_callable(backward, f"register_autograd for {op_name}: backward")
    if setup_context is not None:
        check_callable(setup_context, f"register_autograd for {op_name}: setup_context")
    formula = graph.Formula(op_name, backward, info.positional_names, _zeros if materialize_grads else None)
    keyword_only = setup_context is not None and _wants_keyword_only(setup_context)
    if info.plain:
        kernel = _plain_kernel(op, info, formula, setup_context, keyword_only, grad_mode_below)
    else:
        kernel = _general_kernel(op, info, formula, setup_context, keyword_only, grad_mode_below)
    kernel.__name__ = f"{info.name.replace('::', '_')}_autograd"
    return kernel


# Note [Recording a call]
# An autograd kernel runs on every call with an input that requires grad, so
# what it does per call is kept to the minimum: the gradient edges of the
# tensor inputs (one C call each, which also tells whether the input requires
# grad), the call below autograd, the context and setup_context, one node,
# and the outputs' history (one C call each). Everything that depends only on
# the schema is computed when the kernel is made. Schemas whose tensor inputs
# are all required Tensors and whose result is one Tensor — most operators —
# get _plain_kernel, which has nothing to compute per call about where the
# tensors are; the others get _general_kernel (Tensor[] and Tensor? inputs,
# several or list results, mutation).


def _plain_kernel(op: Any, info: _SchemaInfo, formula: graph.Formula, setup_context: Optional[SetupContextFn],
                  keyword_only: bool, grad_mode_below: bool) -> Callable[..., Any]:
    """The autograd kernel of a plain schema (see Note [Recording a call]):
    a _C._PlainAutogradKernel, which records a call in C. Per call it takes
    each tensor input's gradient edge; if none requires grad, it runs the
    operator below autograd; else it runs it, makes a graph.OpNode (the
    attributes OpNode.__init__ sets, without the call), calls setup_context,
    and gives the output its history (unless it is not floating point or
    setup_context marked it non-differentiable; a view records view_of), and
    unsaves the output if setup_context saved it (graph.unsave_outputs)."""
    positions = tuple(i for i, _ in info.tensor_positions)
    n_positional = len(info.positional)
    # needs_input_grad by bit mask (bit k: the k-th tensor input requires grad).
    needs_table = tuple(tuple(i in positions and bool(mask >> positions.index(i) & 1) for i in range(n_positional))
                        for mask in range(1 << len(positions)))
    return _C._PlainAutogradKernel(
        run_below=op._redispatch_below_autograd, formula=formula, node_class=graph.OpNode, positions=positions,
        layout=tuple(graph.TENSOR if i in positions else None for i in range(n_positional)), needs_table=needs_table,
        setup=setup_context, keyword_only=keyword_only, kwarg_defaults=info.kwarg_defaults,
        full_inputs=info.full_inputs, view_name=info.name if info.is_view else None, grad_mode_below=grad_mode_below)


def _general_kernel(op: Any, info: _SchemaInfo, formula: graph.Formula, setup_context: Optional[SetupContextFn],
                    keyword_only: bool, grad_mode_below: bool) -> Callable[..., Any]:
    """The autograd kernel of any schema (see Note [Recording a call])."""
    op_name = info.name
    run_below_autograd = op._redispatch_below_autograd
    tensor_positions = info.tensor_positions
    no_tensors = info.no_tensors
    n_positional = len(no_tensors)
    gradient_edge = graph.gradient_edge
    make_node = graph.OpNode
    set_history = graph.set_history
    TENSOR = graph.TENSOR
    # An in-place update of self (the first input, the node's first edge) rebases a view's history.
    rebases_self = 0 in info.mutated and bool(tensor_positions) and tensor_positions[0][0] == 0

    def autograd_kernel(keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        # Grad mode off (a formula's operators in backward without create_graph): nothing is recorded.
        if not is_grad_enabled():
            return run_below_autograd(keyset, *args, **kwargs)
        # The gradient edges of the tensors among the positional args (as the
        # dispatcher passed them: trailing defaults may be missing and hold no
        # tensors), and per positional input its layout entry and whether it
        # needs a gradient (for a Tensor[] input, a list: one per element, as PyTorch).
        edges: list[graph.Edge] = []
        layout: list[Union[int, str, None]] = list(no_tensors)
        needs: list[Any] = [False] * n_positional
        any_needs = False
        nargs = len(args)
        for i, is_list in tensor_positions:
            if i >= nargs:
                break
            value = args[i]
            if value is None:
                continue
            if is_list:
                items = [t for t in value if t is not None]
                edges.extend(gradient_edge(t) for t in items)
                layout[i] = len(items)
                flags = [t is not None and _tensor_requires_grad(t) for t in value]
                needs[i] = flags
                any_needs = any_needs or True in flags
            else:
                edge = gradient_edge(value)
                edges.append(edge)
                layout[i] = TENSOR
                requires = edge[0] is not None
                needs[i] = requires
                any_needs = any_needs or requires
        # Reached through the Autograd key, so normally an input requires grad.
        if not any_needs:
            return run_below_autograd(keyset, *args, **kwargs)
        inputs, kw_inputs = info.full_inputs(args, kwargs) if info.mutated or setup_context else ((), {})
        if info.mutated:
            _check_inplace_on_leaf(info, inputs, kw_inputs)
        with set_grad_enabled(grad_mode_below):
            out = run_below_autograd(keyset, *args, **kwargs)
        node = make_node(formula, tuple(needs), tuple(edges), layout, nargs)
        if setup_context is not None:
            if keyword_only:
                setup_context(node, inputs, kw_inputs, out)
            else:
                setup_context(node, inputs, out)
        if info.returns_one_tensor:
            flat = [out]
            dtype = out.dtype
            node.outputs_meta = ((out.shape, dtype, out.device),)
            if dtype in _DIFFERENTIABLE_DTYPES and not (node._non_differentiable and node._is_non_differentiable(out)):
                set_history(out, node, 0)
                if info.is_view:
                    graph.mark_view(out, op_name, args[0] if args else None)
        else:
            flat = _flat_outputs(out)
            node.outputs_meta = tuple((o.shape, o.dtype, o.device) if isinstance(o, Tensor) else None
                                      for o in flat)
            node.output_layout = _output_layout(info, out)
            _record_outputs(info, node, flat, args[0] if args else None)
        if node._saved:
            graph.unsave_outputs(node, flat)
        if rebases_self and graph.grad_fn(inputs[0]) is node:
            graph.rebase_view(inputs[0], node)  # Note [In-place updates of views]
        return out

    return autograd_kernel


def _not_implemented_fallback(keyset: _C.DispatchKeySet, op: Any, *args: Any, **kwargs: Any) -> Any:
    """Autograd fallback for operators without a formula: runs the operator
    below autograd and, if an input requires grad and the fallback's mode
    (``_C._set_autograd_fallback_mode``) is "warn", gives the floating-point
    outputs a grad_fn that warns at backward and passes no gradient on
    (graph.NotImplementedNode). PyTorch 2.13: basicAutogradNotImplementedFallback."""
    requires = any(_requires_grad(a) for a in args) or any(_requires_grad(v) for v in kwargs.values())
    if not requires or not is_grad_enabled() or _C._get_autograd_fallback_mode() == "nothing":
        return op._redispatch_below_autograd(keyset, *args, **kwargs)
    edges = [graph.gradient_edge(t) for a in args for t in (a if isinstance(a, (list, tuple)) else (a,))
             if isinstance(t, Tensor)]
    out = op._redispatch_below_autograd(keyset, *args, **kwargs)
    node = graph.NotImplementedNode(op._name, edges)
    for nr, o in enumerate(_flat_outputs(out)):
        if _is_float_tensor(o):
            graph.set_history(o, node, nr)
    return out


# The registration of _not_implemented_fallback (kept alive for the process).
_fallback_registration: Optional[_C._RegistrationHandles] = None


def install_not_implemented_fallback() -> None:
    """Makes operators without an autograd formula warn at backward (docs/architecture.rst
    "Tensors, autograd"): registers the fallback at every autograd key as a
    default, which a user's fallback for such a key (e.g. a device plugin's
    AutogradPrivateUse1 fallback) replaces (Note [Default fallbacks]). The
    fallback receives the OpOverload through the resolver opdispatch._ops
    installs. PyTorch: the autograd fallback of VariableFallbackKernel.cpp."""
    global _fallback_registration
    if _fallback_registration is None:
        site = f"registered at {__file__}:{sys._getframe().f_lineno}"
        _fallback_registration = _C._dispatch_register_default_fallback(
            "Autograd", _not_implemented_fallback, with_keyset=True, debug=site)
