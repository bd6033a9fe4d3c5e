"""How the built-in operator library ``od`` registers its operators: through
``opdispatch.library`` like any user library, with a CPU kernel (NumPy), a
Meta kernel (metadata only) and an autograd formula per operator."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, TypeAlias, TypedDict

from .. import _C
from .._library.autograd import make_autograd_kernel
from .._ops import Tag
from ..library import Library, _registration_site, fallthrough_kernel

if TYPE_CHECKING:
    from .._tensor import Tensor

Kernel = Callable[..., Any]


class Kernels(TypedDict):
    """The CPU and Meta kernels of one operator, as kernel builders return them (``defop(..., **kernels)``)."""

    cpu: Kernel
    meta: Kernel


#: A built-in operator, typed as returning a Tensor.
Op: TypeAlias = "_C._DispatchOperator[Tensor]"
#: A built-in operator returning two tensors (``-> (Tensor a, Tensor b)``).
PairOp: TypeAlias = "_C._DispatchOperator[tuple[Tensor, Tensor]]"


def _declaring_statement() -> tuple[str, int]:
    """(file, line) of the module-level statement being executed: where a
    built-in operator is declared, whatever helpers stand between (see
    Note [Registration sites] in opdispatch/library.py)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


#: The ``od`` library; lives for the whole process. Its registrations are not
#: undone at exit (weakref.finalize's atexit): deregistering ~100 operators one
#: by one costs the exit ~1 ms, and the kernels the dispatcher still holds are
#: released safely after the interpreter is gone (interpreterAlive in csrc/python/Exceptions.h).
with _registration_site(*_declaring_statement()):
    LIB = Library("od", "DEF")
LIB._finalizer.atexit = False
# The od kernels are opdispatch's own, as ATen's C++ kernels are PyTorch's: not
# Python registrations, so they take no slot of library._impls (None: none of
# its kernels are added there), and a user's Library("od", "IMPL").impl(...)
# overrides one with the override warning, as it would an ATen kernel, until
# that Library is destroyed (issue 28).
LIB._op_impls = None

# The tag sets PyTorch gives the built-in operators' namesakes (``tags`` of
# ``torch.ops.aten.<op>.<overload>``), in PyTorch's (alphabetical) order.
PT2 = (Tag.pt2_compliant_tag,)
CORE = (Tag.core, Tag.pt2_compliant_tag)
DYNAMIC_OUTPUT_SHAPE = (Tag.core, Tag.dynamic_output_shape, Tag.pt2_compliant_tag)
POINTWISE = (Tag.core, Tag.pointwise, Tag.pt2_compliant_tag)
NONCORE_POINTWISE = (Tag.pointwise, Tag.pt2_compliant_tag)
INPLACE = (Tag.inplace, Tag.pt2_compliant_tag)
OUT_POINTWISE = (Tag.core, Tag.out, Tag.pointwise, Tag.pt2_compliant_tag)
INPLACE_POINTWISE = (Tag.inplace, Tag.pointwise, Tag.pt2_compliant_tag)
REDUCTION = (Tag.core, Tag.pt2_compliant_tag, Tag.reduction)
NONCORE_REDUCTION = (Tag.pt2_compliant_tag, Tag.reduction)
RANDOM = (Tag.core, Tag.nondeterministic_seeded, Tag.pt2_compliant_tag)


