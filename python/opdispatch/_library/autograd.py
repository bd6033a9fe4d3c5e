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
from typing import Any, Callable, Optional

from .. import _C
from ..autograd import graph

BackwardFn = Callable[..., Any]
SetupContextFn = Callable[..., None]

# The dtypes whose tensors get gradients (floating point and complex).
_DIFFERENTIABLE_DTYPES = frozenset({_C.float16, _C.float32, _C.float64, _C.complex64, _C.complex128})

# The edge of an input that gets no gradient.
_NO_EDGE: graph.Edge = (None, 0)


def _is_float_tensor(t: Any) -> bool:
    return isinstance(t, _C.TensorBase) and t.dtype in _DIFFERENTIABLE_DTYPES


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
    """What an autograd kernel needs from a schema, computed once."""

    def __init__(self, schema: _C.FunctionSchema) -> None:
        args = schema.arguments
        self.positional = [a for a in args if not a.kwarg_only]
        self.kwarg_only = [a for a in args if a.kwarg_only]
        self.positional_defaults = [a.default_value if a.has_default_value() else None for a in self.positional]
        self.kwarg_defaults = {a.name: a.default_value for a in self.kwarg_only if a.has_default_value()}
        self.positional_names = [a.name for a in self.positional]
        self.tensor_kind = [_tensor_kind(a.type) for a in self.positional]
        # (index, is a list) of the positional inputs that hold tensors; the
        # input_layout of a call that passes none of them.
        self.tensor_positions = [(i, kind == "list") for i, kind in enumerate(self.tensor_kind) if kind is not None]
        self.no_tensors = (None,) * len(self.positional)
        self.return_kinds = [_tensor_kind(r.type) for r in schema.returns]
        self.returns_one_tensor = self.return_kinds == ["tensor"] and schema.returns[0].type == "Tensor"
        self.mutated = [i for i, a in enumerate(args) if a.alias_info is not None and a.alias_info.is_write]
        self.is_view = not self.mutated and any(r.alias_info is not None for r in schema.returns)
        self.name = f"{schema.name}" + (f".{schema.overload_name}" if schema.overload_name else "")

    def full_inputs(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Positional inputs with defaults filled in, and all keyword-only inputs."""
        positional = list(args)
        for i in range(len(args), len(self.positional)):
            positional.append(self.positional_defaults[i])
        keyword = dict(self.kwarg_defaults)
        keyword.update(kwargs)
        return tuple(positional), keyword


def _tensor_kind(type_text: str) -> Optional[str]:
    """"tensor" for Tensor / Tensor?, "list" for Tensor[] / Tensor?[] (optional or not), else None."""
    if not type_text.startswith("Tensor"):
        return None
    return "list" if "[]" in type_text else "tensor"


# The output_layout of a node whose operator returns one Tensor.
_ONE_TENSOR = (graph.TENSOR,)


def _output_layout(info: _SchemaInfo, out: Any) -> tuple[Any, ...]:
    values = [out] if len(info.return_kinds) == 1 else list(out)
    return tuple(graph.TENSOR if kind == "tensor" else len(v) if kind == "list" else None
                 for kind, v in zip(info.return_kinds, values))


_tensor_requires_grad = _C.TensorBase.requires_grad.__get__


def _requires_grad(x: Any) -> bool:
    if isinstance(x, _C.TensorBase):
        return _tensor_requires_grad(x)
    if isinstance(x, (list, tuple)):
        return any(isinstance(t, _C.TensorBase) and _tensor_requires_grad(t) for t in x)
    return False


def check_inplace(op_name: str, t: Any) -> None:
    """RuntimeError if recording an in-place update of ``t`` by ``op_name``
    is not allowed: ``t`` is a leaf that requires grad, or a recorded view
    (PyTorch rebases the viewed tensor's history with CopySlices; opdispatch
    refuses instead). PyTorch: check_inplace in
    torch/csrc/autograd/VariableTypeUtils.h."""
    if not isinstance(t, _C.TensorBase) or not t.requires_grad:
        return
    if graph.is_leaf(t):
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


def _check_inplace_on_leaf(info: _SchemaInfo, inputs: tuple, kw_inputs: dict) -> None:
    values = list(inputs) + [kw_inputs.get(a.name) for a in info.kwarg_only]
    for i in info.mutated:
        check_inplace(info.name, values[i])


def _wants_keyword_only(setup_context: SetupContextFn) -> bool:
    try:
        return "keyword_only_inputs" in inspect.signature(setup_context).parameters
    except (TypeError, ValueError):
        return False


def _record_outputs(info: _SchemaInfo, node: graph.OpNode, flat: list[Any]) -> None:
    """Makes the floating-point tensors among the flattened outputs outputs of ``node``."""
    ctx = node.ctx
    for nr, o in enumerate(flat):
        if _is_float_tensor(o) and not (ctx._non_differentiable and ctx._is_non_differentiable(o)):
            graph.set_history(o, node, nr)
            if info.is_view:
                o._autograd_meta.view_of = info.name


def make_autograd_kernel(op: Any, backward: BackwardFn, setup_context: Optional[SetupContextFn] = None
                         ) -> Callable[..., Any]:
    """The Autograd-key kernel (registered with ``with_keyset=True``) of ``op``
    (an OpOverload) with formula ``backward(ctx, *grads)``;
    ``setup_context(ctx, inputs, output)`` — or ``(ctx, inputs,
    keyword_only_inputs, output)`` — saves what backward needs.

    Mutating operators are supported: an in-place update of a leaf that
    requires grad raises RuntimeError; otherwise the mutated tensor's history
    is rebased onto the new node. PyTorch: torch._library.autograd.make_autograd_impl.
    """
    info = _SchemaInfo(op._schema)
    op_name = info.name
    formula = graph.Formula(op_name, backward, info.positional_names, _zeros)
    keyword_only = setup_context is not None and _wants_keyword_only(setup_context)
    run_below_autograd = op._redispatch_below_autograd
    # Bound once: this kernel runs on every recorded call (see benchmarks/cases.py).
    tensor_positions = info.tensor_positions
    no_tensors = info.no_tensors
    n_positional = len(no_tensors)
    gradient_edge = graph.gradient_edge
    make_ctx = graph.BackwardContext
    make_node = graph.OpNode
    set_history = graph.set_history
    TENSOR = graph.TENSOR

    def autograd_kernel(keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        # The gradient edges of the tensors among the positional args (as the
        # dispatcher passed them: trailing defaults may be missing and hold no
        # tensors), and per positional input its layout entry and whether it needs a gradient.
        edges: list[graph.Edge] = []
        layout = list(no_tensors)
        needs = [False] * n_positional
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
                needs[i] = any(_tensor_requires_grad(t) for t in items)
            else:
                requires = _tensor_requires_grad(value)
                edges.append(gradient_edge(value) if requires else _NO_EDGE)
                layout[i] = TENSOR
                needs[i] = requires
        # Reached through the Autograd key, so normally an input requires grad.
        if True not in needs:
            return run_below_autograd(keyset, *args, **kwargs)
        inputs, kw_inputs = info.full_inputs(args, kwargs) if info.mutated or setup_context else ((), {})
        if info.mutated:
            _check_inplace_on_leaf(info, inputs, kw_inputs)
        out = run_below_autograd(keyset, *args, **kwargs)
        ctx = make_ctx(op_name, tuple(needs))
        if setup_context is not None:
            if keyword_only:
                setup_context(ctx, inputs, kw_inputs, out)
            else:
                setup_context(ctx, inputs, out)
        if info.returns_one_tensor:
            dtype = out.dtype
            node = make_node(formula, ctx, tuple(edges), layout, nargs, ((out.shape, dtype, out.device),), _ONE_TENSOR)
            if dtype in _DIFFERENTIABLE_DTYPES and not (ctx._non_differentiable and ctx._is_non_differentiable(out)):
                set_history(out, node, 0)
                if info.is_view:
                    out._autograd_meta.view_of = op_name
            return out
        flat = _flat_outputs(out)
        metas = tuple((o.shape, o.dtype, o.device) if isinstance(o, _C.TensorBase) else None for o in flat)
        node = make_node(formula, ctx, tuple(edges), layout, nargs, metas, _output_layout(info, out))
        _record_outputs(info, node, flat)
        return out

    autograd_kernel.__name__ = f"{op_name.replace('::', '_')}_autograd"
    return autograd_kernel


def _not_implemented_fallback(keyset: _C.DispatchKeySet, op: Any, *args: Any, **kwargs: Any) -> Any:
    """Autograd fallback for operators without a formula: runs the operator
    below autograd and, if an input requires grad, gives the floating-point
    outputs a grad_fn that raises "derivative for NS::OP is not implemented"."""
    requires = any(_requires_grad(a) for a in args) or any(_requires_grad(v) for v in kwargs.values())
    if not requires:
        return op._redispatch_below_autograd(keyset, *args, **kwargs)
    edges = [graph.gradient_edge(t) for a in args for t in (a if isinstance(a, (list, tuple)) else (a,))
             if isinstance(t, _C.TensorBase)]
    out = op._redispatch_below_autograd(keyset, *args, **kwargs)
    node = graph.NotImplementedNode(op._name, edges)
    for nr, o in enumerate(_flat_outputs(out)):
        if _is_float_tensor(o):
            graph.set_history(o, node, nr)
    return out


# The registration of _not_implemented_fallback (kept alive for the process).
_fallback_registration: Optional[_C._RegistrationHandles] = None


def install_not_implemented_fallback() -> None:
    """Makes operators without an autograd formula raise at backward (DESIGN.md
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
