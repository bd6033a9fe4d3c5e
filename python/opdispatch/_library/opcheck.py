"""opcheck and its tests: does an operator's registration (schema, autograd
kernel, fake impl) match what it does on sample inputs?
PyTorch: torch/testing/_internal/optests (generate_tests.opcheck;
SchemaCheckMode, autograd_registration_check, CrossRefFakeMode)."""
from __future__ import annotations

import itertools
import traceback
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .. import _C, _ops, library
from ..autograd import engine
from ..autograd.grad_mode import no_grad
from . import custom_ops
from .custom_ops import CustomOpDef
from .utils import bind_arguments, iter_tensors
from .._tensor_type import Tensor

__all__ = ["DEFAULT_TEST_UTILS", "OpCheckError", "aot_dispatch_check", "autograd_registration_check", "fake_check",
           "opcheck", "schema_check"]


class OpCheckError(Exception):
    """An opcheck test failed; the cause is chained (``__cause__``). PyTorch: optests.OpCheckError."""


# --- inputs --------------------------------------------------------------------------------


def _map_tensors(value: Any, f: Callable[[Tensor], Any]) -> Any:
    if isinstance(value, Tensor):
        return f(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, f) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, f) for k, v in value.items()}
    return value


def _all_tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Tensor]:
    return [t for v in (*args, *kwargs.values()) for t in iter_tensors(v)]


def _clone(t: Tensor) -> Tensor:
    """A copy of ``t`` that is a leaf with the same requires_grad."""
    with no_grad():
        copy = t.clone()
    return copy.requires_grad_(True) if t.requires_grad else copy


