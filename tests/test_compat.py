"""PyTorch names real torch.library code touches, checked against PyTorch
2.13's behaviour: library._impls and Library._register_fake (seed 000),
Tag, and the everyday tensor and top-level names (issue 13 items 4, 5, 10)."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, library, ops
from opdispatch.library import Library



def _impls_of(ns: str) -> list[str]:
    return sorted(k for k in library._impls if k.startswith(ns + "/"))


# --- library._impls (seed 000) ------------------------------------------------------------------


def test_impls_is_a_set_keyed_as_seed_000(lib, ns):
    # PyTorch 2.13 gives ['kp/bar/Autograd', 'kp/bar/CPU', 'kp/bar/CUDA',
    # 'kp/bar/Meta', 'kp/foo.out/CPU', 'kp/foo/'] for these registrations.
    assert isinstance(library._impls, set)
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("foo.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    lib.define("bar(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.clone())
    lib.impl(getattr(ops, ns).foo.out, lambda x, out: out, "CPU")
    lib.impl(f"{ns}::bar", lambda x: x.clone(), "CPU")
    library.register_fake(f"{ns}::bar", lambda x: opdispatch.empty_like(x), lib=lib)
    library.register_autograd(f"{ns}::bar", lambda ctx, g: g, lib=lib)
    cuda = Library(ns, "IMPL", "CUDA")
    cuda.impl("bar", lambda x: x)
    assert _impls_of(ns) == [f"{ns}/bar/Autograd", f"{ns}/bar/CPU", f"{ns}/bar/CUDA", f"{ns}/bar/Meta",
                             f"{ns}/foo.out/CPU", f"{ns}/foo/"]
    cuda._destroy()
    assert f"{ns}/bar/CUDA" not in library._impls and f"{ns}/bar/CPU" in library._impls
    lib._destroy()
    assert _impls_of(ns) == []


def test_impls_idempotency_guard_as_fbgemm_writes_it(lib, ns):
    # fbgemm_gpu/sparse_ops.py: register the autograd formula only if
    # "<ns>/<op>/Autograd" is not in torch.library._impls yet.
    lib.define("permute(Tensor x) -> Tensor")
    lib.impl("permute", lambda x: x.clone(), "CPU")
    calls = []

    def impl_autograd(op_name, fn):
        name_split = op_name.split("::")
        key = f"{name_split[0]}/{name_split[-1]}/Autograd"
        if key not in library._impls:
            calls.append(op_name)
            library.register_autograd(op_name, fn, lib=lib)

    impl_autograd(f"{ns}::permute", lambda ctx, g: g)
    impl_autograd(f"{ns}::permute", lambda ctx, g: g)  # a second import: skipped, no duplicate error
    assert calls == [f"{ns}::permute"]


def test_impls_empty_key_and_composite_implicit_are_two_entries(lib, ns):
    # PyTorch 2.13: both register (the second overrides the first at CompositeImplicitAutograd) and _impls
    # holds ['ns/foo/', 'ns/foo/CompositeImplicitAutograd'].
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x + 1)
    with pytest.warns(UserWarning, match="Overriding a previously registered kernel for the same operator and the "
                                         "same dispatch key"):
        lib.impl("foo", lambda x: x + 2, "CompositeImplicitAutograd")
    assert _impls_of(ns) == [f"{ns}/foo/", f"{ns}/foo/CompositeImplicitAutograd"]
    assert getattr(ops, ns).foo(opdispatch.tensor([1.0])).tolist() == [3.0]


# --- overriding built-in kernels (issue 28 item 7) ---------------------------------------------------------


def test_a_user_kernel_overrides_a_built_in_one_until_its_library_goes():
    # PyTorch 2.13: Library("aten", "IMPL").impl("abs", f, "CPU") makes torch.abs run f (the C++ override
    # warning where ATen had a kernel at the key) and _impls gains 'aten/abs/CPU'; _destroy() restores abs.
    x = opdispatch.tensor([-1.0, 2.0])
    assert not [k for k in library._impls if k.startswith("od/")]  # the built-ins are not Python registrations
    lib = Library("od", "IMPL")
    with pytest.warns(UserWarning, match=r"(?s)operator: od::abs\(Tensor self\) -> Tensor.*dispatch key: CPU.*"
                                         r"previous kernel: registered at .*_builtins"):
        lib.impl("abs", lambda t: t * 10, "CPU")
    try:
        assert opdispatch.abs(x).tolist() == [-10.0, 20.0] and x.abs().tolist() == [-10.0, 20.0]
        assert _impls_of("od") == ["od/abs/CPU"]
    finally:
        lib._destroy()
    assert opdispatch.abs(x).tolist() == [1.0, 2.0]
    assert _impls_of("od") == []


def test_two_user_kernels_for_one_slot_are_the_error_unless_allow_override():
    # PyTorch 2.13 with allow_override=False raises "This is not allowed since there's already a kernel
    # registered from python overriding abs's behavior for CPU dispatch key and aten namespace."; with
    # allow_override=True the newest kernel runs, and destroying it brings back the first user's.
    x = opdispatch.tensor([-1.0, 2.0])
    first, second = Library("od", "IMPL"), Library("od", "IMPL")
    try:
        with pytest.warns(UserWarning):
            first.impl("abs", lambda t: t * 10, "CPU")
        for kwargs in ({}, {"allow_override": False}):
            with pytest.raises(RuntimeError, match="already a kernel registered from python overriding od::abs's "
                                                   "behavior for CPU dispatch key and od namespace"):
                second.impl("abs", lambda t: t * 100, "CPU", **kwargs)
        with pytest.warns(UserWarning, match="Overriding a previously registered kernel"):
            second.impl("abs", lambda t: t * 100, "CPU", allow_override=True)
        assert opdispatch.abs(x).tolist() == [-100.0, 200.0]
        second._destroy()
        assert opdispatch.abs(x).tolist() == [-10.0, 20.0]
    finally:
        first._destroy()
        second._destroy()
    assert opdispatch.abs(x).tolist() == [1.0, 2.0]


def test_an_override_with_keyset_gets_the_dispatch_key_set():
    # The pattern of torch.library.get_kernel's example (PyTorch 2.13): an override of a built-in registered
    # with_keyset=True gets the call's DispatchKeySet first.
    x = opdispatch.tensor([-1.0, 2.0])
    seen = []

    def neg(keyset, t):
        seen.append(type(keyset).__name__)
        return t * -1 if (t.numpy() < 0).any() else opdispatch.zeros_like(t)

    with pytest.warns(UserWarning), library._scoped_library("od", "IMPL") as lib:
        lib.impl("neg", neg, "CPU", with_keyset=True)
        assert opdispatch.neg(x).tolist() == [1.0, -2.0]
        assert opdispatch.neg(opdispatch.tensor([1.0, 2.0])).tolist() == [0.0, 0.0]
    assert seen == ["DispatchKeySet", "DispatchKeySet"]


def test_custom_op_kernels_are_in_impls(ns):
    @library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: opdispatch.Tensor) -> opdispatch.Tensor:
        return x.clone()

    f.register_fake(lambda x: opdispatch.empty_like(x))
    f.register_autograd(lambda ctx, g: g)
    assert {f"{ns}/f/Meta", f"{ns}/f/Autograd"} <= set(_impls_of(ns))
    f._destroy()
    assert _impls_of(ns) == []


# --- Library._register_fake (seed 000) ----------------------------------------------------------------


def test_register_fake_method_registers_and_is_undone_with_its_library(lib, ns):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.clone(), "CPU")
    fakes = Library(ns, "FRAGMENT")
    seen = []

    def fake(x):
        seen.append(x.device.type)
        return opdispatch.empty_like(x)

    fakes._register_fake("foo", fake, _stacklevel=1)
    assert f"{ns}/foo/Meta" in library._impls
    out = getattr(ops, ns).foo(opdispatch.empty(2, 3, device="meta"))
    assert out.is_meta and tuple(out.shape) == (2, 3) and seen == ["meta"]
    with pytest.raises(RuntimeError, match="already has a fake impl registered at .*test_compat.py"):
        fakes._register_fake("foo", fake)
    fakes._destroy()
    assert f"{ns}/foo/Meta" not in library._impls
    with pytest.raises(NotImplementedError, match="Meta"):
        getattr(ops, ns).foo(opdispatch.empty(2, 3, device="meta"))
    # Registering again after the first library died works.
    again = Library(ns, "FRAGMENT")
    again._register_fake("foo", fake)
    assert getattr(ops, ns).foo(opdispatch.empty(4, device="meta")).shape == (4,)
    again._destroy()


def test_register_fake_method_on_undefined_op_raises(lib, ns):
    with pytest.raises(ValueError, match=f"{ns}::nope"):
        lib._register_fake("nope", lambda x: x)
    assert _impls_of(ns) == []


def test_register_fake_method_on_destroyed_library_raises(ns):
    dead = Library(ns, "FRAGMENT")
    dead._destroy()
    with pytest.raises(RuntimeError, match="was destroyed"):
        dead._register_fake("foo", lambda x: x)


def test_register_fake_function_goes_through_the_method(lib, ns, monkeypatch):
    lib.define("foo(Tensor x) -> Tensor")
    calls = []
    original = Library._register_fake
    monkeypatch.setattr(Library, "_register_fake",
                        lambda self, name, fn, _stacklevel=1: calls.append(name) or original(self, name, fn))
    library.register_fake(f"{ns}::foo", lambda x: opdispatch.empty_like(x), lib=lib, _stacklevel=2)
    assert calls == ["foo"]


# --- Tag ---------------------------------------------------------------------------------------------

# list(torch.Tag.__members__) in PyTorch 2.13, with their values.
TORCH_TAGS = [
    "core", "cudagraph_unsafe", "data_dependent_output", "dynamic_output_shape", "flexible_layout", "generated",
    "inplace", "inplace_view", "maybe_aliasing_or_mutating", "needs_contiguous_strides", "needs_exact_strides",
    "needs_fixed_stride_order", "nondeterministic_bitwise", "nondeterministic_seeded", "out", "out_variant",
    "pointwise", "pt2_compliant_tag", "reduction", "view_copy",
]


def test_tag_is_one_enum_with_pytorchs_members():
    from opdispatch._C import Tag

    assert Tag is opdispatch.Tag is _C.Tag is library.Tag
    assert list(Tag.__members__) == TORCH_TAGS
    assert [t.value for t in Tag] == list(range(20))
    assert Tag.pointwise.value == int(Tag.pointwise) == 16 and Tag(16) is Tag.pointwise
    assert repr(Tag.pointwise) == "<Tag.pointwise: 16>" and str(Tag.pointwise) == "Tag.pointwise"
    assert Tag.pointwise.name == "pointwise" and Tag.pointwise != 16
    assert pickle.loads(pickle.dumps(Tag.core)) is Tag.core


def test_every_tag_round_trips_through_define(lib, ns):
    tags = list(opdispatch.Tag)
    lib.define("foo(Tensor x) -> Tensor", tags=tags)
    assert getattr(ops, ns).foo.default.tags == tags


# --- everyday names (issue 13 item 10) ------------------------------------------------------------------


def test_version_is_the_package_version():
    from importlib.metadata import version

    assert opdispatch.__version__ == version("opdispatch")
    assert all(part.isdigit() for part in opdispatch.__version__.split("."))


def test_dtype_aliases_are_the_dtypes():
    # As torch.float is torch.float32, ...; no bfloat16 (opdispatch tensors have no such dtype).
    assert opdispatch.float is opdispatch.float32 and opdispatch.double is opdispatch.float64
    assert opdispatch.half is opdispatch.float16 and opdispatch.long is opdispatch.int64
    assert opdispatch.int is opdispatch.int32 and opdispatch.short is opdispatch.int16
    assert opdispatch.cfloat is opdispatch.complex64 and opdispatch.cdouble is opdispatch.complex128
    assert not hasattr(opdispatch, "bfloat16")
    assert opdispatch.zeros(2, dtype=opdispatch.long).dtype == opdispatch.int64


def test_grad_mode_at_top_level():
    assert opdispatch.no_grad is opdispatch.autograd.no_grad
    x = opdispatch.ones(2, requires_grad=True)
    with opdispatch.no_grad():
        assert not opdispatch.is_grad_enabled() and not (x * 2).requires_grad
        with opdispatch.enable_grad():
            assert (x * 2).requires_grad
    opdispatch.set_grad_enabled(False)
    assert not opdispatch.is_grad_enabled()
    opdispatch.set_grad_enabled(True)
    assert opdispatch.is_grad_enabled()


def test_layout():
    t = opdispatch.ones(2, 3)
    assert t.layout is opdispatch.strided and opdispatch.empty(2, device="meta").layout is opdispatch.strided
    assert isinstance(opdispatch.strided, opdispatch.layout) and repr(opdispatch.strided) == "opdispatch.strided"
    assert pickle.loads(pickle.dumps(opdispatch.strided)) is opdispatch.strided
    # It passes as a schema's Layout argument (PyTorch's enum value, strided = 0).
    out = ops.od.zeros.default([2], dtype=opdispatch.float64, layout=opdispatch.strided)
    assert out.shape == (2,) and out.dtype == opdispatch.float64


def test_new_factories():
    # PyTorch 2.13 on a float64 (2, 3) tensor gives the same dtypes, shapes and values.
    x = opdispatch.ones(2, 3, dtype=opdispatch.float64)
    z = x.new_zeros(2, 4)
    assert (z.shape, z.dtype, z.tolist()) == ((2, 4), opdispatch.float64, [[0.0] * 4] * 2)
    assert x.new_zeros((2, 4)).shape == (2, 4) and x.new_zeros(()).shape == ()
    o = x.new_ones(3, dtype=opdispatch.int32)
    assert (o.dtype, o.tolist()) == (opdispatch.int32, [1, 1, 1])
    f = x.new_full((2,), 7)
    assert (f.dtype, f.tolist()) == (opdispatch.float64, [7.0, 7.0])
    with pytest.raises(TypeError, match=r"new_full\(\): argument 'size' \(position 1\) must be tuple of ints, not int"):
        x.new_full(2, 7)
    t = x.new_tensor([1, 2])
    assert (t.dtype, t.tolist()) == (opdispatch.float64, [1.0, 2.0])
    t = x.new_tensor([1.0, 2.0], requires_grad=True)
    assert t.requires_grad and t.is_leaf
    src = opdispatch.tensor([1, 2])
    with pytest.warns(UserWarning, match="sourceTensor.detach"):
        copy = x.new_tensor(src)
    assert copy.dtype == opdispatch.float64 and not copy._shares_memory(src)
    assert x.new_empty(2, requires_grad=True).requires_grad
    m = opdispatch.empty(2, device="meta").new_zeros(3)
    assert m.is_meta and m.shape == (3,)


def test_dtype_conversion_methods():
    x = opdispatch.tensor([1.7, -1.7])
    assert x.float() is x  # PyTorch: self when the dtype already matches
    assert x.long().tolist() == [1, -1] and x.long().dtype == opdispatch.int64  # truncation, as PyTorch
    for method, dtype in [("double", "float64"), ("half", "float16"), ("int", "int32"), ("short", "int16"),
                          ("char", "int8"), ("byte", "uint8"), ("bool", "bool"), ("cfloat", "complex64"),
                          ("cdouble", "complex128")]:
        assert getattr(x, method)().dtype is getattr(opdispatch, dtype), method
    assert opdispatch.tensor([0.0, 2.0]).bool().tolist() == [False, True]
    assert x.type_as(opdispatch.zeros(1, dtype=opdispatch.int16)).dtype == opdispatch.int16
    y = opdispatch.ones(2, requires_grad=True)
    y.double().sum().backward()  # conversions are differentiable
    assert y.grad.tolist() == [1.0, 1.0] and y.grad.dtype == opdispatch.float32


def test_transposes():
    x = opdispatch.arange(6.0).reshape(2, 3)
    assert x.T.shape == (3, 2) and x.T.stride() == (1, 3) and x.T._shares_memory(x)  # PyTorch: (1, 3)
    assert x.T.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    with pytest.warns(UserWarning, match="dimension other than 2"):
        assert opdispatch.ones(2, 3, 4).T.shape == (4, 3, 2)
    with pytest.warns(UserWarning):
        assert opdispatch.ones(2).T.shape == (2,)
    assert opdispatch.ones(5, 2, 3).mT.shape == (5, 3, 2)
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. Got 1-D"):
        opdispatch.ones(2).mT
    a = opdispatch.ones(2, 3, requires_grad=True)
    (a.T * opdispatch.arange(3.0).reshape(3, 1)).sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 2.0]] * 2


def test_shape_and_size_queries():
    x = opdispatch.ones(2, 3, dtype=opdispatch.float64)
    assert (x.dim(), x.ndim, x.numel()) == (2, 2, 6)
    assert (x.element_size(), x.itemsize, x.nbytes) == (8, 8, 48)  # PyTorch: 8, 8, 48
    assert opdispatch.ones(1, dtype=opdispatch.bool).element_size() == 1
    assert x.is_contiguous() and not x.T.is_contiguous() and x.T.contiguous().stride() == (2, 1)
    assert x.is_floating_point() and not x.long().is_floating_point() and x.cfloat().is_complex()
    assert isinstance(x.data_ptr(), int)
    assert x.view_as(opdispatch.empty(3, 2)).shape == (3, 2)
    assert x.reshape_as(opdispatch.empty(6)).shape == (6,)
    assert opdispatch.ones(1, 3).expand_as(x).shape == (2, 3)


# What PyTorch 2.13 raises for each, with its message.
CHECKS = [
    (lambda: opdispatch._check(False), RuntimeError, "Expected cond to be True, but got False"),
    (lambda: opdispatch._check(False, lambda: "boom"), RuntimeError, "^boom$"),
    (lambda: opdispatch._check(False, lambda: 42), RuntimeError, "^42$"),
    (lambda: opdispatch._check(False, "boom"), TypeError, "message must be a callable"),
    (lambda: opdispatch._check(1), TypeError, "cond must be a bool, but got <class 'int'>"),
    (lambda: opdispatch._check(np.bool_(True)), TypeError, "cond must be a bool, but got <class 'numpy.bool'>"),
    (lambda: opdispatch._check(opdispatch.tensor(True)), TypeError, "cond must be a bool, but got a Tensor"),
    (lambda: opdispatch._check_index(False, lambda: "idx"), IndexError, "idx"),
    (lambda: opdispatch._check_value(False), ValueError, "Expected cond to be True"),
    (lambda: opdispatch._check_type(False, lambda: "t"), TypeError, "^t$"),
    (lambda: opdispatch._check_not_implemented(False, lambda: "ni"), NotImplementedError, "ni"),
    (lambda: opdispatch._check_with(KeyError, False, lambda: "k"), KeyError, "k"),
    (lambda: opdispatch._check_with(UserWarning, False, lambda: "k"), AssertionError,
     "error_type must be a subclass of Exception but not Warning"),
    (lambda: opdispatch._check_with(int, False, lambda: "k"), AssertionError, "error_type must be a subclass"),
]


@pytest.mark.parametrize("call, error, message", CHECKS)
def test_check_family_raises_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_check_family_passes_and_evaluates_message_lazily():
    calls = []
    opdispatch._check(True, lambda: calls.append(1))
    opdispatch._check_with(int, True, lambda: "never")  # PyTorch checks error_type only on failure
    assert calls == []


def test_check_is_size():
    with pytest.warns(FutureWarning, match="_check_is_size"):
        opdispatch._check_is_size(3)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="Expected cond to be True"):
        opdispatch._check_is_size(-1)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="too big"):
        opdispatch._check_is_size(5, lambda: "too big", max=4)


# Grad mode is its own thread-local flag (Note [Grad mode is its own flag]).
# Each expectation below is what PyTorch 2.13 gives for the same code with
# torch in place of opdispatch.

def test_no_grad_sets_the_flag_and_excludes_no_key():
    with opdispatch.no_grad():
        assert not opdispatch.is_grad_enabled() and not _C.is_grad_enabled()
        assert not _C._dispatch_tls_is_dispatch_key_excluded(_C.DispatchKey.AutogradCPU)
        with opdispatch.enable_grad():
            assert opdispatch.is_grad_enabled()
    with _C._AutoDispatchBelowAutograd():
        assert opdispatch.is_grad_enabled()  # below autograd, grad mode stays on


def test_grad_mode_is_on_in_a_backend_kernel_and_a_mode_below_autograd(ns):
    from opdispatch.utils._python_dispatch import TorchDispatchMode

    seen = []
    lib = Library(ns, "DEF")
    try:
        lib.define("f(Tensor x) -> Tensor")
        lib.impl("f", lambda x: (seen.append(opdispatch.is_grad_enabled()), x.clone())[1], "CPU")
        x = opdispatch.ones(2, requires_grad=True)
        out = getattr(ops, ns).f(x)
        assert seen == [True] and out.requires_grad  # PyTorch: True, and the output requires grad
        with opdispatch.no_grad():
            assert not getattr(ops, ns).f(x).requires_grad
        assert seen == [True, False]
    finally:
        lib._destroy()

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(opdispatch.is_grad_enabled())
            return func(*args, **(kwargs or {}))

    seen.clear()
    with Record():
        y = x * 2
    assert seen == [True] and y.requires_grad and y.grad_fn is not None
    seen.clear()
    with opdispatch.no_grad(), Record():
        y = x * 2
    assert seen == [False] and not y.requires_grad


@pytest.mark.parametrize("formula", [True, False])
def test_custom_op_kernel_runs_with_grad_mode_off_when_recorded(ns, formula):
    # PyTorch: a custom_op always has an autograd kernel, an autograd.Function whose forward runs under
    # no_grad; without register_autograd its backward raises.
    seen = []

    @library.custom_op(f"{ns}::g", mutates_args=())
    def g(x: opdispatch.Tensor) -> opdispatch.Tensor:
        seen.append(opdispatch.is_grad_enabled())
        return x.clone()

    if formula:
        g.register_autograd(lambda ctx, grad: grad)
    x = opdispatch.ones(2, requires_grad=True)
    out = g(x)
    assert seen == [False] and out.requires_grad
    if formula:
        out.sum().backward()
        assert x.grad.numpy().tolist() == [1.0, 1.0]
    else:
        with pytest.raises(RuntimeError, match=rf"^Trying to backward through {ns}.g.default but no autograd "
                                               r"formula was registered. Please use register_autograd to add one.$"):
            out.sum().backward()
    seen.clear()
    g(opdispatch.ones(2))  # nothing requires grad: no autograd.Function, grad mode as the caller's
    assert seen == [True]


def test_autograd_kernel_runs_under_no_grad_and_does_not_record(ns):
    # PyTorch: an Autograd-key kernel still runs under no_grad (grad mode is a flag, not an excluded key).
    calls = []
    lib = Library(ns, "DEF")
    try:
        lib.define("h(Tensor x) -> Tensor")
        lib.impl("h", lambda x: x.clone(), "CPU")

        def autograd_kernel(keyset, x):
            calls.append(opdispatch.is_grad_enabled())
            with _C._AutoDispatchBelowAutograd():
                return getattr(ops, ns).h(x)

        lib.impl("h", autograd_kernel, "Autograd", with_keyset=True)
        x = opdispatch.ones(2, requires_grad=True)
        with opdispatch.no_grad():
            getattr(ops, ns).h(x)
            assert not (x * 2).requires_grad and (x * 2).grad_fn is None
        assert calls == [False]
    finally:
        lib._destroy()


def test_numpy_of_a_tensor_that_requires_grad_follows_grad_mode():
    x = opdispatch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="requires grad"):
        x.numpy()
    with opdispatch.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0]
