"""opcheck and its three tests (schema, autograd registration, fake impl),
and the custom-op database (tests/custom_op_db.py) run through opcheck and
gradcheck — PyTorch's test/test_custom_ops.py (seed 003) classes
TestCustomOpTesting, MiniOpTest and TestGenerateOpcheckTests, rewritten for
opdispatch. The seed's autograd.Function-based Autograd kernels become
register_autograd formulas (opdispatch has no autograd.Function); the
device is cpu.

Seed tests not ported, and why:
  TestCustomOpTesting
    test_aot_autograd_check_degenerate_cases, test_global_state_mutation,
      test_assert_raises_regex: test AOTAutograd (torch.compile) checks.
    test_missing_functionalization: needs functionalization (torch.compile).
    (test_opcheck_opinfo is test_opcheck_custom_op_db below: the OpInfo
      database becomes tests/custom_op_db.py.)
  MiniOpTest, MiniOpTestOther
    generate_opcheck_tests (each test re-run under an opcheck mode, with a
      failures dict) is not ported: it intercepts calls through
      TorchFunctionMode, which opdispatch does not have. The operators those
      tests exercise are checked with opcheck directly instead
      (test_mini_ops_under_opcheck), with the outcomes the seed's failures
      dict records; test_delayed_error* are ported.
    test_nonzero, test_inplace: aten operators opdispatch's od library does
      not have (nonzero, sin_).
    test_dont_generate: tests the generate_opcheck_tests decorator.
  TestGenerateOpcheckTests
    test_MiniOpTest, test_generate_repro_save_data,
      test_generate_repro_no_save_data, test_failures_dict_validation,
      test_dont_generate_decorator, test_is_inside_opcheck_mode: test
      generate_opcheck_tests and its repro scripts (not ported, see above).
    test_opcheck: ported with od::sin for aten::sin (test_aot_dispatch_dynamic
      runs forward and backward on FakeTensors here, see aot_dispatch_check).
"""
from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import opdispatch
from opdispatch import Tensor, library, ops
from opdispatch._library import legacy_custom_op
from opdispatch._subclasses.fake_tensor import FakeTensor
from opdispatch._library.opcheck import OpCheckError, autograd_registration_check, fake_check, schema_check
from opdispatch.autograd import gradcheck
from opdispatch.library import opcheck

import custom_op_db

ALL_SUCCESS = {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS", "test_faketensor": "SUCCESS",
               "test_aot_dispatch_dynamic": "SUCCESS"}


def scalar(value: float, requires_grad: bool = False) -> Tensor:
    return opdispatch.tensor(value, requires_grad=requires_grad)


def identity_formula(ctx, grad):
    return grad


def define(ns, lib, schema: str, **kernels) -> Any:
    """Defines ns::<schema> in `lib` with kernels by key (keyword = key name); returns the OpOverload."""
    name = lib.define(schema).split("::")[1]
    for key, kernel in kernels.items():
        lib.impl(name, kernel, key)
    return getattr(getattr(ops, ns), name.split(".")[0]).default


# =============================================================================================
# TestCustomOpTesting
# =============================================================================================


def test_incorrect_schema_mutation(ns, lib):
    def foo_impl(x):
        x.numpy()[...] = np.sin(x.numpy())
        return x.clone()

    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=foo_impl)
    library.register_autograd(op, identity_formula, lib=lib)
    x = scalar(math.pi / 3, requires_grad=True)
    with pytest.raises(OpCheckError, match="Argument x is not defined as mutable but was mutated"):
        opcheck(op, (x,), {})


def test_incorrect_schema_view(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: x.view(x.shape), Meta=lambda x: x.view(x.shape))
    library.register_autograd(op, identity_formula, lib=lib)
    x = scalar(math.pi / 3, requires_grad=True)
    with pytest.raises(OpCheckError, match="Argument x is not defined to alias output but was aliasing"):
        opcheck(op, (x,), {})