def defop(
    schema: str,
    *,
    tags: Sequence[Tag],
    cpu: Optional[Kernel] = None,
    meta: Optional[Kernel] = None,
    backend: Optional[Kernel] = None,
    backward: Optional[Kernel] = None,
    setup_context: Optional[Kernel] = None,
    autograd: Optional[Kernel] = None,
    composite: Optional[Kernel] = None,
    differentiable: bool = True,
) -> Op:
    """Defines ``od::<schema>`` and registers its kernels.

    ``cpu`` / ``meta``: kernels for the CPU and Meta keys; ``backend``: one
    kernel for every backend (CompositeExplicitAutograd — factories and ops
    that only change metadata); ``backward(ctx, *grads)`` with
    ``setup_context(ctx, inputs, output)``: the autograd formula (see
    opdispatch._library.autograd; an output that received no gradient gives
    backward None, not zeros); ``autograd(op)``: makes a hand-written
    Autograd kernel ``(keyset, *args, **kwargs)`` for ``op`` instead of a formula
    (``differentiable=False``: one that runs the operator below autograd, so
    outputs never require grad — factories, comparisons, argmax); ``composite``:
    a CompositeImplicitAutograd kernel, a decomposition into other operators
    that serves every key (PyTorch's ``to``, ``contiguous``, ``flatten``).
    ``tags``: PyTorch's tags of the namesake (one of the sets above).
    Returns the operator, typed as returning a Tensor (what all but two
    built-in operators return; those two cast it to PairOp). Kernels of mutating operators need not bump
    version counters: the dispatcher does (Note [Post-kernel
    effects] in csrc/opdispatch/dispatch/PostKernelEffects.h) for the
    in-place and out= operators (tagged inplace or out), as PyTorch's
    generated ADInplaceOrView kernels do; an operator that writes an argument
    without being either (_native_batch_norm_legit) gets a fallthrough at
    ADInplaceOrView, as it has no such kernel in PyTorch, and bumps nothing.
    """
    with _registration_site(*_declaring_statement()):
        LIB.define(schema, tags=tags)
        name = schema.split("(", 1)[0]
        base, _, overload = name.partition(".")
        op = _C._DispatchOperator("od::" + base, overload)
        records_base = _makes_views(op._schema)
        for kernel, key in ((cpu, "CPU"), (meta, "Meta"), (backend, "CompositeExplicitAutograd")):
            if kernel is not None:
                LIB.impl(name, _recording_base(kernel) if records_base else kernel, key)
        if composite is not None:
            LIB.impl(name, composite, "CompositeImplicitAutograd")
        if op._schema.is_mutable and Tag.inplace not in tags and Tag.out not in tags:
            LIB.impl(name, fallthrough_kernel, "ADInplaceOrView")
        if _is_factory(op._schema):
            LIB.impl(name, _backend_select(op), "BackendSelect", with_keyset=True)
        if backward is not None:
            # Built-in formulas take None for an output that received no gradient (as PyTorch's generated nodes).
            kernel = make_autograd_kernel(op, backward, setup_context, materialize_grads=False, grad_mode_below=True)
            LIB.impl(name, kernel, "Autograd", with_keyset=True)
        elif autograd is not None:
            LIB.impl(name, autograd(op), "Autograd", with_keyset=True)
        elif not differentiable:
            LIB.impl(name, _below_autograd(op), "Autograd", with_keyset=True)
    return op


# Note [Views know their base]
# As in PyTorch, a tensor made by a view operator knows the tensor it views
# (Tensor._base, the root of a chain of views; Tensor._is_view()) whether or
# not autograd records anything, and a later in-place update of the view
# that autograd records rebases that base's history (Note [In-place updates
# of views] in autograd/graph.py). PyTorch sets it in the ADInplaceOrView
# kernels (as_view), which run for every tensor; here that key is only on
# tensors that require grad (Note [Tensor key sets]), so the backend kernels
# of a view operator (a returned alias, no write: OpOverload.is_view's rule)
# set it on their results. Decompositions (reshape, flatten) need nothing:
# their views come from such operators. detach is a view that autograd does
# not track, and PyTorch's _base leaves it out (make_variable_non_differentiable_view).


def _makes_views(schema: Any) -> bool:
    if schema.name == "od::detach":
        return False
    alias = [a.alias_info for a in schema.arguments if a.alias_info is not None]
    return bool(alias) and not any(info.is_write for info in alias)


