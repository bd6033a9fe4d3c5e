"""custom_op and CustomOpDef, register_kernel / register_fake / impl_abstract
/ register_autograd, infer_schema, get_ctx, and the legacy
opdispatch._custom_ops API — PyTorch's test/test_custom_ops.py (seed 003)
classes TestCustomOpAPI, TestCustomOp and TestTypeConversion, rewritten for
opdispatch (TestCustomOpTesting, MiniOpTest and the opcheck tests are in
tests/test_opcheck.py). The names "_torch_testing" and "_test_custom_op" of
the seed become each test's own namespace (the `ns` fixture). Extra tests (not in the seed) follow each part.

This file does not use ``from __future__ import annotations``: several tests
annotate prototype functions with local variables, which infer_schema must
see as objects.

Seed tests not ported, and why:
  TestCustomOpAPI
    test_compile, and the torch.compile part of test_fake: need torch.compile.
    test_supports_tensorlist: tests torch.autograd.Function with
      supports_tensorlist; opdispatch has no autograd.Function (formulas are
      registered per operator; their Tensor[] handling is tested in
      tests/test_autograd.py and below).
  TestCustomOp
    test_functionalize_error: needs torch.compile / functionalization.
    test_impl_multiple: needs CUDA memory (its kernel computes on cuda).
    test_symints: needs symbolic input sizes (make_fx tracing_mode="symbolic",
      aten.sym_size nodes for the inputs' sizes); opdispatch's symbols are
      only the data-dependent sizes of new_dynamic_size().
    test_data_dependent_compile, test_data_dependent_nms_dynamic_compile:
      need torch.compile.
    test_builtin_aten_ops_are_pt2_compliant, test_builtin_torchscript_ops,
      test_autogen_aten_ops_are_pt2_compliant: about aten's generated tags;
      opdispatch has no aten (tags are tested in tests/test_library.py).
    test_autograd_function_backed_op: needs C++ torch::autograd::Function.
    test_define_with_tags, test_define_bad_schema, test_define_and_impl,
      test_define_validation, test_legacy_define, test_impl_function,
      test_legacy_impl, test_defined_in_python, test_impl_device_cpu,
      test_impl_device_function, test_impl_device_invalid: ported earlier to
      tests/test_library.py (same names); test_impl_device_cuda needs CUDA
      memory.
    test_resolve_packet: ported earlier to tests/test_ops.py (_jit_resolve_packet).
    The torchgen FunctionSchema half of test_is_functional_schema: torchgen
      is PyTorch's code generator (schema strings and parse_schema objects
      are tested).
  Ported with a deviation (explained in the test):
    test_split_device, test_multi_types, test_impl_separate: "cuda" tensors
      carry no data in opdispatch, so their kernels only record the device.
    test_invalid_schemas: a schema that does not parse raises ValueError (with
      the parser's position), not torchgen's AssertionError.
    test_basic_make_fx, test_data_dependent_basic, test_new_data_dependent_symint:
      make_fx with tracing_mode="fake" for the seed's "symbolic" (input
      sizes stay concrete; data-dependent sizes are SymInts either way).
    test_new_data_dependent_symint, test_meta_for_data_dependent_shape_operation:
      on meta tensors (outside FakeTensorMode) new_dynamic_size() returns a
      concrete size (max if given, else min) instead of PyTorch's error.
    test_incorrect_schema_types: opdispatch's parser words its errors
      differently (and raises ValueError).
    test_infer_schema_supported, test_backward_grads_are_tensor_or_none: the
      seed text lost a detail PyTorch's test has (noted in the test).
"""
import collections
import collections.abc
import itertools
import typing
from typing import Callable, List, Optional, Sequence, Tuple, Union

import numpy as np
import pytest

import opdispatch
import opdispatch._custom_ops as custom_ops
from opdispatch import Tensor, _C, library, ops
from opdispatch._library import custom_ops as custom_ops_impl
from opdispatch._library import fake_impl, legacy_custom_op, utils
from opdispatch._library import infer_schema as infer_schema_module
from opdispatch._library.infer_schema import infer_schema, tuple_to_list
from opdispatch._library.legacy_custom_op import CustomOp
from opdispatch.library import Library, _scoped_library, custom_op, get_ctx
from opdispatch.testing import assert_close
from opdispatch.tracing import make_fx
from opdispatch.types import Number

import custom_op_db


def randn(*shape, requires_grad=False, device="cpu") -> Tensor:
    return opdispatch.randn(*shape, requires_grad=requires_grad).to(device)


def numpy_sin(x: Tensor) -> Tensor:
    return opdispatch.from_numpy(np.sin(x.numpy(force=True)))


def assert_equal(actual, expected) -> None:
    """Equality of results: tensors by value (and dtype), sequences
    elementwise whatever their type (a kernel receives a list for a tuple)."""
    if isinstance(expected, Tensor):
        assert isinstance(actual, Tensor)
        assert_close(actual, expected, rtol=0, atol=0)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)) and len(actual) == len(expected), (actual, expected)
        for a, e in zip(actual, expected):
            assert_equal(a, e)
    else:
        assert actual == expected and type(actual) is type(expected), (actual, expected)


def get_op(qualname: str):
    return legacy_custom_op.get_op(qualname)


# =============================================================================================
# TestCustomOpAPI: custom_op and the register_* functions
# =============================================================================================


def make_add(ns, **kwargs):
    @custom_op(f"{ns}::add", mutates_args=(), **kwargs)
    def add(x: Tensor, y: float) -> Tensor:
        return opdispatch.from_numpy(x.numpy(force=True) + y)

    return add


def test_basic(ns):
    add = make_add(ns)
    x = randn(3)
    assert_close(add(x, 3.14), x + 3.14)

    cpu_called = False

    @add.register_kernel("cpu")
    def _(x, y):
        nonlocal cpu_called
        cpu_called = True
        return opdispatch.from_numpy(x.numpy() + y)

    assert_close(add(x, 3.14), x + 3.14)
    assert cpu_called


def test_no_grad_skips_autograd(ns):
    add = make_add(ns)
    called = 0

    def setup_context(ctx, inputs, output):
        nonlocal called
        called += 1

    def backward(ctx, grad):
        raise AssertionError("should not be reached")

    add.register_autograd(backward, setup_context=setup_context)
    x = randn(3, requires_grad=True)
    with opdispatch.autograd.no_grad():
        y = add(x, 2.0)
    assert called == 0
    assert_close(y, x.detach() + 2.0)

    x.requires_grad_(False)
    y = add(x, 2.0)
    assert called == 0
    assert_close(y, x + 2.0)

    x = randn(3, requires_grad=True)
    y = add(x, 2.0)
    assert called == 1
    assert_close(y.detach(), x.detach() + 2.0)


def test_manual_schema(ns):
    @custom_op(f"{ns}::add", mutates_args=(), schema="(Tensor x, float y) -> Tensor")
    def add(x, y):
        return opdispatch.from_numpy(x.numpy(force=True) + y)

    x = randn(3)
    assert_close(add(x, 3.14), x + 3.14)

    @custom_op(f"{ns}::sin_", mutates_args=["x"], schema="(Tensor(a!) x) -> ()")
    def sin_(x):
        x_np = x.numpy()
        np.sin(x_np, out=x_np)

    x = randn(3)
    expected = x.sin()
    sin_(x)
    assert_close(x, expected)


def test_kwarg_only_tensors(ns):
    with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
        @custom_op(f"{ns}::foo", mutates_args=())
        def foo(x: Tensor, *, y: int, z: Tensor) -> Tensor:
            pass

    with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
        @custom_op(f"{ns}::foo", mutates_args=())
        def foo2(x: Tensor, *, y: int, z: Optional[Tensor]) -> Tensor:
            pass

    with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
        @custom_op(f"{ns}::foo", mutates_args=())
        def foo3(x: Tensor, *, y: int, z: List[Tensor]) -> Tensor:
            pass

    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("foo(Tensor x, *, Tensor y) -> Tensor")
        with pytest.raises(NotImplementedError, match="kwarg-only Tensor args"):
            library.register_autograd(f"{ns}::foo", lambda grad: grad,
                                      setup_context=lambda ctx, inputs, keyword_only_inputs, output: None)


def test_register_autograd_kwargonly_low_level(ns):
    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("foo(Tensor x, *, float y) -> Tensor")
        called = False

        def foo_impl(x, *, y):
            return x * y

        lib.impl("foo", foo_impl, "CPU")

        def backward(ctx, grad):
            nonlocal called
            called = True
            return grad * ctx.y

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            assert tuple(keyword_only_inputs.keys()) == ("y",)
            ctx.y = keyword_only_inputs["y"]

        library.register_autograd(f"{ns}::foo", backward, setup_context=setup_context, lib=lib)
        x = randn(3, requires_grad=True)
        getattr(ops, ns).foo(x, y=3.14).sum().backward()
        assert called
        assert_close(x.grad, opdispatch.tensor([3.14, 3.14, 3.14]))


def test_register_autograd_defaults(ns):
    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("foo(Tensor w, int x = 2, *, int y = 3, int z) -> Tensor")

        def foo_impl(w, x=2, *, y=3, z):
            return w * x * y * z

        lib.impl("foo", foo_impl, "CPU")
        called = False

        def backward(ctx, grad):
            nonlocal called
            called = True
            return grad * ctx.c

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            assert len(inputs) == 2
            assert inputs[1] == 2
            assert keyword_only_inputs == {"y": 3, "z": 42}
            ctx.c = keyword_only_inputs["y"] * keyword_only_inputs["z"] * inputs[1]

        library.register_autograd(f"{ns}::foo", backward, setup_context=setup_context, lib=lib)
        w = randn(3, requires_grad=True)
        getattr(ops, ns).foo(w, z=42).sum().backward()
        assert called
        assert_close(w.grad, opdispatch.full([3], 2.0 * 3 * 42))


def test_manual_schema_error(ns):
    with pytest.raises(ValueError, match="the op mutates {'x'}"):
        @custom_op(f"{ns}::sin_", mutates_args=(), schema="(Tensor(a!) x) -> ()")
        def sin_(x):
            x_np = x.numpy()
            np.sin(x_np, out=x_np)