def test_missing_abstract_impl(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: opdispatch.tensor(x.numpy() ** 2))
    library.register_autograd(op, lambda ctx, gx: 2 * gx, lib=lib)
    x = opdispatch.tensor([0, 1.0], requires_grad=True)
    with pytest.raises(OpCheckError, match=f"{ns}.foo.default"):
        opcheck(op, (x,), {})


def test_incorrect_abstract_impl(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: x ** 2, Meta=lambda x: x.unsqueeze(1) ** 2)
    library.register_autograd(op, identity_formula, lib=lib)
    x = opdispatch.tensor([0, 1.0], requires_grad=True)
    with pytest.raises(OpCheckError, match="Shapes .* are not equal"):
        opcheck(op, (x,), {})


def test_autograd_registered_at_backend(ns, lib):
    # The seed registers an autograd.Function at CPU; here the CPU kernel
    # computes with od operators, which record history when called above
    # the autograd keys — the mistake the check is for.
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: x.clone() * 0.5, Meta=lambda x: x.clone())
    x = opdispatch.randn((), requires_grad=True)
    with pytest.raises(OpCheckError, match="does not have an autograd kernel"):
        opcheck(op, (x,), {})


def test_opcheck_fails_basic(ns):
    @legacy_custom_op.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        ...

    @foo.impl(["cpu", "cuda"])
    def foo_impl(x):
        return x.sum()

    x = opdispatch.randn(3, requires_grad=True)
    with pytest.raises(OpCheckError, match="Autograd has not been implemented for operator"):
        opcheck(legacy_custom_op.get_op(f"{ns}::foo"), (x,), {})


def test_autograd_registration_check_autograd_kernel(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: x.sin(), CUDA=lambda x: x.sin())
    library.register_autograd(op, identity_formula, lib=lib)
    x = opdispatch.randn(3, requires_grad=True)
    # Should not raise
    autograd_registration_check(op, (x,), {})


def test_autograd_registration_check_compositeimplicitautograd(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CompositeImplicitAutograd=lambda x: x.sin().cos())
    x = opdispatch.randn(3, requires_grad=True)
    # Should not raise
    autograd_registration_check(op, (x,), {})


def test_autograd_registration_check_incorrect_composite(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CompositeExplicitAutograd=lambda x: x.sin().cos())
    x = opdispatch.randn(3, requires_grad=True)
    with pytest.raises(AssertionError, match="incorrectly registered"):
        autograd_registration_check(op, (x,), {})


def test_autograd_registration_check_incorrect(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: x.sin(), CUDA=lambda x: x.sin())
    x = opdispatch.randn(3, requires_grad=True)
    with pytest.raises(AssertionError, match="incorrectly registered"):
        autograd_registration_check(op, (x,), {})


def test_autograd_registration_check_errors(ns, lib):
    op = define(ns, lib, "foo(Tensor x) -> Tensor", CPU=lambda x: x.clone())
    with pytest.raises(RuntimeError, match="no inputs have requires_grad=True"):
        autograd_registration_check(op, (opdispatch.randn(3),), {})
    with pytest.raises(NotImplementedError, match="NYI devices other than CPU/CUDA"):
        autograd_registration_check(op, (opdispatch.randn(3, requires_grad=True).to("meta"),), {})


# =============================================================================================
# MiniOpTest: its operators, checked by opcheck directly
# =============================================================================================


def op_with_incorrect_schema(ns, lib, name):
    return define(ns, lib, f"{name}(Tensor x) -> Tensor", CompositeExplicitAutograd=lambda x: x[:])


def init_op_delayed_backward_error(ns, lib):
    op = define(ns, lib, "delayed_error(Tensor x) -> Tensor", CompositeExplicitAutograd=lambda x: x.clone())

    def backward(ctx, grad):
        raise NotImplementedError

    library.register_autograd(op, backward, lib=lib)
    return op


def init_op_with_no_abstract_impl(ns, lib):
    lib.define("no_abstract(Tensor x) -> Tensor", tags=(opdispatch.Tag.pt2_compliant_tag,))
    lib.impl("no_abstract", lambda x: x.clone(), "CPU")
    return getattr(ops, ns).no_abstract.default


