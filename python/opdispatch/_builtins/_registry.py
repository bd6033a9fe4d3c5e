"""How the built-in operator library ``od`` registers its operators: through
``opdispatch.library`` like any user library, with a CPU kernel (NumPy), a
Meta kernel (metadata only) and an autograd formula per operator."""
from __future__ import annotations

from typing import Any, Callable, Optional

from .. import _C
from .._library.autograd import make_autograd_kernel
from ..library import Library

Kernel = Callable[..., Any]

#: The ``od`` library; lives for the whole process.
LIB = Library("od", "DEF")


def defop(
    schema: str,
    *,
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
    opdispatch._library.autograd); ``autograd(op)``: makes a hand-written
    Autograd kernel ``(keyset, *args, **kwargs)`` for ``op`` instead of a formula
    (``differentiable=False``: one that runs the operator below autograd, so
    outputs never require grad — factories, comparisons, argmax); ``composite``:
    a CompositeImplicitAutograd kernel, a decomposition into other operators
    that serves every key (PyTorch's ``to``, ``contiguous``, ``flatten``).
    Returns the operator. Kernels of mutating operators need not bump
    version counters: the dispatcher does (Note [Post-kernel
    effects] in csrc/opdispatch/dispatch/PostKernelEffects.h).
    """
    LIB.define(schema)
    name = schema.split("(", 1)[0]
    base, _, overload = name.partition(".")
    for kernel, key in ((cpu, "CPU"), (meta, "Meta"), (backend, "CompositeExplicitAutograd")):
        if kernel is not None:
            LIB.impl(name, kernel, key)
    if composite is not None:
        LIB.impl(name, composite, "CompositeImplicitAutograd")
    op = _C._DispatchOperator("od::" + base, overload)
    if backward is not None:
        LIB.impl(name, make_autograd_kernel(op, backward, setup_context), "Autograd", with_keyset=True)
    elif autograd is not None:
        LIB.impl(name, autograd(op), "Autograd", with_keyset=True)
    elif not differentiable:
        LIB.impl(name, _below_autograd(op), "Autograd", with_keyset=True)
    return op


def _below_autograd(op: _C._DispatchOperator) -> Kernel:
    """The Autograd kernel of a non-differentiable operator: no graph node, outputs never require grad."""
    return op._redispatch_below_autograd
