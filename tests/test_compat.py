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

from _helpers import tensor


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


def test_impls_empty_key_and_composite_implicit_are_one_slot(lib, ns):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x.clone())
    with pytest.raises(RuntimeError, match=f"overriding {ns}::foo's behavior for CompositeImplicitAutograd"):
        lib.impl("foo", lambda x: x.clone(), "CompositeImplicitAutograd")
    assert _impls_of(ns) == [f"{ns}/foo/"]


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