def test_incorrect_schema(ns, lib):
    op = op_with_incorrect_schema(ns, lib, "incorrect_schema")
    x = opdispatch.randn(3)
    op(x)


def test_no_abstract(ns, lib):
    init_op_with_no_abstract_impl(ns, lib)(opdispatch.randn(3))


def test_delayed_error(ns, lib):
    op = init_op_delayed_backward_error(ns, lib)
    x = opdispatch.randn((), requires_grad=True)
    y = op(x)
    with pytest.raises(NotImplementedError):
        y.sum().backward()


def test_delayed_error_no_requires_grad(ns, lib):
    op = init_op_delayed_backward_error(ns, lib)
    x = opdispatch.randn(())
    op(x)


def test_mini_ops_under_opcheck(ns, lib):
    # What generate_opcheck_tests reports for MiniOpTest's operators (the
    # seed's minioptest_failures_dict.json marks the same failures as xfail).
    x = opdispatch.randn(3, requires_grad=True)
    mm = opcheck(ops.od.mm.default, (opdispatch.randn(2, 3, requires_grad=True), opdispatch.randn(3, 5)))
    assert mm == ALL_SUCCESS
    incorrect = opcheck(op_with_incorrect_schema(ns, lib, "incorrect_schema"), (x,), raise_exception=False)
    assert isinstance(incorrect["test_schema"], RuntimeError)
    assert "is not defined to alias output but was aliasing" in str(incorrect["test_schema"])
    no_abstract = opcheck(init_op_with_no_abstract_impl(ns, lib), (x.detach(),), raise_exception=False)
    assert isinstance(no_abstract["test_faketensor"], RuntimeError)
    assert "calling the operator with FakeTensors failed" in str(no_abstract["test_faketensor"])
    assert isinstance(no_abstract["test_aot_dispatch_dynamic"], RuntimeError)  # xfail in the seed's dict too
    delayed = opcheck(init_op_delayed_backward_error(ns, lib), (x,), raise_exception=False)
    # The seed's dict: test_aot_dispatch_dynamic__test_delayed_error is an xfail (its backward raises).
    assert isinstance(delayed.pop("test_aot_dispatch_dynamic"), NotImplementedError)
    assert delayed == {k: v for k, v in ALL_SUCCESS.items() if k != "test_aot_dispatch_dynamic"}


def test_mm():
    x = opdispatch.randn(2, 3, requires_grad=True)
    y = opdispatch.randn(3, 5)
    opdispatch.testing.assert_close(ops.od.mm.default(x, y), x @ y)


def test_mm_meta():
    x = opdispatch.randn(2, 3, requires_grad=True).to("meta")
    y = opdispatch.randn(3, 5).to("meta")
    assert ops.od.mm.default(x, y).shape == (x @ y).shape


def test_mm_fake():
    from opdispatch._subclasses.fake_tensor import FakeTensor, FakeTensorMode

    with FakeTensorMode():
        x = opdispatch.randn(2, 3, requires_grad=True, device="cpu")
        y = opdispatch.randn(3, 5, device="cpu")
        result = ops.od.mm.default(x, y)
        assert result.shape == (x @ y).shape
    assert type(result) is FakeTensor and str(result.device) == "cpu" and result.requires_grad


def test_mm_errors():
    x = opdispatch.randn(2, 3, requires_grad=True)
    y = opdispatch.randn(4, 5)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        ops.od.mm.default(x, y)


# =============================================================================================
# TestGenerateOpcheckTests: opcheck itself
# =============================================================================================


def test_opcheck():
    x = opdispatch.randn(3, requires_grad=True)
    with pytest.raises(ValueError, match="OpOverload"):
        opcheck(opdispatch.sin, (x,))
    with pytest.raises(ValueError, match="test_utils to be subset of"):
        opcheck(ops.od.sin.default, (x,), test_utils="blah")
    assert opcheck(ops.od.sin.default, (x,)) == ALL_SUCCESS
    assert opcheck(ops.od.sin.default, (x,), test_utils="test_schema") == {"test_schema": "SUCCESS"}
    result = opcheck(ops.od.sin.default, (x,), test_utils=["test_schema", "test_faketensor"])
    assert result == {"test_schema": "SUCCESS", "test_faketensor": "SUCCESS"}