def test_default_values(ns):
    defaults = []

    @custom_op(f"{ns}::f", mutates_args=())
    def f(
        x: Tensor,
        a: Optional[int] = None,
        b: float = 3.14,
        c: bool = True,
        d: int = 3,
        e: str = "foo",
        f: opdispatch.dtype = opdispatch.float32,
        g: opdispatch.dtype = opdispatch.float64,
        h: opdispatch.dtype = opdispatch.int32,
    ) -> Tensor:
        defaults.extend([a, b, c, d, e, f, g, h])
        return x.clone()

    f(randn(3))
    assert defaults == [None, 3.14, True, 3, "foo", opdispatch.float32, opdispatch.float64, opdispatch.int32]
    assert str(f._schema).endswith('ScalarType f=6, ScalarType g=7, ScalarType h=3) -> Tensor')


def test_mutated_error(ns):
    with pytest.raises(ValueError, match=r".*{'y'} in mutates_args were not found"):
        @custom_op(f"{ns}::numpy_sin_inplace", mutates_args={"y"}, device_types="cpu")
        def numpy_sin_inplace(x: Tensor) -> None:
            x_np = x.numpy()
            np.sin(x_np, out=x_np)


def test_mutated(ns):
    @custom_op(f"{ns}::numpy_sin_inplace", mutates_args={"x"}, device_types="cpu")
    def numpy_sin_inplace(x: Tensor) -> None:
        x_np = x.numpy()
        np.sin(x_np, out=x_np)

    x = randn(3)
    version = x._version
    expected = x.sin()
    numpy_sin_inplace(x)
    assert_close(x, expected)
    assert x._version > version

    @custom_op(f"{ns}::f", mutates_args={"y", "z", "w"})
    def f(x: Tensor, y: Optional[Tensor], z: List[Tensor], w: List[Optional[Tensor]]) -> None:
        return

    x, y = randn(3), randn(3)
    z = [randn(3), randn(3)]
    w = [randn(3), None, randn(3)]
    initial = [x._version, y._version, *[t._version for t in z], w[0]._version, w[2]._version]
    f(x, y, z, w)
    new = [x._version, y._version, *[t._version for t in z], w[0]._version, w[2]._version]
    assert initial[0] == new[0]
    for prev, after in zip(initial[1:], new[1:]):
        assert after > prev


@pytest.mark.parametrize("idx", [0, 1, 2, 3, 4, 5])
def test_library_register_fake_source(idx):
    qualname = f"{custom_op_db.NS}::source{idx}"
    source = fake_impl.find(qualname).kernel.source
    assert source is not None
    assert "custom_op_db.py" in source


def test_library_register_fake(ns):
    for mode in ["function", "qualname", "opoverload"]:
        add = make_add(ns)
        called = False
        if mode == "function":
            dec = library.register_fake(add)
        elif mode == "qualname":
            dec = library.register_fake(f"{ns}::add")
        else:
            dec = library.register_fake(getattr(ops, ns).add.default)
        assert dec is not None

        @dec
        def _(x, y):
            nonlocal called
            called = True
            return opdispatch.empty_like(x)

        x = randn(3, device="meta")
        z = add(x, 3.14)
        assert z.shape == x.shape and z.is_meta
        assert called


def test_library_register_kernel(ns):
    modes = ["function", "qualname", "opoverload"]
    calls = ["decorator", "function"]
    device_types_options = ["cpu", None]

    for mode, call, device_types in itertools.product(modes, calls, device_types_options):
        add = make_add(ns, device_types="cuda")
        op = {"function": add, "qualname": f"{ns}::add"}.get(mode) or getattr(ops, ns).add.default
        called = False

        def add_cpu(x, y):
            nonlocal called
            called = True
            return opdispatch.from_numpy(x.numpy() + y)

        if call == "decorator":
            library.register_kernel(op, device_types)(add_cpu)
        else:
            library.register_kernel(op, device_types, add_cpu)

        x = randn(3)
        assert_close(add(x, 3.14), x + 3.14)
        assert called


def test_library_register_kernel_low_level(ns):
    modes = ["qualname", "opoverload"]
    calls = ["decorator", "function"]
    device_types_options = [("cpu", "cuda"), "cpu", None]

    for mode, call, device_types in itertools.product(modes, calls, device_types_options):
        with _scoped_library(ns, "FRAGMENT") as lib:
            lib.define("add9(Tensor x, float y) -> Tensor")
            op = f"{ns}::add9" if mode == "qualname" else getattr(ops, ns).add9.default
            called = False

            def add_cpu(x, y):
                nonlocal called
                called = True
                return opdispatch.from_numpy(x.numpy() + y)

            if call == "decorator":
                library.register_kernel(op, device_types, lib=lib)(add_cpu)
            else:
                library.register_kernel(op, device_types, add_cpu, lib=lib)

            x = randn(3)
            assert_close(getattr(ops, ns).add9.default(x, 3.14), x + 3.14)
            assert called


