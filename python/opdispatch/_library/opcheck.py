"""opcheck and its tests: does an operator's registration (schema, autograd
kernel, fake impl) match what it does on sample inputs?
PyTorch: torch/testing/_internal/optests (generate_tests.opcheck;
SchemaCheckMode, autograd_registration_check, CrossRefFakeMode)."""
from __future__ import annotations

import itertools
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .. import _C, _ops, library
from ..autograd.grad_mode import no_grad
from .custom_ops import CustomOpDef
from .utils import bind_arguments, iter_tensors

__all__ = ["DEFAULT_TEST_UTILS", "OpCheckError", "autograd_registration_check", "fake_check", "opcheck",
           "schema_check"]


class OpCheckError(Exception):
    """An opcheck test failed; the cause is chained (``__cause__``). PyTorch: optests.OpCheckError."""


# --- inputs --------------------------------------------------------------------------------


def _map_tensors(value: Any, f: Callable[[_C.TensorBase], Any]) -> Any:
    if isinstance(value, _C.TensorBase):
        return f(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, f) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, f) for k, v in value.items()}
    return value


def _all_tensors(args: tuple, kwargs: dict) -> list[_C.TensorBase]:
    return [t for v in (*args, *kwargs.values()) for t in iter_tensors(v)]


def _clone(t: _C.TensorBase) -> _C.TensorBase:
    """A copy of ``t`` that is a leaf with the same requires_grad."""
    with no_grad():
        copy = t.clone()
    return copy.requires_grad_(True) if t.requires_grad else copy


def _copies(args: tuple, kwargs: dict, f: Callable[[_C.TensorBase], Any] = _clone) -> tuple[tuple, dict]:
    return _map_tensors(args, f), _map_tensors(kwargs, f)


def _has_meta_inputs(args: tuple, kwargs: dict) -> bool:
    return any(t.is_meta for t in _all_tensors(args, kwargs))


def _outputs(schema: _C.FunctionSchema, out: Any) -> list[Any]:
    """One entry per return of the schema."""
    return [out] if len(schema.returns) == 1 else list(out) if schema.returns else []


# --- test_schema -------------------------------------------------------------------------------


def _snapshot(t: _C.TensorBase) -> tuple[Any, ...]:
    data = t.numpy(force=True).copy() if t.device.type == "cpu" else None
    return tuple(t.shape), t.stride(), t.storage_offset(), data


def _was_mutated(before: tuple[Any, ...], t: _C.TensorBase) -> bool:
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


def schema_check(op: _ops.OpOverload, args: tuple, kwargs: dict) -> None:
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


def autograd_registration_check(op: _ops.OpOverload, args: tuple, kwargs: dict) -> None:
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


def fake_check(op: _ops.OpOverload, args: tuple, kwargs: dict) -> None:
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
        if isinstance(r, _C.TensorBase) != isinstance(f, _C.TensorBase):
            raise _mismatch(op, f"output {i} is {type(r).__name__} on concrete tensors but {type(f).__name__} on "
                                f"FakeTensors")
        if not isinstance(r, _C.TensorBase):
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


# --- opcheck --------------------------------------------------------------------------------------------


def _safe(check: Callable[[_ops.OpOverload, tuple, dict], None], needs_grad: bool = False
          ) -> Callable[[_ops.OpOverload, tuple, dict], None]:
    """``check``, skipped (passing) for meta inputs — they have no data to
    compare against — and, with ``needs_grad``, when no input requires grad."""

    def run(op: _ops.OpOverload, args: tuple, kwargs: dict) -> None:
        if _has_meta_inputs(args, kwargs):
            return
        if needs_grad and not any(t.requires_grad for t in _all_tensors(args, kwargs)):
            return
        if needs_grad:
            args, kwargs = _copies(args, kwargs)
        check(op, args, kwargs)

    return run


#: The tests (opdispatch.library._OPCHECK_DEFAULT_UTILS orders them).
#: PyTorch: optests.generate_tests.ALL_TEST_UTILS.
ALL_TEST_UTILS: dict[str, Callable[[_ops.OpOverload, tuple, dict], None]] = {
    "test_schema": _safe(schema_check),
    "test_autograd_registration": _safe(autograd_registration_check, needs_grad=True),
    "test_faketensor": _safe(fake_check),
}
DEFAULT_TEST_UTILS = library._OPCHECK_DEFAULT_UTILS


def _resolve(op: Any) -> _ops.OpOverload:
    if isinstance(op, CustomOpDef):
        return op._opoverload
    if isinstance(op, _ops.OpOverloadPacket):
        overloads = op.overloads()
        if len(overloads) != 1:
            raise RuntimeError(f"opcheck can only test operators without overloads. Got the following overloads "
                               f"for {op._qualified_op_name}: {overloads}; pass one of them (packet.<overload>)")
        return getattr(op, overloads[0])
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
) -> dict[str, Any]:
    """See opdispatch.library.opcheck. PyTorch: optests.opcheck."""
    op = _resolve(op)
    args, kwargs = tuple(args), dict(kwargs or {})
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(ALL_TEST_UTILS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to be subset of "
                         f"{DEFAULT_TEST_UTILS} but it was not")
    results: dict[str, Any] = {}
    for name in test_utils:
        try:
            ALL_TEST_UTILS[name](op, args, kwargs)
            results[name] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up for stack trace)") from ex
            results[name] = ex
    return results