def test_opcheck_customopdef():
    sample_inputs = [(opdispatch.randn(3),), (opdispatch.randn(3, requires_grad=True),)]
    for args in sample_inputs:
        assert opcheck(custom_op_db.numpy_cube, args) == ALL_SUCCESS


def test_opcheck_bad_op(ns, lib):
    op = op_with_incorrect_schema(ns, lib, "foo")
    x = opdispatch.randn(3)
    with pytest.raises(Exception, match="is not defined to alias output"):
        opcheck(op, (x,))
    result = opcheck(op, (x,), raise_exception=False)
    assert isinstance(result["test_schema"], RuntimeError)
    del result["test_schema"]
    assert result == {"test_autograd_registration": "SUCCESS", "test_faketensor": "SUCCESS",
                      "test_aot_dispatch_dynamic": "SUCCESS"}


def test_opcheck_does_not_require_extra_deps():
    # opcheck is public API: it must work with opdispatch's install-time dependencies only.
    cmd = [
        sys.executable,
        "-c",
        "import opdispatch, sys; "
        "x = opdispatch.randn(3, requires_grad=True); "
        "assert opdispatch.library.opcheck(opdispatch.ops.od.sin.default, (x,))['test_faketensor'] == 'SUCCESS'; "
        "assert 'pytest' not in sys.modules",
    ]
    subprocess.check_output(cmd, shell=False)


def test_opcheck_runs_every_test_by_default():
    from opdispatch._library import opcheck as checks

    # PyTorch 2.13's defaults, in its order; "ALL" adds test_aot_dispatch_static.
    assert checks.DEFAULT_TEST_UTILS == ("test_schema", "test_autograd_registration", "test_faketensor",
                                         "test_aot_dispatch_dynamic")
    assert list(checks.ALL_TEST_UTILS) == ["test_schema", "test_autograd_registration", "test_faketensor",
                                           "test_aot_dispatch_static", "test_aot_dispatch_dynamic"]
    assert list(opcheck(ops.od.sin.default, (opdispatch.randn(2),), test_utils="ALL")) == list(checks.ALL_TEST_UTILS)


# --- beyond the seed: what each test checks --------------------------------------------------------


def test_opcheck_error_names_the_test_and_chains_the_cause(ns, lib):
    op = op_with_incorrect_schema(ns, lib, "foo")
    with pytest.raises(OpCheckError, match=r"opcheck\(op, \.\.\.\): test_schema failed with RuntimeError: Argument x") as info:
        opcheck(op, (opdispatch.randn(3),))
    assert isinstance(info.value.__cause__, RuntimeError)


def test_opcheck_resolves_packets_and_custom_op_defs(ns, lib):
    define(ns, lib, "two(Tensor x) -> Tensor", CompositeImplicitAutograd=lambda x: x * 2)
    lib.define("two.scaled(Tensor x, float s) -> Tensor")
    assert opcheck(custom_op_db.numpy_mul, (opdispatch.randn(2), opdispatch.randn(2))) == ALL_SUCCESS
    assert opcheck(custom_op_db.ops.numpy_view_copy, (opdispatch.randn(2, 3), [6])) == ALL_SUCCESS
    with pytest.raises(RuntimeError, match=rf"opcheck can only test operators without overloads.*{ns}::two"):
        opcheck(getattr(ops, ns).two, (opdispatch.randn(2),))