def _copies(args: tuple[Any, ...], kwargs: dict[str, Any], f: Callable[[Tensor], Any] = _clone
            ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return _map_tensors(args, f), _map_tensors(kwargs, f)


def _has_meta_inputs(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    return any(t.is_meta for t in _all_tensors(args, kwargs))


def _outputs(schema: _C.FunctionSchema, out: Any) -> list[Any]:
    """One entry per return of the schema."""
    return [out] if len(schema.returns) == 1 else list(out) if schema.returns else []


# --- test_schema -------------------------------------------------------------------------------


def _snapshot(t: Tensor) -> tuple[Any, ...]:
    data = t.numpy(force=True).copy() if t.device.type == "cpu" else None
    return tuple(t.shape), t.stride(), t.storage_offset(), data


def _was_mutated(before: tuple[Any, ...], t: Tensor) -> bool:
    shape, stride, offset, data = before
    if (tuple(t.shape), t.stride(), t.storage_offset()) != (shape, stride, offset):
        return True
    if data is None:
        return False
    now = t.numpy(force=True)
    return not np.array_equal(data, now, equal_nan=data.dtype.kind in "fc")


def _alias_sets(x: Any) -> set[str]:
    info = x.alias_info
    return set() if info is None else set(info.before_set) | set(info.after_set)


def _may_alias(a: Any, b: Any) -> bool:
    """Whether the schema lets argument/return ``a`` alias ``b`` (a shared alias set, or a wildcard)."""
    sa, sb = _alias_sets(a), _alias_sets(b)
    return bool(sa & sb) or "*" in sa or "*" in sb


def schema_check(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Runs ``op`` on copies of the inputs and raises RuntimeError if it
    mutates an argument the schema does not mark mutable ("Argument x is not
    defined as mutable but was mutated"), returns an output that aliases an
    argument ("... is not defined to alias output but was aliasing") or
    another output ("Outputs i and j alias unexpectedly") without the schema
    declaring it, or returns an input itself. Mutation: changed data (cpu),
    shape, strides or offset; aliasing: Tensor._shares_memory.
    PyTorch: torch._subclasses.schema_check_mode.SchemaCheckMode."""
    schema = op._schema
    args, kwargs = _copies(args, kwargs)
    bound = bind_arguments(schema, args, kwargs)
    before = {name: [_snapshot(t) for t in iter_tensors(v)] for name, v in bound.items()}
    outputs = _outputs(schema, op(*args, **kwargs))
    for arg in schema.arguments:
        tensors = list(iter_tensors(bound[arg.name]))
        for j, out in enumerate(outputs):
            for o in iter_tensors(out):
                for t in tensors:
                    if o._shares_memory(t) and not _may_alias(arg, schema.returns[j]):
                        raise RuntimeError(f"Argument {arg.name} is not defined to alias output but was aliasing")
                    if o is t and not (arg.alias_info is not None and arg.alias_info.is_write):
                        raise RuntimeError(
                            f"Dispatcher operators below autograd are not allowed to directly return inputs. "
                            f"However, we found that `outputs[{j}] is {arg.name}`"
                        )
        if any(_was_mutated(snap, t) for snap, t in zip(before[arg.name], tensors)):
            if not (arg.alias_info is not None and arg.alias_info.is_write):
                raise RuntimeError(f"Argument {arg.name} is not defined as mutable but was mutated")
    for i, j in itertools.combinations(range(len(outputs)), 2):
        if any(a._shares_memory(b) for a in iter_tensors(outputs[i]) for b in iter_tensors(outputs[j])):
            if not _may_alias(schema.returns[i], schema.returns[j]):
                raise RuntimeError(f"Outputs {i} and {j} alias unexpectedly")


# --- test_autograd_registration ---------------------------------------------------------------------


def autograd_registration_check(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Checks that an operator whose inputs require grad gets its autograd
    support from an autograd kernel: one registered at Autograd or
    Autograd<Backend>, or CompositeImplicitAutograd (it decomposes into
    operators that have formulas). Otherwise it runs the kernels below
    autograd with grad mode on and raises AssertionError ("...incorrectly
    registered...") if an output that is not an input requires grad: the
    backend kernel recorded history itself, which autograd kernels of other
    operators will not see. RuntimeError if no input requires grad;
    NotImplementedError for devices other than cpu and cuda.
    PyTorch: optests.autograd_registration_check."""
    tensors = _all_tensors(args, kwargs)
    if not any(t.requires_grad for t in tensors):
        raise RuntimeError(
            "autograd_registration_check: no inputs have requires_grad=True so we are unable to actually perform "
            "this test. Please pass inputs that do require grad."
        )
    devices = {t.device.type for t in tensors}
    if not devices <= {"cpu", "cuda"}:
        raise NotImplementedError(f"autograd_registration_check: NYI devices other than CPU/CUDA, got {devices}")
    key = "AutogradCUDA" if "cuda" in devices else "AutogradCPU"
    name = op.name()
    for k in (key, "Autograd", "CompositeImplicitAutograd"):
        if _C._dispatch_has_kernel_for_dispatch_key(name, k):
            return
    if custom_ops._maybe_get_opdef(name) is not None:
        # A custom op's autograd is its own: PyTorch registers an Autograd
        # kernel for every custom_op (raising at backward without a formula);
        # here the autograd fallback does the same for it.
        return
    keyset = _C._after_autograd_keyset
    present = _C._dispatch_keys(tensors[0])
    for t in tensors[1:]:
        present = present | _C._dispatch_keys(t)
    out = op.redispatch(present & keyset, *args, **kwargs)
    flat = [o for v in _outputs(op._schema, out) for o in iter_tensors(v)]
    if any(o.requires_grad and not any(o is t for t in tensors) for o in flat):
        raise AssertionError(
            f"{name}: at least one output of this operator has requires_grad=True but the operator does not have "
            f"an autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd). This could mean that you "
            f"have incorrectly registered an autograd kernel to a non-Autograd DispatchKey, which may lead to "
            f"silently incorrect results. If your operator consists of regular opdispatch operations, consider not "
            f"using an operator at all or registering your operator as CompositeImplicitAutograd. If a backend "
            f"kernel records autograd history itself, move that to the Autograd key (register_autograd)."
        )


# --- test_faketensor ---------------------------------------------------------------------------------


def _mismatch(op: _ops.OpOverload, what: str) -> RuntimeError:
    return RuntimeError(f"When comparing the output of {op} on FakeTensor and concrete Tensors, found {what}")


def fake_check(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Runs ``op`` on copies of the inputs and, under a FakeTensorMode, on
    fakes of them (its fake impl runs on FakeTensors of the inputs' devices,
    so a device-specific fake impl takes the branch the real call would; or
    its Meta kernel), and raises RuntimeError unless the outputs agree: count
    and kinds, devices, shapes ("Shapes ... are not equal!"; a data-dependent
    dimension, a SymInt from ``ctx.new_dynamic_size()``, matches any size),
    dtypes, requires_grad, and which inputs each output aliases. Strides are
    not compared (PyTorch compares them on CUDA only). PyTorch: CrossRefFakeMode (fake_check)."""
    from .._subclasses.fake_tensor import FakeTensor, FakeTensorMode
    from .._subclasses.symbolic_shapes import SymInt

    real_args, real_kwargs = _copies(args, kwargs)
    real = op(*real_args, **real_kwargs)
    with FakeTensorMode() as mode:
        fake_args, fake_kwargs = _copies(real_args, real_kwargs, mode.from_tensor)
        try:
            fake = op(*fake_args, **fake_kwargs)
        except Exception as e:
            raise RuntimeError(
                f"{op}: calling the operator with FakeTensors failed; it needs a working fake impl "
                f"(opdispatch.library.register_fake) or Meta kernel. The error was {type(e).__name__}: {e}"
            ) from e
    schema = op._schema
    real_out = [o for v in _outputs(schema, real) for o in (v if isinstance(v, list) else [v])]
    fake_out = [o for v in _outputs(schema, fake) for o in (v if isinstance(v, list) else [v])]
    if len(real_out) != len(fake_out):
        raise _mismatch(op, f"a mismatched number of outputs: {len(real_out)} concrete, {len(fake_out)} fake")
    real_inputs = _all_tensors(real_args, real_kwargs)
    fake_inputs = _all_tensors(fake_args, fake_kwargs)
    for i, (r, f) in enumerate(zip(real_out, fake_out)):
        if isinstance(r, Tensor) != isinstance(f, Tensor):
            raise _mismatch(op, f"output {i} is {type(r).__name__} on concrete tensors but {type(f).__name__} on "
                                f"FakeTensors")
        if not isinstance(r, Tensor):
            continue
        if not isinstance(f, FakeTensor):
            raise _mismatch(op, f"output {i} of the fake impl is a real tensor on {f.device}, expected a "
                                f"FakeTensor (create outputs from the inputs, e.g. x.new_empty(...) or "
                                f"opdispatch.empty_like(x))")
        if r.device != f.device:
            raise _mismatch(op, f"mismatched tensor metadata: Devices {r.device} and {f.device} are not equal! "
                                f"(output {i})")
        if r.dim() != f.dim() or any(not isinstance(b, SymInt) and a != b for a, b in zip(r.shape, f.shape)):
            raise _mismatch(op, f"mismatched tensor metadata: Shapes {tuple(r.shape)} and {tuple(f.shape)} are not "
                                f"equal! (output {i})")
        if r.dtype != f.dtype:
            raise _mismatch(op, f"mismatched tensor metadata: Dtypes {r.dtype} and {f.dtype} are not equal! "
                                f"(output {i})")
        if r.requires_grad != f.requires_grad:
            raise _mismatch(op, f"mismatched requires_grad-ness of outputs: output {i} requires_grad="
                                f"{r.requires_grad} on concrete tensors, {f.requires_grad} on FakeTensors")
        real_alias = [r._shares_memory(t) for t in real_inputs]
        fake_alias = [f._shares_memory(t) for t in fake_inputs]
        if real_alias != fake_alias:
            raise _mismatch(op, f"mismatched aliasing: output {i} aliases inputs "
                                f"{[k for k, a in enumerate(real_alias) if a]} on concrete tensors but "
                                f"{[k for k, a in enumerate(fake_alias) if a]} on FakeTensors")


# --- test_aot_dispatch_dynamic / _static --------------------------------------------------------------


def _forward(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], call: Callable[..., Any]) -> list[Any]:
    """The tensor outputs of ``call(op, args, kwargs)``."""
    return [o for v in _outputs(op._schema, call(op, args, kwargs)) for o in iter_tensors(v)]


def _backward(args: tuple[Any, ...], kwargs: dict[str, Any], outputs: list[Any]) -> Optional[tuple[Any, ...]]:
    """When an input and an output require grad, the gradients of the inputs
    that require grad (of the sum of the outputs' absolute sums; None where
    unused); else None."""
    diff = [t for t in _all_tensors(args, kwargs) if t.requires_grad]
    wanted = [o for o in outputs if o.requires_grad]
    if not diff or not wanted:
        return None
    total = wanted[0].sum().abs()
    for o in wanted[1:]:
        total = total + o.sum().abs()
    return engine.grad(total, diff, allow_unused=True)


def _call_eager(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return op(*args, **kwargs)


def aot_dispatch_check(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """What compiling a program that calls ``op`` needs: its forward and,
    when inputs require grad, its backward run on tensors without data.
    Runs forward + backward on copies of the inputs (eager), then on
    FakeTensors of them (the fake impl, then the autograd formula —
    setup_context and backward — under FakeTensorMode), and raises
    RuntimeError if the fake run fails (a fake impl is missing, backward
    touches data, e.g. ``.numpy()``) or its gradients differ in presence,
    shape or dtype from the eager ones. Errors of the eager run (e.g. no
    autograd formula) pass through. When an output has a data-dependent size
    (a SymInt from ``new_dynamic_size``), only the forward runs: the
    backward's shape checks cannot compare a symbol with the eager size. PyTorch: optests.aot_autograd_check, which traces with
    FakeTensors under AOTAutograd and compares the compiled results with
    eager ones; without a compiler the values cannot differ here, and
    dynamic and static shapes are the same check (sizes are concrete)."""
    eager_args, eager_kwargs = _copies(args, kwargs)
    eager_out = _forward(op, eager_args, eager_kwargs, _call_eager)
    eager_grads = _backward(eager_args, eager_kwargs, eager_out)
    from .._subclasses.fake_tensor import FakeTensorMode
    from .._subclasses.symbolic_shapes import SymInt

    try:
        with FakeTensorMode() as mode:
            meta_args, meta_kwargs = _copies(args, kwargs, mode.from_tensor)
            meta_out = _forward(op, meta_args, meta_kwargs, _call_eager)
            dynamic = any(isinstance(d, SymInt) for o in meta_out for d in o.shape)
            meta_grads = None if dynamic else _backward(meta_args, meta_kwargs, meta_out)
    except Exception as e:
        raise RuntimeError(
            f"{op}: running the operator's forward and backward on FakeTensors (no data, as a compiler traces it) "
            f"failed with {type(e).__name__}: {e}. The fake impl, setup_context and backward must use only "
            f"operators that have fake impls, and must not read tensor data (.numpy(), .item(), .tolist())."
        ) from e
    if len(eager_out) != len(meta_out):
        raise RuntimeError(f"{op}: {len(eager_out)} tensor outputs in eager mode but {len(meta_out)} on meta tensors")
    if eager_grads is None or meta_grads is None:
        return
    for i, (g, m) in enumerate(zip(eager_grads, meta_grads)):
        eager_meta = None if g is None else (tuple(g.shape), g.dtype)
        fake_meta = None if m is None else (tuple(m.shape), m.dtype)
        if eager_meta != fake_meta:
            raise RuntimeError(
                f"Gradients of the operator {op} differ between eager mode and FakeTensors: gradient of "
                f"differentiable input {i} is {eager_meta} (shape, dtype) in eager mode but {fake_meta} on "
                f"FakeTensors. The backward formula depends on the tensors' data, or it is registered in a way only "
                f"eager mode sees (register it with opdispatch.library.register_autograd)."
            )


# --- opcheck --------------------------------------------------------------------------------------------


def _safe(check: Callable[[_ops.OpOverload, tuple[Any, ...], dict[str, Any]], None], needs_grad: bool = False
          ) -> Callable[[_ops.OpOverload, tuple[Any, ...], dict[str, Any]], None]:
    """``check``, skipped (passing) for meta inputs — they have no data to
    compare against — and, with ``needs_grad``, when no input requires grad."""

    def run(op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if _has_meta_inputs(args, kwargs):
            return
        if needs_grad and not any(t.requires_grad for t in _all_tensors(args, kwargs)):
            return
        if needs_grad:
            args, kwargs = _copies(args, kwargs)
        check(op, args, kwargs)

    return run


#: The tests, in the order opcheck runs them. PyTorch: optests.generate_tests.ALL_TEST_UTILS.
ALL_TEST_UTILS: dict[str, Callable[[_ops.OpOverload, tuple[Any, ...], dict[str, Any]], None]] = {
    "test_schema": _safe(schema_check),
    "test_autograd_registration": _safe(autograd_registration_check, needs_grad=True),
    "test_faketensor": _safe(fake_check),
    "test_aot_dispatch_static": _safe(aot_dispatch_check),
    "test_aot_dispatch_dynamic": _safe(aot_dispatch_check),
}
DEFAULT_TEST_UTILS = library._OPCHECK_DEFAULT_UTILS

#: Per test: what it checked, and what to do when it fails (the OpCheckError message).
_EXPLANATIONS = {
    "test_schema": (
        "ran the operator on copies of the inputs and checked that it mutates only the arguments its schema "
        "marks mutable (Tensor(a!)) and returns views of its inputs only where the schema says so (Tensor(a))",
        "correct the schema (mark mutated arguments Tensor(a!), view outputs Tensor(a)), or make the kernel "
        "write into new tensors instead",
    ),
    "test_autograd_registration": (
        "ran the kernels below autograd with inputs that require grad and checked that autograd support comes "
        "from a kernel at an Autograd key, not from a backend kernel that records autograd history itself",
        "register the backward with opdispatch.library.register_autograd (or register a composite of other "
        "operators as CompositeImplicitAutograd), and keep backend kernels free of autograd",
    ),
    "test_faketensor": (
        "ran the operator on meta tensors (its fake impl or Meta kernel) and compared the outputs' shapes, "
        "dtypes, requires_grad and aliasing with the real outputs",
        "register a fake impl (opdispatch.library.register_fake) whose outputs match the real ones, creating "
        "them from the inputs (x.new_empty(...), opdispatch.empty_like(x))",
    ),
    "test_aot_dispatch_static": (
        "ran the operator's forward and backward on meta tensors, as a compiler traces them, and compared the "
        "gradients with eager mode",
        "give the operator a fake impl, and write setup_context / backward with operators that have fake impls "
        "and without reading tensor data",
    ),
}
_EXPLANATIONS["test_aot_dispatch_dynamic"] = _EXPLANATIONS["test_aot_dispatch_static"]


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        grad = ", requires_grad=True" if value.requires_grad else ""
        return f"Tensor(shape={tuple(value.shape)}, dtype={value.dtype}, device={value.device}{grad})"
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


def _failure_message(test: str, op: _ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any],
                     ex: Exception) -> str:
    """The OpCheckError message: self-contained (no "scroll up"): the test,
    the operator and sample, the cause and where it was raised, what the
    test checks and what to do."""
    frames = traceback.extract_tb(ex.__traceback__)
    where = f" (raised at {frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    checked, todo = _EXPLANATIONS[test]
    sample = ", ".join([_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()])
    return (
        f"opcheck(op, ...): {test} failed with {type(ex).__name__}: {ex}{where}\n"
        f"  operator: {op._schema}\n"
        f"  sample:   {op}({sample})\n"
        f"  checked:  {checked}.\n"
        f"  to fix:   {todo}.\n"
        f"The original exception is chained to this one (its __cause__), with its full traceback."
    )


def _resolve(op: Any) -> _ops.OpOverload:
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, _ops.OpOverloadPacket):
        overloads = op.overloads()
        if len(overloads) != 1:
            raise RuntimeError(f"opcheck can only test operators without overloads. Got the following overloads "
                               f"for {op._qualified_op_name}: {overloads}; pass one of them (packet.<overload>)")
        found: _ops.OpOverload = getattr(op, overloads[0])
        return found
    if not isinstance(op, _ops.OpOverload):
        raise ValueError(f"opcheck(op, ...): op must be an OpOverload (e.g. opdispatch.ops.mylib.foo.default), a "
                         f"packet with a single overload, or a CustomOpDef; got {type(op)}")
    return op


def opcheck(
    op: Union[_ops.OpOverload, _ops.OpOverloadPacket, CustomOpDef],
    args: Sequence[Any],
    kwargs: Optional[dict[str, Any]] = None,
    *,
    test_utils: Union[str, Sequence[str]] = DEFAULT_TEST_UTILS,
    raise_exception: bool = True,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
) -> dict[str, Any]:
    """See opdispatch.library.opcheck. PyTorch: optests.opcheck."""
    if (rtol is None) != (atol is None):
        raise ValueError("opcheck(op, ...): if you specify one of rtol/atol, you must specify both")
    op = _resolve(op)
    args, kwargs = tuple(args), dict(kwargs or {})
    if test_utils == "ALL":
        test_utils = tuple(ALL_TEST_UTILS)
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{tuple(ALL_TEST_UTILS)} but it was not")
    results: dict[str, Any] = {}
    for name in test_utils:
        try:
            ALL_TEST_UTILS[name](op, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(_failure_message(name, op, args, kwargs, ex)) from ex
            results[name] = ex
    return results