def _recording_base(kernel: Kernel) -> Kernel:
    """``kernel`` (of a view operator, self first) that records self's base
    on the tensors it returns (Note [Views know their base])."""
    from ..autograd import graph  # imports the built-ins

    def with_base(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = kernel(self, *args, **kwargs)
        self_meta = self._autograd_meta
        root = self if self_meta is None or self_meta.view_base is None else self_meta.view_base
        for t in out if isinstance(out, (list, tuple)) else (out,):
            if t is not self and t._shares_memory(self):  # (reshape's copy of a tensor it cannot view is none)
                graph.meta_for_write(t).view_base = root
        return out

    return with_base


def no_derivative(name: str) -> Kernel:
    """The backward of an operator PyTorch 2.13 has no derivative for
    (aten::copy, aten::floor_divide): its outputs require grad, and backward
    raises PyTorch's "derivative for ... is not implemented" naming ``name``."""

    def backward(ctx: Any, *grads: Any) -> None:
        raise RuntimeError(f"derivative for {name} is not implemented")

    return backward


def _is_factory(schema: _C.FunctionSchema) -> bool:
    """Whether ``schema`` makes a tensor from a ``device`` argument and has no
    tensor argument to dispatch on (empty, zeros, arange, ...)."""
    return (any(a.name == "device" for a in schema.arguments)
            and not any("Tensor" in str(a.real_type) for a in schema.arguments))


def _backend_select(op: _C._DispatchOperator) -> Kernel:
    """The BackendSelect kernel of a factory: redispatches to the backend key
    of its ``device`` argument (CPU when None), where a device plugin's kernel
    (e.g. at PrivateUse1) or the CompositeExplicitAutograd kernel takes it.
    See Note [BackendSelect is included by default] in
    csrc/opdispatch/dispatch/LocalDispatchKeySet.h. PyTorch: the generated
    BackendSelect kernels (RegisterBackendSelect.cpp), computeDispatchKey."""
    redispatch = op.redispatch
    key_for_device = _C._dispatch_key_for_device
    cpu = _C.DispatchKeySet(_C.DispatchKey.CPU)

    def backend_select(keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
        device = kwargs.get("device")
        ks = cpu if device is None else _C.DispatchKeySet(key_for_device(_C.device(str(device)).type))
        return redispatch(ks, *args, **kwargs)

    backend_select.__name__ = f"{op._schema.name.replace('::', '_')}_backend_select"
    return backend_select


def _below_autograd(op: _C._DispatchOperator) -> Kernel:
    """The Autograd kernel of a non-differentiable operator: no graph node, outputs never require grad."""
    return op._redispatch_below_autograd


def differentiable_decomposition(decomposition: Kernel) -> Callable[[_C._DispatchOperator], Kernel]:
    """An ``autograd=`` maker for defop: the Autograd kernel that, when grad
    mode is on and a tensor argument requires grad, runs ``decomposition``
    (the operator written in differentiable ``od`` operators, same arguments)
    so that autograd records it, and otherwise runs the operator's own kernel
    below autograd. For gradient operators whose derivative (double
    backward) PyTorch writes as a formula over the same operators (e.g.
    layer_norm_double_backward in FunctionsManual.cpp)."""
    from .._tensor_type import Tensor as TensorType
    from ..autograd.grad_mode import is_grad_enabled

    def requires_grad(value: Any) -> bool:
        return isinstance(value, TensorType) and value.requires_grad

    def make(op: _C._DispatchOperator) -> Kernel:
        below = op._redispatch_below_autograd

        def kernel(keyset: _C.DispatchKeySet, *args: Any, **kwargs: Any) -> Any:
            if is_grad_enabled() and (any(map(requires_grad, args)) or any(map(requires_grad, kwargs.values()))):
                return decomposition(*args, **kwargs)
            return below(keyset, *args, **kwargs)

        kernel.__name__ = f"{op._schema.name.replace('::', '_')}_autograd"
        return kernel

    return make