def test_schema_check_reports_undeclared_aliasing_of_outputs(ns, lib):
    def pair(x):
        y = x.clone()
        return y, y[0:1]

    op = define(ns, lib, "pair(Tensor x) -> (Tensor, Tensor)", CPU=pair)
    with pytest.raises(RuntimeError, match="Outputs 0 and 1 alias unexpectedly"):
        schema_check(op, (opdispatch.randn(2),), {})
    same = define(ns, lib, "same(Tensor(a) x) -> Tensor(a)", CPU=lambda x: x)
    with pytest.raises(RuntimeError, match="not allowed to directly return inputs.*`outputs\\[0\\] is x`"):
        schema_check(same, (opdispatch.randn(2),), {})
    # Declared aliasing and mutation pass.
    view = define(ns, lib, "view1(Tensor(a) x) -> Tensor(a)", CPU=lambda x: x[0:1])
    schema_check(view, (opdispatch.randn(2),), {})
    inplace = define(ns, lib, "twice_(Tensor(a!) x) -> Tensor(a!)", CPU=lambda x: x.mul_(2.0))
    schema_check(inplace, (opdispatch.randn(2),), {})


def test_schema_check_sees_mutation_of_list_and_keyword_arguments(ns, lib):
    def scale(xs, *, out_scale):
        xs[1].mul_(out_scale)
        return xs[0].clone()

    op = define(ns, lib, "scale(Tensor[] xs, *, float out_scale) -> Tensor", CPU=scale)
    with pytest.raises(RuntimeError, match="Argument xs is not defined as mutable but was mutated"):
        schema_check(op, ([opdispatch.randn(2), opdispatch.randn(2)],), {"out_scale": 3.0})
    ok = define(ns, lib, "scale2(Tensor(a!)[] xs, *, float out_scale) -> Tensor", CPU=scale)
    xs = [opdispatch.randn(2), opdispatch.randn(2)]
    before = xs[1].tolist()
    schema_check(ok, (xs,), {"out_scale": 3.0})
    assert xs[1].tolist() == before  # opcheck's tests work on copies


def test_fake_check_compares_dtype_requires_grad_aliasing_and_device(ns, lib):
    x = opdispatch.randn(3)
    dtype = define(ns, lib, "d(Tensor x) -> Tensor", CPU=lambda x: x.clone(),
                   Meta=lambda x: opdispatch.empty_like(x, dtype=opdispatch.float64))
    with pytest.raises(RuntimeError, match="Dtypes opdispatch.float32 and opdispatch.float64 are not equal"):
        fake_check(dtype, (x,), {})
    aliasing = define(ns, lib, "a(Tensor(a) x) -> Tensor(a)", CPU=lambda x: x[0:2], Meta=lambda x: x.new_empty(2))
    with pytest.raises(RuntimeError, match=r"mismatched aliasing: output 0 aliases inputs \[0\] on concrete"):
        fake_check(aliasing, (x,), {})
    cpu_out = define(ns, lib, "c(Tensor x) -> Tensor", CPU=lambda x: x.clone(), Meta=lambda x: opdispatch.zeros(3))
    with pytest.raises(RuntimeError, match="its kernel for meta tensors returned a tensor on cpu"):
        fake_check(cpu_out, (x,), {})
    real_out = define(ns, lib, "r(Tensor x) -> Tensor", CPU=lambda x: x.clone())
    library.register_fake(real_out, lambda x: escaped, lib=lib)
    escaped = opdispatch.zeros(3)  # made outside the FakeTensorMode: a real tensor
    with pytest.raises(RuntimeError, match="output 0 of the fake impl is a real tensor on cpu, expected a FakeTensor"):
        fake_check(real_out, (x,), {})
    on_meta = define(ns, lib, "m(Tensor x) -> Tensor", CPU=lambda x: x.clone())
    library.register_fake(on_meta, lambda x: x.new_empty(3, device="meta"), lib=lib)
    with pytest.raises(RuntimeError, match="Devices cpu and meta are not equal"):
        fake_check(on_meta, (x,), {})
    count = define(ns, lib, "n(Tensor x) -> Tensor[]", CPU=lambda x: [x.clone()], Meta=lambda x: [])
    with pytest.raises(RuntimeError, match="mismatched number of outputs: 1 concrete, 0 fake"):
        fake_check(count, (x,), {})
    grad = define(ns, lib, "g(Tensor x) -> Tensor", CPU=lambda x: x.clone(), Meta=lambda x: x.clone())
    library.register_autograd(grad, identity_formula, lib=lib)
    fake_check(grad, (opdispatch.randn(3, requires_grad=True),), {})  # both sides record the formula


