"""How the built-in operator library ``od`` registers its operators: through
``opdispatch.library`` like any user library, with a CPU kernel (NumPy), a
Meta kernel (metadata only) and an autograd formula per operator."""
from __future__ import annotations

import sys
from typing import Any, Callable, Optional, Sequence

from .. import _C
from .._library.autograd import make_autograd_kernel
from .._ops import Tag
from ..library import Library, _registration_site

Kernel = Callable[..., Any]


def _declaring_statement() -> tuple[str, int]:
    """(file, line) of the module-level statement being executed: where a
    built-in operator is declared, whatever helpers stand between (see
    Note [Registration sites] in opdispatch/library.py)."""
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    return frame.f_code.co_filename, frame.f_lineno


#: The ``od`` library; lives for the whole process.
with _registration_site(*_declaring_statement()):
    LIB = Library("od", "DEF")

# The tag sets PyTorch gives the built-in operators' namesakes (``tags`` of
# ``torch.ops.aten.<op>.<overload>``), in PyTorch's (alphabetical) order.
PT2 = (Tag.pt2_compliant_tag,)
CORE = (Tag.core, Tag.pt2_compliant_tag)
POINTWISE = (Tag.core, Tag.pointwise, Tag.pt2_compliant_tag)
NONCORE_POINTWISE = (Tag.pointwise, Tag.pt2_compliant_tag)
INPLACE = (Tag.inplace, Tag.pt2_compliant_tag)
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
) -> _C._DispatchOperator:
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
    Returns the operator. Kernels of mutating operators need not bump
    version counters: the dispatcher does (Note [Post-kernel
    effects] in csrc/opdispatch/dispatch/PostKernelEffects.h).
    """
    with _registration_site(*_declaring_statement()):
        LIB.define(schema, tags=tags)
        name = schema.split("(", 1)[0]
        base, _, overload = name.partition(".")
        for kernel, key in ((cpu, "CPU"), (meta, "Meta"), (backend, "CompositeExplicitAutograd")):
            if kernel is not None:
                LIB.impl(name, kernel, key)
        if composite is not None:
            LIB.impl(name, composite, "CompositeImplicitAutograd")
        op = _C._DispatchOperator("od::" + base, overload)
        if backward is not None:
            # Built-in formulas take None for an output that received no gradient (as PyTorch's generated nodes).
            LIB.impl(name, make_autograd_kernel(op, backward, setup_context, materialize_grads=False), "Autograd",
                     with_keyset=True)
        elif autograd is not None:
            LIB.impl(name, autograd(op), "Autograd", with_keyset=True)
        elif not differentiable:
            LIB.impl(name, _below_autograd(op), "Autograd", with_keyset=True)
    return op


def _below_autograd(op: _C._DispatchOperator) -> Kernel:
    """The Autograd kernel of a non-differentiable operator: no graph node, outputs never require grad."""
    return op._redispatch_below_autograd