def setup_context_save_x(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def test_library_register_autograd(ns):
    for mode in ["function", "qualname", "opoverload"]:
        @custom_op(f"{ns}::numpy_sin", mutates_args=())
        def sin_op(x: Tensor) -> Tensor:
            return numpy_sin(x)

        called = False

        def backward(ctx, grad):
            nonlocal called
            called = True
            (x,) = ctx.saved_tensors
            return grad * x.cos()

        op = {"function": sin_op, "qualname": f"{ns}::numpy_sin"}.get(mode) or getattr(ops, ns).numpy_sin.default
        library.register_autograd(op, backward, setup_context=setup_context_save_x)

        x = randn(3, requires_grad=True)
        y = sin_op(x)
        (grad_x,) = opdispatch.autograd.grad(y, x, opdispatch.ones_like(y))
        assert called
        assert_close(grad_x, x.detach().cos())


def test_library_register_autograd_low_level(ns):
    for mode in ["qualname", "opoverload"]:
        with _scoped_library(ns, "FRAGMENT") as lib:
            lib.define("sin5(Tensor x) -> Tensor")
            called = False

            def backward(ctx, grad):
                nonlocal called
                called = True
                (x,) = ctx.saved_tensors
                return grad * x.cos()

            lib.impl("sin5", numpy_sin, "CPU")
            op = f"{ns}::sin5" if mode == "qualname" else getattr(ops, ns).sin5.default
            library.register_autograd(op, backward, setup_context=setup_context_save_x, lib=lib)

            x = randn(3, requires_grad=True)
            y = getattr(ops, ns).sin5(x)
            (grad_x,) = opdispatch.autograd.grad(y, x, opdispatch.ones_like(y))
            assert called
            assert_close(grad_x, x.detach().cos())


def test_fake(ns):
    add = make_add(ns)
    x = randn(3)
    assert_close(add(x, 3.14), x + 3.14)

    with pytest.raises(RuntimeError) as info:
        add(randn(3, device="meta"), 3.14)
    assert str(info.value).startswith(
        f"There was no fake impl registered for <CustomOpDef({ns}::add)>. A fake impl computes the operator's "
        f"output metadata on meta tensors")
    assert str(info.value).endswith("Please use `add.register_fake` to add a fake impl.")

    abstract_called = False

    @add.register_fake
    def _(x, y):
        nonlocal abstract_called
        abstract_called = True
        return opdispatch.empty_like(x)

    x = randn(3, device="meta")
    z = add(x, 3.14)
    assert z.shape == x.shape and abstract_called


def test_register_autograd_error_cases(ns):
    @custom_op(f"{ns}::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x.sin()

    x = randn(3, requires_grad=True)
    y = g(x)
    with pytest.raises(RuntimeError, match="no autograd formula"):
        y.sum().backward()


def test_replacement(ns):
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.sin()

    x = randn(3)
    assert_close(f(x), x.sin())

    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:  # noqa: F811
        return x.cos()

    assert_close(f(x), x.cos())
    assert_close(getattr(ops, ns).f(x), x.cos())


def test_overloading(ns):
    called_f = 0
    called_f1 = 0

    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        nonlocal called_f
        called_f += 1
        return x.clone()

    x = randn(2, 3)
    getattr(ops, ns).f(x)
    assert called_f == 1

    @custom_op(f"{ns}::f.overload", mutates_args=())
    def f1(x: Tensor, y: Tensor) -> Tensor:
        nonlocal called_f1
        called_f1 += 1
        return x.clone()

    getattr(ops, ns).f(x, x)
    assert called_f1 == 1


def test_disallows_output_aliasing(ns):
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.view(-1)

    x = randn(3)
    with pytest.raises(RuntimeError, match="may not alias"):
        f(x)

    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:  # noqa: F811
        return x

    x = randn(3)
    with pytest.raises(RuntimeError, match="may not alias"):
        f(x)

    @custom_op(f"{ns}::f", mutates_args={"x"}, device_types="cpu")
    def numpy_sin_inplace(x: Tensor) -> Tensor:
        x_np = x.numpy()
        np.sin(x_np, out=x_np)
        return x

    x = randn(3)
    with pytest.raises(RuntimeError, match="may not alias"):
        numpy_sin_inplace(x)


# --- beyond the seed: custom_op ---------------------------------------------------------------------


def cuda_like(x: Tensor) -> Tensor:
    """A tensor with x's metadata on "cuda" (a device name without memory in opdispatch)."""
    return _C.empty_strided(tuple(x.shape), x.stride(), x.dtype, "cuda")


def test_split_device(ns):
    # Seed test_split_device with "cuda" tensors that carry no data: the kernels record the device.
    cpu_call_count = 0
    cuda_call_count = 0

    @custom_op(f"{ns}::f", mutates_args=(), device_types="cpu")
    def f(x: Tensor) -> Tensor:
        nonlocal cpu_call_count
        cpu_call_count += 1
        return numpy_sin(x)

    @f.register_kernel("cuda")
    def _(x):
        nonlocal cuda_call_count
        cuda_call_count += 1
        return cuda_like(x)

    x = randn(3)
    assert_close(f(x), x.sin())
    assert (cpu_call_count, cuda_call_count) == (1, 0)
    assert f(cuda_like(x)).device.type == "cuda"
    assert (cpu_call_count, cuda_call_count) == (1, 1)


def test_multi_types(ns):
    devices = []

    @custom_op(f"{ns}::f", mutates_args=(), device_types=("cpu", "cuda"))
    def f(x: Tensor) -> Tensor:
        devices.append(x.device.type)
        return x.clone() if x.device.type == "cpu" else cuda_like(x)

    x = randn(3)
    f(x)
    f(cuda_like(x))
    assert devices == ["cpu", "cuda"]
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CPU")
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CUDA")
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CompositeExplicitAutograd")


def test_register_kernel_replaces_and_validates_device_types(ns):
    @custom_op(f"{ns}::f", mutates_args=(), device_types="cpu")
    def f(x: Tensor) -> Tensor:
        return x + 1.0

    f.register_kernel("cpu", lambda x: x + 2.0)  # replaces the first
    assert f(opdispatch.zeros(1)).tolist() == [2.0]
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        f.register_kernel("tpu", lambda x: x)
    with pytest.raises(ValueError, match="the Meta kernel of a custom op is its fake impl"):
        f.register_kernel("meta", lambda x: x)

    @custom_op(f"{ns}::make", mutates_args=())
    def make(n: int) -> Tensor:
        return opdispatch.zeros(n)

    assert make(2).shape == (2,)  # no tensor arguments: CompositeExplicitAutograd serves the call
    with pytest.raises(ValueError, match=r"kernel for device type 'cpu' is never reached.*no Tensor arguments"):
        make.register_kernel("cpu", lambda n: opdispatch.ones(n))


def test_replaced_kernels_shadow_the_first_and_go_with_the_op(ns):
    # Note [custom_op call path]: one replacement library per key, reset on each replacement.
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x + 0.0

    slot = f"{ns}/f/CompositeExplicitAutograd"
    for i in range(1, 4):
        f.register_kernel(None, lambda x, i=i: x + float(i))
        assert f(opdispatch.zeros(1)).tolist() == [float(i)]
    assert list(f._registrations.replacements) == [slot]
    # The first kernel and the newest replacement: superseded ones are gone.
    assert _C._dispatch_dump(f"{ns}::f").count("CompositeExplicitAutograd[alias]") == 2
    assert slot in library._impls
    f._destroy()
    assert not f._registrations.replacements and slot not in library._impls
    assert fake_impl.find(f"{ns}::f") is None
    with pytest.raises(RuntimeError, match="does not exist: nothing defines or implements it"):
        _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::f", "CompositeExplicitAutograd")


def test_set_kernel_enabled(ns):
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return opdispatch.zeros(1)

    x = randn(1)
    assert f(x).tolist() == [0.0]

    @f.register_kernel("cpu")
    def _(x):
        return opdispatch.ones(1)

    assert f(x).tolist() == [1.0]
    with f.set_kernel_enabled("cpu", enabled=False):
        assert f(x).tolist() == [0.0]
        with pytest.warns(UserWarning, match="already disabled"):
            with f.set_kernel_enabled("cpu", enabled=False):
                assert f(x).tolist() == [0.0]
        assert f(x).tolist() == [0.0]
        with f.set_kernel_enabled("cpu"):
            assert f(x).tolist() == [1.0]
        assert f(x).tolist() == [0.0]
    assert f(x).tolist() == [1.0]
    with pytest.warns(UserWarning, match="already enabled"):
        with f.set_kernel_enabled("cpu", enabled=True):
            pass
    with pytest.warns(UserWarning, match="no kernel was registered for this device type"):
        with f.set_kernel_enabled("cuda", enabled=False):
            assert f(x).tolist() == [1.0]


def test_custom_op_machinery_is_imported_on_first_use():
    # `import opdispatch` imports opdispatch.library (for the built-in operators)
    # but not custom_op's modules; the names opdispatch.library exports from them still resolve.
    import subprocess
    import sys

    code = (
        "import sys, opdispatch, opdispatch.library as L; "
        "mods = ('custom_ops', 'infer_schema', 'fake_impl', 'opcheck'); "
        "assert not [m for m in mods if 'opdispatch._library.' + m in sys.modules], sys.modules.keys(); "
        "from opdispatch.library import custom_op, CustomOpDef, infer_schema; "
        "from opdispatch._library import custom_ops; "
        "assert custom_op is custom_ops.custom_op and CustomOpDef is custom_ops.CustomOpDef; "
        "assert L.infer_schema is infer_schema and 'custom_op' in vars(L)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    with pytest.raises(AttributeError, match="module 'opdispatch.library' has no attribute 'nope'"):
        library.nope  # noqa: B018


def test_custom_op_def_is_the_operator(ns):
    add = make_add(ns)
    assert isinstance(add, custom_ops_impl.CustomOpDef) and isinstance(add, _C._DispatchOperator)
    assert repr(add) == f"<CustomOpDef({ns}::add)>"
    assert add._opoverload is getattr(ops, ns).add.default and add._qualname == f"{ns}::add"
    assert str(add._schema) == f"{ns}::add(Tensor x, float y) -> Tensor"
    assert add._opoverload._defined_in_python
    assert opdispatch.Tag.pt2_compliant_tag in add._opoverload.tags
    x = randn(2)
    assert_close(add(x=x, y=1.0), x + 1.0)  # keywords take the boxed path
    assert_close(add.redispatch(_C.DispatchKeySet(_C.DispatchKey.CPU), x, 1.0), x + 1.0)
    with pytest.raises(TypeError, match=rf"{ns}::add\(\): argument 'y' \(position 2\) must be float, not str"):
        add(x, "one")
    # The user's function is itself the kernel (registered from this file); see Note [custom_op call path].
    assert f"CompositeExplicitAutograd[alias]: registered at {__file__}" in _C._dispatch_dump(f"{ns}::add")


def test_outputs_may_not_alias_each_other_or_list_inputs(ns):
    @custom_op(f"{ns}::pair", mutates_args=())
    def pair(x: Tensor) -> Tuple[Tensor, Tensor]:
        y = x.clone()
        return y, y

    with pytest.raises(RuntimeError, match="return 1 of the Python kernel .* is the same tensor as return 0"):
        pair(randn(2))

    @custom_op(f"{ns}::first", mutates_args=())
    def first(xs: List[Tensor]) -> Tensor:
        return xs[0]

    with pytest.raises(RuntimeError, match="return 0 .* is the same tensor as argument 'xs'.*may not alias"):
        first([randn(1), randn(1)])

    @custom_op(f"{ns}::view_op", mutates_args=(), schema="(Tensor(a) x) -> Tensor(a)")
    def view_op(x):
        return x[0:1]

    x = randn(2)
    assert view_op(x)._shares_memory(x)  # a schema that declares the alias allows it


def test_mutated_unknown_marks_every_tensor_argument(ns):
    @custom_op(f"{ns}::fill_", mutates_args="unknown")
    def fill_(x: Tensor, ys: List[Tensor], value: float) -> None:
        x.numpy()[:] = value

    assert str(fill_._schema) == f"{ns}::fill_(Tensor(a0!) x, Tensor(a1!)[] ys, float value) -> ()"
    x, y = randn(2), randn(2)
    fill_(x, [y], 2.0)
    assert x.tolist() == [2.0, 2.0] and x._version == 1 and y._version == 1
    # A mutating operator that returns nothing has a trivial fake impl.
    meta = randn(2, device="meta")
    assert fill_(meta, [], 1.0) is None and meta._version == 1
    with pytest.raises(ValueError, match="mutates_args must either be a sequence .* or the string 'unknown'"):
        custom_op(f"{ns}::g", mutates_args="x")(lambda x: None)


def test_register_autograd_refuses_non_functional_operators(ns):
    @custom_op(f"{ns}::sin_", mutates_args={"x"})
    def sin_(x: Tensor) -> None:
        np.sin(x.numpy(), out=x.numpy())

    with pytest.raises(RuntimeError, match=rf"Cannot register autograd formula for non-functional operator "
                                           rf"<CustomOpDef\({ns}::sin_\)>"):
        sin_.register_autograd(lambda ctx, g: g)
    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("view(Tensor(a) x) -> Tensor(a)")
        lib.define("nothing(Tensor x) -> ()")
        for name in ("view", "nothing"):
            with pytest.raises(RuntimeError, match=f"non-functional operator {ns}::{name}"):
                library.register_autograd(f"{ns}::{name}", lambda ctx, g: g, lib=lib)


def test_register_autograd_replaces_a_custom_ops_formula(ns):
    @custom_op(f"{ns}::double", mutates_args=())
    def double(x: Tensor) -> Tensor:
        return x * 2

    double.register_autograd(lambda ctx, g: g * 3)  # wrong
    double.register_autograd(lambda ctx, g: g * 2)
    x = randn(2, requires_grad=True)
    double(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_register_autograd_on_an_extension_operator_and_define_made_twice(ns):
    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("ident(Tensor x) -> Tensor")
        lib.impl("ident", lambda x: x.clone(), "CPU")
        library.register_autograd(f"{ns}::ident", lambda ctx, g: g, lib=lib)
        with pytest.raises(RuntimeError, match=r"already a kernel registered from python .* Autograd dispatch key"):
            library.register_autograd(f"{ns}::ident", lambda ctx, g: g, lib=lib)
    with pytest.raises(ValueError, match=f"operator {ns}::missing is not defined"):
        library.register_autograd(f"{ns}::missing", lambda ctx, g: g)
    with pytest.raises(ValueError, match=r"register_autograd\(op\): got unexpected type for op: int"):
        library.register_autograd(3, lambda ctx, g: g)


def test_register_fake_errors(ns):
    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        with pytest.raises(ValueError, match=f"operator {ns}::bar is not defined"):
            library.register_fake(f"{ns}::bar", lambda x: x, lib=lib)
        with pytest.raises(ValueError, match=r"register_fake\(op\): got unexpected type for op: float"):
            library.register_fake(1.5)
        handle_lib = Library(ns, "FRAGMENT")
        library.register_fake(f"{ns}::foo", lambda x: x.clone(), lib=handle_lib)
        assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "Meta")
        handle_lib._destroy()  # the fake impl goes with its library
        assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "Meta")
        assert fake_impl.find(f"{ns}::foo") is None
        library.register_fake(f"{ns}::foo", lambda x: x.clone(), lib=lib)  # and can be registered again
        assert getattr(ops, ns).foo(randn(2, device="meta")).is_meta


def test_get_ctx_outside_a_fake_impl_is_none():
    # PyTorch 2.13: torch.library.get_ctx() and torch._custom_ops.get_ctx() are None outside a fake impl.
    assert get_ctx() is None
    assert opdispatch._custom_ops.get_ctx() is None


def test_new_dynamic_size(ns):
    sizes = []

    @custom_op(f"{ns}::nonzero", mutates_args=())
    def nonzero(x: Tensor) -> Tensor:
        return opdispatch.tensor(np.stack(np.nonzero(x.numpy()), axis=1))

    @nonzero.register_fake
    def _(x):
        ctx = get_ctx()
        for kwargs in ({"min": -1}, {"min": 3, "max": 2}, {"min": 1.5}, {"max": True}):
            with pytest.raises(ValueError):
                ctx.new_dynamic_size(**kwargs)
        sizes.extend([ctx.new_dynamic_size(), ctx.new_dynamic_size(min=2), ctx.new_dynamic_size(min=1, max=7)])
        return x.new_empty([sizes[-1], x.dim()], dtype=opdispatch.int64)

    out = nonzero(randn(4, 5, device="meta"))
    assert sizes == [0, 2, 7] and out.shape == (7, 2) and out.dtype == opdispatch.int64
    assert nonzero(opdispatch.tensor([0.0, 3.0, 0.0, 1.0])).tolist() == [[1], [3]]


# =============================================================================================
# TestCustomOp: the legacy API (opdispatch._custom_ops) and schema inference
# =============================================================================================


def test_invalid_schemas(ns):
    # PyTorch raises torchgen's AssertionError; the parser's ValueError gives the position.
    with pytest.raises(ValueError, match=r"Invalid function schema: foo\("):
        custom_ops.custom_op(f"{ns}::foo", "(")


def test_invalid_qualname(ns):
    with pytest.raises(ValueError, match="overload"):
        custom_ops.custom_op(f"{ns}::foo.Tensor", "() -> ()")


def test_name_must_match(ns):
    with pytest.raises(ValueError, match="to have name"):
        @custom_ops.custom_op(f"{ns}::foo")
        def baz(x: Tensor) -> Tensor:
            raise NotImplementedError


def test_unsupported_schemas(ns):
    def foo(x):
        raise NotImplementedError

    with pytest.raises(ValueError, match="only supports functional"):
        custom_ops.custom_op(f"{ns}::foo", "(Tensor(a!) x) -> Tensor(a)")(foo)
    with pytest.raises(ValueError, match="only supports functional"):
        custom_ops.custom_op(f"{ns}::foo", "(Tensor(a) x) -> Tensor(a)")(foo)
    with pytest.raises(ValueError, match="only supports functional"):
        custom_ops.custom_op(f"{ns}::foo", "(Tensor x) -> ()")(foo)
    with pytest.raises(ValueError, match="self"):
        custom_ops.custom_op(f"{ns}::foo", "(Tensor self) -> ()")(foo)
    with pytest.raises(ValueError, match="arguments named 'self'"):
        custom_ops.custom_op(f"{ns}::foo", "(Tensor self) -> Tensor")


def test_schema_matches_signature(ns):
    legacy = legacy_custom_op.custom_op
    with pytest.raises(ValueError, match="signature to match"):
        @legacy(f"{ns}::blah", "(Tensor y) -> Tensor")
        def blah(x):
            pass

    with pytest.raises(ValueError, match="signature to match"):
        @legacy(f"{ns}::blah2", "(Tensor x, *, Tensor y) -> Tensor")
        def blah2(x, y):
            pass

    with pytest.raises(ValueError, match="signature to match"):
        @legacy(f"{ns}::blah3", "(Tensor x, *, Tensor w, Tensor z) -> Tensor")
        def blah3(x, *, y, z):
            pass

    with pytest.raises(ValueError, match="signature to match"):
        @legacy(f"{ns}::blah4", "(Tensor x, *, Tensor z, Tensor y) -> Tensor")
        def blah4(x, *, y, z):
            pass

    with pytest.raises(ValueError, match="not supported"):
        @legacy(f"{ns}::blah5", "(Tensor x) -> Tensor")
        def blah5(*args):
            pass

    with pytest.raises(ValueError, match="not supported"):
        @legacy(f"{ns}::blah6", "(*, Tensor z, Tensor y) -> Tensor")
        def blah6(**kwargs):
            pass

    with pytest.raises(ValueError, match="default arguments"):
        @legacy(f"{ns}::blah7", "(Tensor x, *, Tensor y) -> Tensor")
        def blah7(x=1, *, y):
            pass

    with pytest.raises(ValueError, match="default arguments"):
        @legacy(f"{ns}::blah8", "(Tensor x, *, Tensor y) -> Tensor")
        def blah8(x, *, y=1):
            pass

    with pytest.raises(ValueError, match="no type annotations"):
        @legacy(f"{ns}::blah10", "(Tensor x) -> Tensor")
        def blah10(x: Tensor):
            pass

    # kwarg-only arguments work
    @legacy(f"{ns}::blah9", "(Tensor x, *, Tensor y) -> Tensor")
    def blah9(x, *, y):
        pass

    assert isinstance(blah9, CustomOp) and blah9.__name__ == "blah9"


def test_infer_schema_supported():
    def a(x: Tensor) -> Tensor:
        return opdispatch.empty([])

    assert infer_schema(a, mutates_args=()) == "(Tensor x) -> Tensor"

    def kwonly1(x: Tensor, *, y: int, z: float) -> Tensor:
        return opdispatch.empty([])

    assert infer_schema(kwonly1, mutates_args=()) == "(Tensor x, *, SymInt y, float z) -> Tensor"

    def kwonly2(*, y: Tensor) -> Tensor:
        return opdispatch.empty([])

    assert infer_schema(kwonly2, mutates_args=()) == "(*, Tensor y) -> Tensor"

    def b(x: Tensor, y: int, z: bool, a: float, b: opdispatch.dtype, c: opdispatch.device, d: Number
          ) -> Tuple[Tensor, int, float, bool]:
        return opdispatch.empty([]), 1, 0.1, True

    assert infer_schema(b, mutates_args=()) == (
        "(Tensor x, SymInt y, bool z, float a, ScalarType b, Device c, Scalar d) -> (Tensor, SymInt, float, bool)")

    def c(x: Tensor, y: Sequence[Tensor], z: Optional[Tensor], w: Sequence[Optional[Tensor]]) -> List[Tensor]:
        return [opdispatch.empty([])]

    assert infer_schema(c, mutates_args=()) == "(Tensor x, Tensor[] y, Tensor? z, Tensor?[] w) -> Tensor[]"

    def d(x: Tensor) -> Tuple[List[Tensor], Tensor]:
        return [opdispatch.empty([])], opdispatch.empty([])

    assert infer_schema(d, mutates_args=()) == "(Tensor x) -> (Tensor[], Tensor)"

    def e() -> Tensor:
        return opdispatch.empty([])

    assert infer_schema(e, mutates_args=()) == "() -> Tensor"

    def f(x: Tensor) -> None:
        pass

    assert infer_schema(f, mutates_args=()) == "(Tensor x) -> ()"

    def g(x: Tensor, y: List[Tensor], z: List[Tensor], w: List[Optional[Tensor]]) -> None:
        pass

    assert infer_schema(g, mutates_args=()) == "(Tensor x, Tensor[] y, Tensor[] z, Tensor?[] w) -> ()"
    # (The seed's expected string drops "Tensor[] y", a slip; PyTorch returns it.)
    assert infer_schema(g, mutates_args={"x", "w", "z"}) == (
        "(Tensor(a0!) x, Tensor[] y, Tensor(a2!)[] z, Tensor(a3!)?[] w) -> ()")


def test_infer_schema_beyond_the_seed():
    def pep604(x: Tensor | None, y: list[int] | None, z: Sequence[float], n: Optional[Number] = None) -> int:
        return 0

    assert infer_schema(pep604, mutates_args=(), op_name="f") == (
        "f(Tensor? x, SymInt[]? y, float[] z, Scalar? n=None) -> SymInt")

    def defaults(x: Tensor, s: str = "mean", d: opdispatch.device = opdispatch.device("cpu"),  # noqa: B008
                 t: opdispatch.dtype = opdispatch.int64, b: bool = False, f: float = -0.5) -> list[Tensor]:
        return []

    assert infer_schema(defaults, mutates_args=()) == (
        '(Tensor x, str s="mean", Device d="cpu", ScalarType t=int64, bool b=False, float f=-0.5) -> Tensor[]')

    def bad_default(x: Tensor, n: List[int] = [1]) -> Tensor:  # noqa: B006
        return x

    with pytest.raises(ValueError, match=r"Parameter n has an unsupported default value \[1\]"):
        infer_schema(bad_default, mutates_args=())

    def positional_only(x: Tensor, /) -> Tensor:
        return x

    with pytest.raises(ValueError, match="positional-only"):
        infer_schema(positional_only, mutates_args=())

    def no_return(x: Tensor):
        return x

    with pytest.raises(ValueError, match="return type must have a type annotation"):
        infer_schema(no_return, mutates_args=())


def test_infer_schema_reads_what_inspect_signature_reads():
    # Plain functions are read from their code objects; wrappers, __signature__
    # and other callables through inspect.signature: both give the same schema.
    import functools
    import inspect

    def f(x: Tensor, y: int = 2, *, z: float = 1.5, w: Optional[Tensor] = None) -> Tensor:
        return x

    expected = "(Tensor x, SymInt y=2, *, float z=1.5, Tensor? w=None) -> Tensor"
    assert infer_schema(f, mutates_args=()) == expected

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    assert infer_schema(wrapper, mutates_args=()) == expected

    def g(*args, **kwargs):
        return args[0]

    g.__signature__ = inspect.signature(f)
    assert infer_schema(g, mutates_args=()) == expected

    class Callable_:
        def __call__(self, x: Tensor, y: int = 2, *, z: float = 1.5, w: Optional[Tensor] = None) -> Tensor:
            return x

    assert infer_schema(Callable_(), mutates_args=()) == expected
    assert infer_schema(functools.partial(f, y=3), mutates_args=()) == (
        "(Tensor x, *, SymInt y=3, float z=1.5, Tensor? w=None) -> Tensor")

    def varargs(x: Tensor, *rest: Tensor) -> Tensor:
        return x

    with pytest.raises(ValueError, match=r"Parameter \*rest: we do not support varargs"):
        infer_schema(varargs, mutates_args=())


def test_infer_schema_unsupported():
    with pytest.raises(ValueError, match="varargs"):
        def foo(*args):
            raise NotImplementedError

        infer_schema(foo, mutates_args=())

    with pytest.raises(ValueError, match="varkwargs"):
        def foo(**kwargs):
            raise NotImplementedError

        infer_schema(foo, mutates_args=())

    with pytest.raises(ValueError, match="must have a type annotation"):
        def foo(x):
            raise NotImplementedError

        infer_schema(foo, mutates_args=())

    with pytest.raises(ValueError, match="unsupported"):
        def foo(x: Tensor) -> Tuple[Tensor, ...]:
            raise NotImplementedError

        infer_schema(foo, mutates_args=())

    with pytest.raises(ValueError, match="can be mutated"):
        def foo(x: Tensor, y: int) -> Tensor:
            raise NotImplementedError

        infer_schema(foo, mutates_args={"y"})


def _generate_examples(typ):
    if typ is int:
        return [17]
    if typ is float:
        return [3.14]
    if typ is bool:
        return [True]
    if typ is str:
        return ["foo"]
    if typ is opdispatch.dtype:
        return [opdispatch.float32]
    if typ is opdispatch.device:
        return [opdispatch.device("cpu")]
    if typ == Number:
        return [2.718]
    if typ is Tensor:
        return [opdispatch.tensor(3)]
    if typ == Optional[Number]:
        return [None, 2.718]
    origin = typing.get_origin(typ)
    if origin is Union:
        args = typing.get_args(typ)
        assert len(args) == 2 and (args[0] is type(None) or args[1] is type(None))
        elt = args[0] if args[1] is type(None) else args[1]
        return _generate_examples(elt) + [None]
    if origin is list:
        args = typing.get_args(typ)
        assert len(args) == 1
        elt = args[0]
        return [_generate_examples(elt), _generate_examples(elt), _generate_examples(elt)]
    if origin is collections.abc.Sequence:
        args = typing.get_args(typ)
        assert len(args) == 1
        examples = _generate_examples(args[0])
        return list(itertools.product(examples, examples))
    raise NotImplementedError(f"testrunner cannot generate instanstance of type {typ}")


def test_supported_return_types_single_return(ns):
    for typ in infer_schema_module.SUPPORTED_RETURN_TYPES:
        for example in _generate_examples(typ):
            try:
                @custom_ops.custom_op(f"{ns}::foo")
                def foo(x: Tensor) -> typ:
                    raise NotImplementedError

                @custom_ops.impl(f"{ns}::foo")
                def foo_impl(x: Tensor) -> typ:
                    return example

                op = get_op(f"{ns}::foo")
                assert_equal(op(randn()), example)
            finally:
                custom_ops._destroy(f"{ns}::foo")


def test_supported_return_types_multi_return(ns):
    for typ in infer_schema_module.SUPPORTED_RETURN_TYPES:
        for example in _generate_examples(typ):
            try:
                @custom_ops.custom_op(f"{ns}::foo")
                def foo(x: Tensor) -> Tuple[typ, typ]:
                    raise NotImplementedError

                @custom_ops.impl(f"{ns}::foo")
                def foo_impl(x: Tensor) -> Tuple[typ, typ]:
                    return (example, example)

                op = get_op(f"{ns}::foo")
                assert_equal(op(randn()), (example, example))
            finally:
                custom_ops._destroy(f"{ns}::foo")


def test_supported_param_types(ns):
    for typ in infer_schema_module.SUPPORTED_PARAM_TYPES:
        @custom_ops.custom_op(f"{ns}::foo")
        def foo(x: Tensor, y: typ) -> Tensor:
            raise NotImplementedError

        yeet = None

        @custom_ops.impl(f"{ns}::foo", device_types=["cpu"])
        def foo_cpu(x, y):
            nonlocal yeet
            yeet = y
            return x.clone()

        try:
            for example in _generate_examples(typ):
                op = get_op(f"{ns}::foo")
                op(randn(), example)
                assert_equal(yeet, example)
                yeet = None
        finally:
            custom_ops._destroy(f"{ns}::foo")


def test_sequences(ns):
    # Sequence[int] gets automagically turned into int[] in the schema.
    # This test checks that we actually do support arbitrary sequence types.
    class MySequence(collections.abc.Sequence):
        def __init__(self):
            self._container = [1, 2, 3]

        def __getitem__(self, idx):
            return self._container[idx]

        def __len__(self):
            return len(self._container)

    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, sizes: Sequence[int]) -> Tensor:
        raise NotImplementedError

    called = 0

    @custom_ops.impl(f"{ns}::foo", device_types="cpu")
    def foo_cpu(x, sizes):
        nonlocal called
        called += 1
        # Dispatcher will normalize the sequence type into a List
        assert sizes == [1, 2, 3]
        return x.clone()

    get_op(f"{ns}::foo")(randn(), MySequence())
    assert called == 1


def test_unsupported_param_types(ns):
    # Not comprehensive (it doesn't need to be), just a check that our mechanism works
    with pytest.raises(ValueError, match="unsupported type"):
        @custom_ops.custom_op(f"{ns}::foo")
        def foo(x: Tensor, y: List[Optional[int]]) -> Tensor:
            raise NotImplementedError

    with pytest.raises(ValueError, match="unsupported type"):
        @custom_ops.custom_op(f"{ns}::foo")
        def foo(x: Tensor, y: Tuple[int, int]) -> Tensor:
            raise NotImplementedError

    with pytest.raises(ValueError, match=r"For example, typing.List\[int\]"):
        # test that we propose a correct and supported type.
        @custom_op(f"{ns}::foo", mutates_args={})
        def foo(x: Tensor, y: Tuple[int, int]) -> Tensor:
            raise NotImplementedError

    with pytest.raises(ValueError) as cm:
        @custom_op(f"{ns}::foo", mutates_args={})
        def foo(x: Tensor, y: Tuple[int, float]) -> Tensor:
            raise NotImplementedError
    # test that we don't propose an unsupported type.
    assert "example" not in str(cm.value)

    with pytest.raises(ValueError, match="unsupported type"):
        @custom_ops.custom_op(f"{ns}::foo")
        def foo(x: Tensor, y: Callable) -> Tensor:
            raise NotImplementedError


def test_supported_schemas(ns):
    # Schemas the legacy API accepts (a sanity check: the parser is tested elsewhere).
    schemas = [
        "(Tensor x) -> Tensor",
        "(Tensor x) -> Tensor y",
        "(Tensor[] x) -> Tensor y",
        "(Tensor x) -> (Tensor, Tensor)",
        "(Tensor x) -> (Tensor y, Tensor z)",
        "(Tensor x) -> (Tensor y, Tensor z)",
    ]
    other_schemas = [
        "(Tensor x, Tensor w) -> (Tensor y, Tensor z)",
        "(Tensor x, Tensor w) -> (Tensor, Tensor)",
        "(Tensor x, Tensor w) -> Tensor",
        "(Tensor? x, Tensor w) -> Tensor",
        "(Tensor? x, Tensor[] w) -> Tensor",
        "(Tensor x, int[] w) -> Tensor",
        "(Tensor x, SymInt[] w) -> Tensor",
        "(Tensor x, Scalar w) -> Tensor",
        "(Tensor x, float w) -> Tensor",
        "(Tensor x, float? w) -> Tensor",
        "(Tensor x, bool[] w) -> Tensor",
    ]
    for schema in schemas:
        custom_ops.custom_op(f"{ns}::foo", schema)
        custom_ops._destroy(f"{ns}::foo")
    for schema in other_schemas:
        custom_ops.custom_op(f"{ns}::bar", schema)
        custom_ops._destroy(f"{ns}::bar")


def test_reserved_ns():
    for ns in legacy_custom_op.RESERVED_NS:
        with pytest.raises(ValueError, match="is a reserved namespace"):
            custom_ops.custom_op(f"{ns}::foo", "(Tensor x) -> Tensor")

        with pytest.raises(ValueError, match="is a reserved namespace"):
            @custom_ops.custom_op(f"{ns}::foo2")
            def foo2(x: Tensor) -> Tensor:
                raise NotImplementedError


def test_private_ctor():
    with pytest.raises(RuntimeError, match="CustomOp constructor is private"):
        CustomOp(None, None, None, None)


def test_lifetime(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    custom_op = legacy_custom_op.global_registry[f"{ns}::foo"]
    assert isinstance(custom_op, CustomOp) and repr(custom_op) == f'<CustomOp(op="{ns}::foo")>'

    # We can't define an op multiple times,
    with pytest.raises(RuntimeError, match="multiple times"):
        @custom_ops.custom_op(f"{ns}::foo")
        def foo(x: Tensor) -> Tensor:  # noqa: F811
            raise NotImplementedError

    # Unless we delete the original op.
    custom_ops._destroy(f"{ns}::foo")

    # Smoke test
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:  # noqa: F811
        raise NotImplementedError

    custom_ops._destroy(f"{ns}::foo")
    with pytest.raises(RuntimeError, match=f'Could not find custom op "{ns}::foo"'):
        custom_ops._destroy(f"{ns}::foo")


def test_autograd_notimplemented(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    x = randn(3, requires_grad=True)
    op = get_op(f"{ns}::foo")
    with pytest.raises(RuntimeError, match="Autograd has not been implemented"):
        op(x)
    custom_ops._destroy(f"{ns}::foo")

    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Sequence[Tensor]) -> Tensor:  # noqa: F811
        raise NotImplementedError

    x = randn(3, requires_grad=True)
    y = randn(3)
    op = get_op(f"{ns}::foo")
    with pytest.raises(RuntimeError, match="Autograd has not been implemented"):
        op([y, x])
    custom_ops._destroy(f"{ns}::foo")

    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, y: Tensor) -> Tensor:  # noqa: F811
        raise NotImplementedError

    x = randn(3, requires_grad=True)
    y = randn(3)
    op = get_op(f"{ns}::foo")
    with pytest.raises(RuntimeError, match="Autograd has not been implemented"):
        op(y, x)
    custom_ops._destroy(f"{ns}::foo")


def test_autograd_notimplemented_gradmode(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x, y):
        return x * y

    x = randn(3, requires_grad=True)
    y = randn(3)
    op = get_op(f"{ns}::foo")
    with opdispatch.autograd.no_grad():
        # Shouldn't raise, because we are in no_grad
        op(y, x)


def test_impl_cpu(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo", device_types="cpu")
    def foo_cpu(x):
        return x.sin()

    x = randn(3)
    assert_close(get_op(f"{ns}::foo")(x), foo_cpu(x))


def test_impl_invalid_devices(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    def foo_impl(x):
        return x.sin()

    for device_type in legacy_custom_op.SUPPORTED_DEVICE_TYPE_TO_KEY:
        # Smoke test: should not raise error
        custom_ops.impl(f"{ns}::foo", device_types=device_type)(foo_impl)

    # Not supported by this API: we can either support them in the future
    # or provide some other CustomOp.def_* function. This depends on how
    # common the use cases are.
    for invalid_type in ["hip", "xla", "mkldnn", ["cpu", "hip"]]:
        with pytest.raises(ValueError, match="we only support device_type"):
            custom_ops.impl(f"{ns}::foo", device_types=invalid_type)(foo_impl)
    with pytest.raises(RuntimeError, match=r"already has a cpu impl registered from Python at .*test_custom_ops.py"):
        custom_ops.impl(f"{ns}::foo", device_types="cpu")(foo_impl)


def define_sin_op(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x):
        return x.sin()


def test_backward_partially_registered(ns):
    define_sin_op(ns)

    @custom_ops.impl_backward(f"{ns}::foo")
    def foo_backward(ctx, saved, grad):
        return grad * saved.cos()

    x = randn(requires_grad=True)
    op = get_op(f"{ns}::foo")
    with pytest.raises(RuntimeError, match="unable to find a 'save_for_backward'"):
        y = op(x)
        y.backward()


def test_save_for_backward_inputs_are_namedtuple(ns):
    define_sin_op(ns)
    hit = 0

    @custom_ops.impl_save_for_backward(f"{ns}::foo")
    def foo_save_for_backward(inputs, output):
        nonlocal hit
        hit += 1
        assert isinstance(inputs, tuple)
        assert list(inputs._asdict().keys()) == ["x"]
        return inputs.x

    @custom_ops.impl_backward(f"{ns}::foo")
    def foo_backward(ctx, saved, grad):
        return {"x": grad * saved.cos()}

    x = randn(requires_grad=True)
    y = get_op(f"{ns}::foo")(x)
    assert hit == 1
    y.backward()
    assert hit == 1


def register_sin_formula(ns, backward, *, save=lambda inputs, output: inputs.x):
    custom_ops.impl_save_for_backward(f"{ns}::foo")(save)
    custom_ops.impl_backward(f"{ns}::foo")(backward)


def test_backward_returns_dict(ns):
    define_sin_op(ns)
    register_sin_formula(ns, lambda ctx, saved, grad: grad * saved.cos())
    y = get_op(f"{ns}::foo")(randn(requires_grad=True))
    with pytest.raises(RuntimeError, match="to be a dict"):
        y.backward()


def test_backward_dict_invalid_keys(ns):
    define_sin_op(ns)
    register_sin_formula(ns, lambda ctx, saved, grad: {"x": grad * saved.cos(), "y": None})
    y = get_op(f"{ns}::foo")(randn(requires_grad=True))
    with pytest.raises(RuntimeError, match="to have keys {'x'}"):
        y.backward()


def test_backward_dict_grad_for_nontensor(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, dim: int) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x, dim):
        return x.sin()

    register_sin_formula(ns, lambda ctx, saved, grad: {"x": grad * saved.cos(), "dim": None})
    y = get_op(f"{ns}::foo")(randn(requires_grad=True), 32)
    with pytest.raises(RuntimeError, match="non-Tensor-like types"):
        y.backward()


def test_backward_dict_requires_keys_for_input_tensors(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x, y):
        return x.sin()

    register_sin_formula(ns, lambda ctx, saved, grad: {"x": grad * saved.cos()})
    x = randn(requires_grad=True)
    y = get_op(f"{ns}::foo")(x, x)
    with pytest.raises(RuntimeError, match=r"to have keys {.*'y'.*}"):
        y.backward()


def test_backward_dict_requires_keys_for_input_optional_tensors(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, y: Optional[Tensor]) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x, y):
        return x.sin()

    register_sin_formula(ns, lambda ctx, saved, grad: {"x": grad * saved.cos()})
    y = get_op(f"{ns}::foo")(randn(requires_grad=True), None)
    with pytest.raises(RuntimeError, match=r"to have keys {.*'y'.*}"):
        y.backward()


def test_backward_grads_are_tensor_or_none(ns):
    define_sin_op(ns)
    # (The seed's translation lost the tuple around the gradient; PyTorch's test returns one.)
    register_sin_formula(ns, lambda ctx, saved, grad: {"x": (grad * saved.cos(),)})
    y = get_op(f"{ns}::foo")(randn(requires_grad=True))
    with pytest.raises(RuntimeError, match="either None or a Tensor"):
        y.backward()


def define_list_op(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(xs: Sequence[Tensor]) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(xs):
        return xs[0].sin()

    return [randn(requires_grad=True) for _ in range(3)]


def test_backward_tensorlist_input_requires_list_grads_with_same_numel(ns):
    xs = define_list_op(ns)
    register_sin_formula(ns, lambda ctx, saved, grad: {"xs": [grad * saved.cos(), None]},
                         save=lambda inputs, output: inputs.xs[0])
    y = get_op(f"{ns}::foo")(xs)
    with pytest.raises(RuntimeError, match="3 gradients but got 2"):
        y.backward()


def test_backward_tensorlist_input_requires_list_grads_none_or_Tensor(ns):
    xs = define_list_op(ns)
    register_sin_formula(ns, lambda ctx, saved, grad: {"xs": [grad * saved.cos(), None, (None,)]},
                         save=lambda inputs, output: inputs.xs[0])
    y = get_op(f"{ns}::foo")(xs)
    with pytest.raises(RuntimeError, match="None or Tensor"):
        y.backward()


def test_backward_tensorlist_input_requires_list_grads(ns):
    xs = define_list_op(ns)
    register_sin_formula(ns, lambda ctx, saved, grad: {"xs": None}, save=lambda inputs, output: inputs.xs[0])
    y = get_op(f"{ns}::foo")(xs)
    with pytest.raises(RuntimeError, match="list of gradients"):
        y.backward()


def test_backward_tensorlist_gradients_flow(ns):
    xs = define_list_op(ns)
    register_sin_formula(ns, lambda ctx, saved, grad: {"xs": [grad * saved.cos(), None, None]},
                         save=lambda inputs, output: inputs.xs[0])
    get_op(f"{ns}::foo")(xs).backward()
    assert_close(xs[0].grad, xs[0].detach().cos())
    assert xs[1].grad is None and xs[2].grad is None


def test_backward_output_differentiability_type(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(xs: Sequence[Tensor]) -> Tensor:
        raise NotImplementedError

    with pytest.raises(RuntimeError, match="output_differentiability"):
        @custom_ops.impl_backward(f"{ns}::foo", output_differentiability=True)
        def foo_backward(ctx, saved, grad):
            return {"xs": None}


def test_backward_output_differentiability_numel(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(xs: Sequence[Tensor]) -> Tuple[Tensor, Tensor]:
        raise NotImplementedError

    with pytest.raises(RuntimeError, match="output_differentiability"):
        @custom_ops.impl_backward(f"{ns}::foo", output_differentiability=[True])
        def foo_backward(ctx, saved, grad):
            return {"xs": None}


def test_backward_output_differentiability_tensorlist(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tuple[List[Tensor], Tensor]:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x):
        return [x.clone(), x.clone()], x.clone()

    @custom_ops.impl_save_for_backward(f"{ns}::foo")
    def foo_save_for_backward(inputs, output):
        return []

    @custom_ops.impl_backward(f"{ns}::foo", output_differentiability=[False, True])
    def foo_backward(ctx, saved, grad_lst, grad):
        return {"x": grad}

    x = randn(3, requires_grad=True)
    [a, b], c = get_op(f"{ns}::foo")(x)
    assert not a.requires_grad
    assert not b.requires_grad
    assert c.requires_grad


def test_backward_output_differentiability_non_tensor(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tuple[Tensor, int]:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo")
    def foo_impl(x):
        return x.clone(), 3

    @custom_ops.impl_save_for_backward(f"{ns}::foo")
    def foo_save_for_backward(inputs, output):
        return []

    @custom_ops.impl_backward(f"{ns}::foo", output_differentiability=[True, True])
    def foo_backward(ctx, saved, grad0, grad1):
        return {"x": grad0}

    x = randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="is not a Tensor"):
        get_op(f"{ns}::foo")(x)


def test_impl_separate(ns):
    # Seed test_impl_separate with a data-less "cuda" tensor (see test_split_device).
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl(f"{ns}::foo", device_types="cpu")
    def foo_cpu(x):
        return x.sin()

    @custom_ops.impl(f"{ns}::foo", device_types="cuda")
    def foo_cuda(x):
        return cuda_like(x)

    x = randn(3)
    op = get_op(f"{ns}::foo")
    assert_close(op(x), foo_cpu(x))
    assert op(cuda_like(x)).device.type == "cuda"


def test_impl_abstract_overload(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("sin.blah(Tensor x) -> Tensor")
    with pytest.warns(FutureWarning, match="impl_abstract` was renamed to `opdispatch.library.register_fake"):
        library.impl_abstract(f"{ns}::sin.blah", opdispatch.empty_like, lib=lib)
    op = getattr(ops, ns).sin.blah
    x = randn(3, device="meta")
    assert op(x).is_meta
    lib._destroy()


def test_impl_meta(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, dim: int) -> Tensor:
        raise NotImplementedError

    lib = Library(ns, "FRAGMENT")
    with pytest.warns(FutureWarning):
        @library.impl_abstract(f"{ns}::foo", lib=lib)
        def foo_meta(x, dim):
            output_shape = list(x.shape)
            del output_shape[dim]
            return x.new_empty(output_shape)

    x = randn(2, 3, device="meta")
    result = get_op(f"{ns}::foo")(x, 1)
    assert result.shape == foo_meta(x, 1).shape
    lib._destroy()


def test_duplicate_impl(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor, dim: int) -> Tensor:
        raise NotImplementedError

    lib = Library(ns, "FRAGMENT")

    @custom_ops.impl_abstract(f"{ns}::foo")
    def foo_meta(x, dim):
        output_shape = list(x.shape)
        del output_shape[dim]
        return x.new_empty(output_shape)

    with pytest.raises(RuntimeError, match=r"test_custom_ops.py:\d+"):
        @library.register_fake(f"{ns}::foo", lib=lib)
        def foo_meta2(x, dim):
            output_shape = list(x.shape)
            del output_shape[dim]
            return x.new_empty(output_shape)
    lib._destroy()


def test_new_data_dependent_symint(ns):
    # Seed: under make_fx; here the fake impl runs on meta tensors. The seed's
    # "max must not be a SymInt" case has no equivalent (no SymInts).
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl_abstract(f"{ns}::foo")
    def foo_meta(x):
        ctx = get_ctx()
        r = ctx.new_dynamic_size(min=1)
        with pytest.raises(ValueError, match="greater than or equal to 0"):
            ctx.new_dynamic_size(min=-1)
        with pytest.raises(ValueError, match="expected max to be an int"):
            ctx.new_dynamic_size(max=float(x.numel()))
        return x.new_empty(r)

    assert get_op(f"{ns}::foo")(randn(2, 3, device="meta")).shape == (1,)
    # The seed traces with make_fx (tracing_mode="symbolic" there; "fake" here): r is a SymInt.
    gm = make_fx(get_op(f"{ns}::foo"), tracing_mode="fake")(randn(2, 3))
    (out_meta,) = [n.meta["tensor_meta"] for n in gm.nodes if n.op == "call_function" and n.name == "foo"]
    assert [str(d) for d in out_meta.shape] == ["u0"]

    @custom_ops.custom_op(f"{ns}::bar")
    def bar(x: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl_abstract(f"{ns}::bar")
    def bar_meta(x):
        with pytest.raises(ValueError, match="SymInt"):  # a bound must be a constant, not a symbol
            get_ctx().new_dynamic_size(max=get_ctx().new_dynamic_size())
        return x.new_empty(2)

    make_fx(get_op(f"{ns}::bar"), tracing_mode="fake")(randn(2, 3))


def test_meta_for_data_dependent_shape_operation():
    # PyTorch raises "data-dependent output shape" for meta tensors; here the
    # fake impl's new_dynamic_size() gives its lower bound, 0.
    x = randn(10, device="meta")
    out = custom_op_db.numpy_nonzero(x)
    assert out.is_meta and out.shape == (0, 1) and out.dtype == opdispatch.int64


def test_basic_make_fx(ns):
    # More rigorous tests are in tests/test_make_fx.py; this one is a sanity check.
    # (The seed's tracing_mode="symbolic" is "fake" here: input sizes stay concrete.)
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    @custom_ops.impl_abstract(f"{ns}::foo")
    def foo_meta(x):
        return x.sum()

    x = randn(3)
    op = get_op(f"{ns}::foo")
    gm = make_fx(op, tracing_mode="fake")(x)
    assert f"{ns}.foo" in gm.code


def test_data_dependent_basic():
    x = randn(5, 5)
    gm = make_fx(custom_op_db.numpy_nonzero, tracing_mode="fake")(x)
    assert "nonzero" in gm.code
    # The data-dependent size is a named symbol in the graph and the output metadata, bound when it replays.
    assert "u0 = opdispatch.tracing.sym_size(numpy_nonzero, 0)" in gm.code
    out = [n for n in gm.nodes if n.op == "call_function" and n.name == "numpy_nonzero"][0]
    assert [str(d) for d in out.meta["tensor_meta"].shape] == ["u0", "2"]
    y = opdispatch.tensor([[1.0, 0.0], [2.0, 3.0]])
    assert gm(y).tolist() == custom_op_db.numpy_nonzero(y).tolist() == [[0, 0], [1, 0], [1, 1]]


def test_data_dependent_fake_tracing():
    x = randn(5, 5)
    make_fx(custom_op_db.numpy_nonzero, tracing_mode="fake")(x)


def test_not_implemented_error(ns):
    @custom_ops.custom_op(f"{ns}::foo")
    def foo(x: Tensor) -> Tensor:
        raise NotImplementedError

    x = randn(3)
    op = get_op(f"{ns}::foo")
    with pytest.raises(NotImplementedError, match="cpu impl registered"):
        op(x)

    x = randn(3, device="meta")
    with pytest.raises(NotImplementedError, match="no fake impl or Meta kernel"):
        op(x)

    @custom_ops.custom_op(f"{ns}::bar")
    def bar(sizes: Sequence[int]) -> Tensor:
        raise NotImplementedError

    op = get_op(f"{ns}::bar")
    with pytest.raises(NotImplementedError, match="no Tensor inputs"):
        op((1, 2, 3))


def test_impl_on_existing_op(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    qualname = f"{ns}::foo"

    @custom_ops.impl(qualname)
    def foo_impl(x):
        return x.sin()

    x = randn(3)
    assert_close(get_op(qualname)(x), x.sin())


@pytest.mark.parametrize("key", ["CPU", "CUDA", "CompositeImplicitAutograd", "CompositeExplicitAutograd"])
def test_impl_on_existing_op_with_cpu_registration(ns, lib, key):
    lib.define("foo(Tensor x) -> Tensor")
    qualname = f"{ns}::foo"

    def foo_impl(x):
        return x.sin()

    lib.impl("foo", foo_impl, key)
    with pytest.raises(RuntimeError, match="already has an implementation"):
        custom_ops.impl(qualname, func=foo_impl)


def test_abstract_impl_on_existing_op(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    qualname = f"{ns}::foo"
    fake_lib = Library(ns, "FRAGMENT")

    with pytest.warns(FutureWarning):
        @library.impl_abstract(qualname, lib=fake_lib)
        def foo_impl(x):
            return x.sin()

    x = randn(3, device="meta")
    result = get_op(qualname)(x)
    assert result.shape == x.shape and result.stride() == x.stride()
    fake_lib._destroy()


def test_abstract_impl_on_existing_op_with_meta(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.sin(), "Meta")
    with pytest.raises(RuntimeError, match=r"already has .*Meta implementation"), pytest.warns(FutureWarning):
        library.impl_abstract(f"{ns}::foo", func=lambda x: x.sin(), lib=lib)


def test_abstract_impl_on_existing_op_with_CompositeImplicitAutograd(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.sin(), "CompositeImplicitAutograd")
    with pytest.raises(RuntimeError, match="CompositeImplicitAutograd"), pytest.warns(FutureWarning):
        library.impl_abstract(f"{ns}::foo", func=lambda x: x.sin(), lib=lib)


def test_abstract_impl_on_existing_op_with_CompositeExplicitAutograd(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.sin(), "CompositeExplicitAutograd")
    fake_lib = Library(ns, "FRAGMENT")
    with pytest.warns(FutureWarning):
        library.impl_abstract(f"{ns}::foo", func=lambda x: x.sum(), lib=fake_lib)
    result = get_op(f"{ns}::foo")(randn(10, device="meta"))
    assert result.shape == ()
    fake_lib._destroy()


def _test_backward_impl_raises(qualname, err_regex):
    with pytest.raises(RuntimeError, match=err_regex):
        @custom_ops.impl_save_for_backward(qualname)
        def foo2(x):
            return

    with pytest.raises(RuntimeError, match=err_regex):
        @custom_ops.impl_backward(qualname)
        def foo3(x):
            return


def test_backward_impl_on_existing_op_incorrect_schema_views(ns, lib):
    lib.define("foo(Tensor(a) x) -> Tensor(a)")
    _test_backward_impl_raises(f"{ns}::foo", "operator that returns views")


def test_backward_impl_on_existing_op_incorrect_schema_mutable(ns, lib):
    lib.define("foo(Tensor(a!) x) -> Tensor")
    _test_backward_impl_raises(f"{ns}::foo", "non-functional")


def test_backward_impl_on_existing_op_incorrect_schema_no_output(ns, lib):
    lib.define("foo(Tensor x) -> ()")
    _test_backward_impl_raises(f"{ns}::foo", "no returns")


def test_backward_impl_on_existing_op_CompositeImplicitAutograd(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.sin().cos(), "CompositeImplicitAutograd")
    _test_backward_impl_raises(f"{ns}::foo", "CompositeImplicitAutograd")


@pytest.mark.parametrize("key", ["Autograd", "AutogradCPU", "AutogradCUDA"])
def test_backward_impl_on_existing_op_with_key(ns, lib, key):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.sin().cos(), key)
    _test_backward_impl_raises(f"{ns}::foo", key)


def test_is_functional_schema():
    tests = {
        "foo(Tensor x) -> Tensor": True,
        "foo(Tensor(a) x) -> Tensor": True,
        "foo(Tensor(a!) x) -> Tensor": False,
        "foo(Tensor(a) x) -> Tensor(a)": False,
        "foo(Tensor x) -> ()": False,
    }
    for schema_str, expected in tests.items():
        assert utils.is_functional_schema(schema_str) == expected
        assert utils.is_functional_schema(_C.parse_schema(schema_str)) == expected


def test_incorrect_schema_types(ns):
    # Same cases as the seed; opdispatch's parser words the errors its own way.
    with _scoped_library(ns, "FRAGMENT") as lib:
        with pytest.raises(ValueError, match="unknown type 'asdfasdf'"):
            lib.define("foo12(Tensor a) -> asdfasdf")
        with pytest.raises(ValueError, match="unknown type 'asdf'"):
            lib.define("foo12(asdf a) -> Tensor")
        with pytest.raises(ValueError, match="use 'int' .* or 'SymInt'"):
            lib.define("foo12(int64_t a) -> Tensor")
        with pytest.raises(ValueError, match="use 'float'"):
            lib.define("foo12(double a) -> Tensor")


def test_is_tensorlist_like_type():
    tensorlists = [
        # Tensor[]
        _C.parse_schema("foo(Tensor x) -> Tensor[]").returns[0].type,
        # Tensor?[]
        _C.parse_schema("foo(Tensor?[] x) -> Tensor").arguments[0].type,
        # Tensor[]?
        _C.parse_schema("foo(Tensor[]? x) -> ()").arguments[0].type,
        # Tensor?[]?
        _C.parse_schema("foo(Tensor?[]? x) -> ()").arguments[0].type,
    ]
    non_tensorlists = [
        # Tensor
        opdispatch.ops.od.sin.default._schema.arguments[0].type,
        # int[]
        _C.parse_schema("foo(int[] x) -> ()").arguments[0].type,
        # Tensor?
        _C.parse_schema("foo(Tensor? x) -> ()").arguments[0].type,
    ]
    for a in tensorlists:
        assert utils.is_tensorlist_like_type(a)
        assert not utils.is_tensor_like_type(a)
    for a in non_tensorlists:
        assert not utils.is_tensorlist_like_type(a)


def test_is_tensor_like_type():
    # (Same answers as torch._library.utils on the same schemas.)
    tensors = [_C.parse_schema("foo(Tensor x, Tensor? y, Tensor(a!) z, Tensor(b!)? w) -> ()").arguments[i].type
               for i in range(4)]
    others = [_C.parse_schema(f"foo({t} x) -> ()").arguments[0].type
              for t in ("Tensor[]", "Tensor?[]", "int", "SymInt", "Scalar", "int[]?", "Any")]
    for t in tensors:
        assert utils.is_tensor_like_type(t)
        assert utils.is_tensor_or_tensorlist_like_type(t)
    for t in others:
        assert not utils.is_tensor_like_type(t)
    assert [utils.is_tensor_or_tensorlist_like_type(t) for t in others] == [True, True] + [False] * 5


def test_backward_impl_on_existing_op(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    qualname = f"{ns}::foo"

    @custom_ops.impl(qualname)
    def foo_impl(x):
        with opdispatch.autograd.no_grad():
            return x.sin()

    @custom_ops.impl_save_for_backward(qualname)
    def foo_save_for_backward(inputs, output):
        return inputs.x

    @custom_ops.impl_backward(qualname)
    def foo_backward(ctx, saved, grad_out):
        return {"x": grad_out * saved.cos()}

    x = randn(requires_grad=True)
    y = get_op(qualname)(x)
    (gx,) = opdispatch.autograd.grad(y, x)
    assert_close(gx, x.detach().cos())


# --- beyond the seed: the legacy API ---------------------------------------------------------------------


def test_legacy_custom_op_object(ns):
    @legacy_custom_op.custom_op(f"{ns}::twice")
    def twice(x: Tensor) -> Tensor:
        """Doubles x."""

    assert isinstance(twice, CustomOp) and twice.__doc__ == "Doubles x." and twice.__name__ == "twice"

    @twice.impl("cpu")
    def _(x):
        return x * 2

    @twice.impl_abstract()
    def _(x):
        return opdispatch.empty_like(x)

    assert twice(opdispatch.ones(2)).tolist() == [2.0, 2.0]
    assert twice(randn(2, device="meta")).is_meta
    with pytest.raises(NotImplementedError, match="No implementation for dispatch key PrivateUse1"):
        twice(_C.empty_strided((2,), (1,), opdispatch.float32, "privateuseone"))
    with pytest.raises(ValueError, match="Could not find the operator"):
        get_op(f"{ns}::nope")
    with pytest.raises(ValueError, match="Expected there to be a namespace"):
        custom_ops.custom_op("nonamespace", "(Tensor x) -> Tensor")


# =============================================================================================
# Operators of a C++ extension get a fake impl and a formula from Python
# =============================================================================================

CUBE_EXTENSION = r"""
// cube(x) = x * x * x for contiguous float64 tensors: a CPU kernel only.
#include <opdispatch/library.h>

namespace {
opdispatch::Tensor cube(const opdispatch::Tensor& x) {
  OPDISPATCH_CHECK_TYPE(x.dtype() == opdispatch::ScalarType::Double && x.is_contiguous(),
                        "cube: expected a contiguous float64 tensor");
  opdispatch::Tensor out = opdispatch::empty(x.sizes(), x.dtype(), x.device());
  const double* in = x.data_ptr<double>();
  double* o = out.data_ptr<double>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    o[i] = in[i] * in[i] * in[i];
  }
  return out;
}
}  // namespace

OPDISPATCH_LIBRARY(opdispatch_test_cube_ext, m) { m.def("cube(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_IMPL(opdispatch_test_cube_ext, CPU, m) { m.impl("cube", OPDISPATCH_FN(cube)); }
"""


@pytest.fixture(scope="module")
def cube_extension(tmp_path_factory):
    """opdispatch_test_cube_ext::cube, compiled with cpp_extension.load and loaded (once per process)."""
    import opdispatch.cpp_extension as cpp_extension

    if _C._dispatch_has_kernel("opdispatch_test_cube_ext::cube"):
        return "opdispatch_test_cube_ext::cube"
    src = tmp_path_factory.mktemp("cube_ext") / "cube.cpp"
    src.write_text(CUBE_EXTENSION)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(tmp_path_factory.mktemp("extensions")))
        cpp_extension.load("opdispatch_test_cube_ext", [src])
    return "opdispatch_test_cube_ext::cube"


def test_register_fake_and_autograd_for_a_cpp_extension_operator(cube_extension):
    from opdispatch.autograd import gradcheck

    op = ops.opdispatch_test_cube_ext.cube.default
    meta = opdispatch.empty(2, 3, dtype=opdispatch.float64, device="meta")
    with pytest.raises(NotImplementedError, match="'Meta' backend"):
        op(meta)
    x = opdispatch.tensor([1.0, -2.0, 0.5], dtype=opdispatch.float64, requires_grad=True)
    with pytest.warns(UserWarning, match="opdispatch_test_cube_ext::cube: an autograd kernel was not registered"):
        op(x).sum().backward()
    assert x.grad is None

    lib = Library("opdispatch_test_cube_ext", "FRAGMENT")
    try:
        library.register_fake(op, lambda x: opdispatch.empty_like(x), lib=lib)

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x * x

        library.register_autograd(cube_extension, backward, setup_context=setup_context, lib=lib)
        assert op(meta).shape == (2, 3) and op(meta).is_meta
        assert gradcheck(op, (x,))
        assert library.opcheck(op, (x,)) == {"test_schema": "SUCCESS", "test_autograd_registration": "SUCCESS",
                                             "test_faketensor": "SUCCESS", "test_aot_dispatch_dynamic": "SUCCESS"}
        assert op(x.detach()).tolist() == [1.0, -8.0, 0.125]
    finally:
        lib._destroy()
    # Both registrations went with their library; the C++ kernel stays.
    assert not _C._dispatch_has_kernel_for_dispatch_key(cube_extension, "Meta")
    assert not _C._dispatch_has_kernel_for_dispatch_key(cube_extension, "Autograd")
    assert op(x.detach()).tolist() == [1.0, -8.0, 0.125]


# =============================================================================================
# TestTypeConversion: the list type infer_schema suggests for a tuple annotation
# =============================================================================================

SUPPORTED_BASE_TYPES = [int, float, bool, str, opdispatch.device, Tensor, opdispatch.dtype, Number]


def test_simple_tuple():
    assert tuple_to_list(Tuple) == List


@pytest.mark.parametrize("t", SUPPORTED_BASE_TYPES)
def test_supported_types(t):
    assert tuple_to_list(Tuple[t, t, t]) == List[t]
    assert tuple_to_list(Tuple[t]) == List[t]


@pytest.mark.parametrize("t", SUPPORTED_BASE_TYPES)
def test_optional(t):
    assert tuple_to_list(Tuple[t, Optional[t]]) == List[Optional[t]]
    assert tuple_to_list(Tuple[t, t, Optional[t]]) == List[Optional[t]]
    assert tuple_to_list(Tuple[t, ...]) == List[t]


def test_mixed_types():
    assert tuple_to_list(Tuple[int, float]) == List[Union[int, float]]
    assert tuple_to_list(Tuple[int, float, str]) == List[Union[int, float, str]]


# --- issue 28's audit: tags=, register_torch_dispatch on the op, Library._register_torch_dispatch_rule ------


def test_custom_op_tags_follow_pt2_compliant_tag_without_duplicates(ns):
    # PyTorch 2.13: tags=(pointwise, pt2_compliant_tag, pointwise) gives ['pt2_compliant_tag', 'pointwise'].
    @custom_op(f"{ns}::f", mutates_args=(), tags=(opdispatch.Tag.pointwise, opdispatch.Tag.pt2_compliant_tag,
                                                  opdispatch.Tag.pointwise))
    def f(x: Tensor) -> Tensor:
        return x.clone()

    assert [t.name for t in getattr(ops, ns).f.default.tags] == ["pt2_compliant_tag", "pointwise"]

    @custom_op(f"{ns}::g", mutates_args=(), tags=opdispatch.Tag.needs_fixed_stride_order)
    def g(x: Tensor) -> Tensor:
        return x.clone()

    assert [t.name for t in getattr(ops, ns).g.default.tags] == ["pt2_compliant_tag", "needs_fixed_stride_order"]
    with pytest.raises(TypeError, match="tags must be opdispatch.Tag members"):
        custom_op(f"{ns}::h", mutates_args=(), tags=["pointwise"])(g._init_fn)


def test_custom_op_register_torch_dispatch_replaces_its_rule(ns):
    # PyTorch 2.13 prints "rule1 M t.f.default ()", then tensor([1., 1.]), then tensor([2., 2.]) after the
    # second registration (a CustomOpDef keeps one rule per class and replaces it).
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    seen = []

    @f.register_torch_dispatch(M)
    def _(mode, func, types, args, kwargs):
        seen.append((type(mode), func, types))
        return args[0] + 1

    with M():
        assert f(opdispatch.zeros(2)).tolist() == [1.0, 1.0]
    assert seen == [(M, getattr(ops, ns).f.default, ())]
    f.register_torch_dispatch(M, lambda mode, func, types, args, kwargs: args[0] + 2)
    with M():
        assert f(opdispatch.zeros(2)).tolist() == [2.0, 2.0]
    library.register_torch_dispatch(f, M, lambda mode, func, types, args, kwargs: args[0] + 3)
    with M():
        assert f(opdispatch.zeros(2)).tolist() == [3.0, 3.0]
    f._destroy()
    from opdispatch.utils._python_dispatch import _torch_dispatch_rules
    assert f"{ns}::f" not in _torch_dispatch_rules


def test_library_register_torch_dispatch_rule(lib, ns):
    # PyTorch 2.13: tensor([5., 5.]) under the mode; a second rule for the class is the RuntimeError
    # "<class 'M'> already has a `__torch_dispatch__` rule registered for ns::g".
    from opdispatch.utils._python_dispatch import TorchDispatchMode, _torch_dispatch_rules

    class M(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", lambda x: x.clone(), "CompositeExplicitAutograd")
    lib._register_torch_dispatch_rule("g", M, lambda mode, func, types, args, kwargs: args[0] + 5)
    with M():
        assert getattr(ops, ns).g(opdispatch.zeros(2)).tolist() == [5.0, 5.0]
    with pytest.raises(RuntimeError, match=f"already has a `__torch_dispatch__` rule registered for {ns}::g"):
        lib._register_torch_dispatch_rule("g", M, lambda mode, func, types, args, kwargs: args[0] + 6)
    lib._destroy()
    assert f"{ns}::g" not in _torch_dispatch_rules