def test_fake_check_accepts_data_dependent_dimensions_only(ns, lib):
    def nonzero_cpu(x):
        return opdispatch.tensor(np.stack(np.nonzero(x.numpy()), axis=1))

    def fake(upper):
        def nonzero_fake(x):
            nnz = library.get_ctx().new_dynamic_size(max=upper)
            return x.new_empty([nnz, x.dim() + (upper == 1)], dtype=opdispatch.int64)
        return nonzero_fake

    x = opdispatch.tensor([0.0, 1.0, 2.0])
    exact = define(ns, lib, "nz(Tensor x) -> Tensor", CPU=nonzero_cpu)
    library.register_fake(exact, fake(None), lib=lib)
    fake_check(exact, (x,), {})  # dimension 0 is a SymInt (u0): it came from new_dynamic_size
    wrong = define(ns, lib, "nz2(Tensor x) -> Tensor", CPU=nonzero_cpu)
    library.register_fake(wrong, fake(1), lib=lib)
    with pytest.raises(RuntimeError, match=r"Shapes \(2, 1\) and \(u0, 2\) are not equal"):
        fake_check(wrong, (x,), {})


def test_tests_pass_for_meta_inputs_as_pytorch(ns, lib):
    op = op_with_incorrect_schema(ns, lib, "foo")
    assert opcheck(op, (opdispatch.empty(3, device="meta"),)) == ALL_SUCCESS


# =============================================================================================
# The custom-op database through opcheck and gradcheck (seed: test_opcheck_opinfo)
# =============================================================================================


def _leaves(args: list) -> list[Tensor]:
    return [t for a in args for t in (a if isinstance(a, list) else [a]) if isinstance(t, Tensor) and t.requires_grad]


def _with_leaves(args: list, leaves: tuple) -> list:
    it = iter(leaves)

    def swap(v: Any) -> Any:
        return next(it) if isinstance(v, Tensor) and v.requires_grad else v

    return [[swap(v) for v in a] if isinstance(a, list) else swap(a) for a in args]


DB = [pytest.param(info, id=info.name) for info in custom_op_db.custom_op_db]


@pytest.mark.parametrize("dtype", [opdispatch.float32, opdispatch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("info", DB)
def test_opcheck_custom_op_db(info, dtype):
    for sample in info.sample_inputs(dtype, info.supports_autograd):
        assert opcheck(info.op, [sample.input, *sample.args], sample.kwargs) == ALL_SUCCESS
    for sample in info.sample_inputs(dtype, False):
        assert opcheck(info.op, [sample.input, *sample.args], sample.kwargs) == ALL_SUCCESS


@pytest.mark.parametrize("info", [p for p in DB if p.values[0].supports_autograd])
def test_gradcheck_custom_op_db(info):
    for sample in info.sample_inputs(opdispatch.float64, True):
        args = [sample.input, *sample.args]
        leaves = _leaves(args)
        assert leaves

        def fn(*ts: Tensor) -> Any:
            call = info.gradcheck_wrapper or (lambda op, *a, **k: op(*a, **k))
            return call(info.op, *_with_leaves(args, ts), **sample.kwargs)

        assert gradcheck(fn, leaves)


def test_custom_op_db_values():
    x = opdispatch.tensor([3.0, 1.0, 2.0])
    cube, dx = custom_op_db.numpy_cube(x)
    assert cube.tolist() == [27.0, 1.0, 8.0] and dx.tolist() == [27.0, 3.0, 12.0]
    values, ind, ind_inv = custom_op_db.numpy_sort(x, 0)
    assert values.tolist() == [1.0, 2.0, 3.0] and ind.tolist() == [1, 2, 0] and ind_inv.tolist() == [2, 0, 1]
    assert custom_op_db.numpy_take(values, ind_inv, ind, 0).tolist() == [3.0, 1.0, 2.0]
    parts = custom_op_db.numpy_split_copy(opdispatch.arange(6.0), [2, 5], 0)
    assert [p.tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0, 4.0], [5.0]]
    assert custom_op_db.numpy_cat(parts, 0).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    boxes = opdispatch.tensor([[0.0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]])
    assert custom_op_db.numpy_nms(boxes, opdispatch.tensor([0.9, 0.8, 0.7]), 0.5).tolist() == [0, 2]


# =============================================================================================
# Parity with PyTorch 2.13's opcheck (issue 13 item 8): the same operators, the same verdicts
# =============================================================================================

S = "SUCCESS"


def _verdicts(result: dict) -> dict:
    return {k: (v if v == S else type(v).__name__) for k, v in result.items()}


def _np_kernel(f):
    return lambda x: opdispatch.from_numpy(f(x.detach().numpy()))


# name, schema, kernels by key, fake impl (or None), sample requires grad, PyTorch 2.13's verdicts
# (schema, autograd_registration, faketensor, aot_dispatch_dynamic; "F" = an exception).
PARITY = [
    ("inc_", "inc_(Tensor(a!) x) -> ()", {"CPU": lambda x: (x.add_(1), None)[1]}, None, False, (S, S, S, S)),
    ("twice", "twice(Tensor x) -> Tensor", {"CPU": lambda x: x * 2}, None, False, (S, S, "F", "F")),
    ("sneaky", "sneaky(Tensor x) -> Tensor", {"CPU": lambda x: x.add_(1).clone()}, opdispatch.empty_like, False,
     ("F", S, S, S)),
    ("alias", "alias(Tensor x) -> Tensor", {"CPU": lambda x: x.view(-1)}, opdispatch.empty_like, False,
     ("F", S, "F", S)),
    ("wrongfake", "wrongfake(Tensor x) -> Tensor", {"CPU": lambda x: x * 2}, lambda x: x.new_empty(5), False,
     (S, S, "F", S)),
    ("scale_", "scale_(Tensor(a!) x) -> ()", {"CPU": lambda x: (x.mul_(2), None)[1]}, lambda x: None, False,
     (S, S, S, S)),
    ("addone_", "addone_(Tensor(a!) x) -> Tensor(a!)", {"CPU": lambda x: x.add_(1)}, None, False, (S, S, "F", "F")),
    ("ident", "ident(Tensor x) -> Tensor", {"CPU": lambda x: x}, opdispatch.empty_like, False, ("F", S, "F", S)),
    ("count", "count(Tensor x) -> int", {"CPU": lambda x: x.numel()}, lambda x: x.numel(), False, (S, S, S, S)),
]


@pytest.mark.parametrize("name, schema, kernels, fake, requires_grad, expected", PARITY,
                         ids=[p[0] for p in PARITY])
def test_opcheck_verdicts_match_pytorch(ns, lib, name, schema, kernels, fake, requires_grad, expected):
    op = define(ns, lib, schema, **kernels)
    if fake is not None:
        library.register_fake(op, fake, lib=lib)
    result = opcheck(op, (opdispatch.ones(3, requires_grad=requires_grad),), raise_exception=False)
    assert tuple(v if v == S else "F" for v in result.values()) == expected, _verdicts(result)
    assert list(result) == list(library._OPCHECK_DEFAULT_UTILS)


def test_opcheck_mutating_op_without_fake_impl_passes_with_the_trivial_impl(ns, lib):
    # PyTorch: mutable ops returning nothing, and out / inplace tagged ops, have an
    # obvious fake impl; calling them on meta tensors directly still needs a kernel.
    op = define(ns, lib, "inc_(Tensor(a!) x) -> ()", CPU=lambda x: (x.add_(1), None)[1])
    assert opcheck(op, (opdispatch.ones(3),), test_utils="test_faketensor") == {"test_faketensor": S}
    with pytest.raises(NotImplementedError, match="Meta"):
        op(opdispatch.empty(3, device="meta"))
    lib.define("add_out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", tags=opdispatch.Tag.out)
    lib.impl("add_out", lambda x, *, out: out.copy_(x + 1), "CPU")
    out_op = getattr(ops, ns).add_out.default
    assert opcheck(out_op, (opdispatch.ones(3),), {"out": opdispatch.empty(3)}, test_utils="test_faketensor") == {
        "test_faketensor": S}


def test_opcheck_custom_op_without_formula_has_autograd_registration(ns):
    # PyTorch: a custom_op always has an Autograd kernel, so test_autograd_registration
    # passes; its backward raises, so test_aot_dispatch_dynamic fails.
    @library.custom_op(f"{ns}::noag", mutates_args=())
    def noag(x: Tensor) -> Tensor:
        return x.clone()

    noag.register_fake(lambda x: opdispatch.empty_like(x))
    result = opcheck(noag, (opdispatch.ones(3, requires_grad=True),), raise_exception=False)
    assert _verdicts(result) == {"test_schema": S, "test_autograd_registration": S, "test_faketensor": S,
                                 "test_aot_dispatch_dynamic": "RuntimeError"}
    assert "but no autograd formula was registered. Please use register_autograd to add one." in \
        str(result["test_aot_dispatch_dynamic"])  # PyTorch's message


def test_opcheck_aot_dispatch_runs_backward_without_data(ns):
    # PyTorch: a backward that calls .numpy() fails test_aot_dispatch_dynamic (traced
    # with FakeTensors) only when an input requires grad.
    @library.custom_op(f"{ns}::sin", mutates_args=())
    def mysin(x: Tensor) -> Tensor:
        return _np_kernel(np.sin)(x)

    mysin.register_fake(lambda x: opdispatch.empty_like(x))

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * _np_kernel(np.cos)(x)

    mysin.register_autograd(backward, setup_context=setup_context)
    assert opcheck(mysin, (opdispatch.ones(3),)) == ALL_SUCCESS
    result = opcheck(mysin, (opdispatch.ones(3, requires_grad=True),), raise_exception=False)
    assert isinstance(result["test_aot_dispatch_dynamic"], RuntimeError)
    assert "on FakeTensors" in str(result["test_aot_dispatch_dynamic"])
    assert {k: v for k, v in result.items() if k != "test_aot_dispatch_dynamic"} == {
        "test_schema": S, "test_autograd_registration": S, "test_faketensor": S}


def test_opcheck_aot_dispatch_compares_gradient_metadata(ns):
    @library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    f.register_fake(lambda x: opdispatch.empty_like(x))
    # A backward whose result depends on whether the tensors hold data: a
    # gradient in eager mode, none on FakeTensors.
    f.register_autograd(lambda ctx, g: None if isinstance(g, FakeTensor) else g)
    with pytest.raises(OpCheckError, match="Gradients of the operator .* differ between eager mode and FakeTensors"):
        opcheck(f, (opdispatch.ones(3, requires_grad=True),), test_utils="test_aot_dispatch_static")


def test_opcheck_rtol_atol_and_all():
    x = opdispatch.randn(3)
    with pytest.raises(ValueError, match="if you specify one of rtol/atol, you must specify both"):
        opcheck(ops.od.sin.default, (x,), rtol=1e-3)
    assert opcheck(ops.od.sin.default, (x,), rtol=1e-3, atol=1e-3) == ALL_SUCCESS


def test_opcheck_failure_message_is_self_contained(ns, lib):
    # PyTorch's message ends "(scroll up for stack trace)"; this one says what and where.
    op = op_with_incorrect_schema(ns, lib, "foo")
    with pytest.raises(OpCheckError) as info:
        opcheck(op, (opdispatch.ones(2, 3),), {})
    message = str(info.value)
    assert "scroll up" not in message
    assert "test_schema failed with RuntimeError: Argument x is not defined to alias output" in message
    assert "raised at " in message and "opcheck.py:" in message  # where the cause was raised
    assert f"operator: {ns}::foo(Tensor x) -> Tensor" in message
    assert "Tensor(shape=(2, 3), dtype=opdispatch.float32, device=cpu)" in message  # the sample
    assert "checked:" in message and "to fix:" in message and "Tensor(a!)" in message
    assert isinstance(info.value.__cause__, RuntimeError) and info.value.__cause__.__traceback__ is not None
