"""opdispatch.library: Library (define / impl / fallback / _destroy), the free
functions define and impl (and their legacy forms), device strings, Tags,
registration lifetime. Ported from PyTorch's test/test_custom_ops.py (seed 003)
where a test of the same name exists there."""
from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, library, ops
from opdispatch.library import Library, Tag, _scoped_library, fallthrough_kernel
from _helpers import as_numpy, tensor


def randn(n: int) -> opdispatch.Tensor:
    return tensor(np.random.default_rng(0).standard_normal(n))


def numpy_sin(x):
    return opdispatch.from_numpy(np.sin(as_numpy(x)))


def op_names(ns: str) -> list[str]:
    return [n for n in _C._dispatch_get_all_op_names() if n.startswith(ns + "::")]


# --- seed 003 ports ------------------------------------------------------------------


def test_define_and_impl(ns, lib):
    library.define(f"{ns}::foo", "(Tensor x) -> Tensor", lib=lib)

    @library.impl(f"{ns}::foo", "CPU", lib=lib)
    def f(x):
        return numpy_sin(x)

    x = randn(3)
    y = getattr(ops, ns).foo(x)
    np.testing.assert_allclose(y.numpy(), np.sin(x.numpy()))


def test_define_validation():
    with pytest.raises(ValueError, match="namespace"):
        library.define("foo", "(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="expected qualname to be instance of str"):
        library.define(3, "(Tensor x) -> Tensor")


def test_define_bad_schema(ns, lib):
    with pytest.raises(ValueError, match="expected schema to look like"):
        library.define(f"{ns}::foo", "foo(Tensor x) -> Tensor", lib=lib)
    assert op_names(ns) == []


def test_legacy_define(ns, lib):
    @library.define(lib, "foo(Tensor x) -> Tensor")
    def f(x):
        return numpy_sin(x)

    assert f.__name__ == "f"  # the decorator returns the function
    x = randn(3)
    np.testing.assert_allclose(getattr(ops, ns).foo(x).numpy(), np.sin(x.numpy()))
    # Registered as the CompositeImplicitAutograd kernel.
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CompositeImplicitAutograd")


def test_impl_function(ns, lib):
    library.define(f"{ns}::foo", "(Tensor x) -> Tensor", lib=lib)
    result = library.impl(f"{ns}::foo", "CPU", numpy_sin, lib=lib)
    assert result is numpy_sin
    x = randn(3)
    np.testing.assert_allclose(getattr(ops, ns).foo(x).numpy(), np.sin(x.numpy()))


def test_legacy_impl(ns, lib):
    library.define(f"{ns}::foo", "(Tensor x) -> Tensor", lib=lib)

    @library.impl(lib, "foo", "CPU")
    def f(x):
        return numpy_sin(x)

    assert callable(f)
    x = randn(3)
    np.testing.assert_allclose(getattr(ops, ns).foo(x).numpy(), np.sin(x.numpy()))
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CPU")


def test_defined_in_python(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("bar.overload(Tensor x) -> Tensor")
    # Defined through _C directly (as a C++ library would): not from opdispatch.library.
    cpp_lib = _C._dispatch_library("FRAGMENT", ns, "")
    cpp_lib.def_("baz(Tensor x) -> Tensor")
    namespace = getattr(ops, ns)
    assert namespace.foo.default._defined_in_python
    assert namespace.bar.overload._defined_in_python
    assert not namespace.baz.default._defined_in_python
    cpp_lib.reset()
    lib._destroy()
    assert f"{ns}::foo" not in library._defs


def _check_impl_device(ns, name, types):
    lib = Library(ns, "FRAGMENT")
    try:
        library.define(f"{ns}::{name}", "(Tensor x) -> Tensor", lib=lib)

        @library.impl(f"{ns}::{name}", types)
        def f(x):
            return numpy_sin(x)

        x = randn(3)
        y = getattr(getattr(ops, ns), name)(x)
        np.testing.assert_allclose(y.numpy(), np.sin(x.numpy()))
    finally:
        lib._destroy()


def test_impl_device_cpu(ns):
    _check_impl_device(ns, "foo1", "default")
    _check_impl_device(ns, "foo2", ["cpu"])
    _check_impl_device(ns, "foo3", ["cpu", "cuda"])


def test_impl_device_keys(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    library.impl(f"{ns}::foo", ["cpu", "cuda", "meta", "privateuseone"], numpy_sin, lib=lib)
    library.impl(f"{ns}::foo", "default", numpy_sin, lib=lib)
    library.impl(f"{ns}::foo", "AutogradCPU", numpy_sin, lib=lib)  # a raw dispatch key name
    for key in ["CPU", "CUDA", "Meta", "PrivateUse1", "CompositeExplicitAutograd", "AutogradCPU"]:
        assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", key), key


def test_impl_device_function(ns, lib):
    library.define(f"{ns}::foo", "(Tensor x) -> Tensor", lib=lib)
    library.impl(f"{ns}::foo", "default", numpy_sin, lib=lib)
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CompositeExplicitAutograd")
    x = randn(3)
    np.testing.assert_allclose(getattr(ops, ns).foo(x).numpy(), np.sin(x.numpy()))


def test_impl_device_invalid():
    with pytest.raises(ValueError, match="Expected one of cpu, cuda"):
        library.impl("blah::blah", "somethingsomething")
    with pytest.raises(ValueError, match="somethingsomething"):
        library.impl("blah::blah", ["cpu", "somethingsomething"])


@pytest.mark.parametrize(
    "tags", [Tag.pointwise, (Tag.pointwise,), [Tag.pointwise, Tag.pt2_compliant_tag]], ids=["single", "tuple", "list"]
)
def test_define_with_tags(ns, lib, tags):
    library.define(f"{ns}::foo", "(Tensor x) -> Tensor", lib=lib, tags=tags)
    actual = getattr(ops, ns).foo.default.tags
    assert isinstance(actual, list)
    assert actual == ([tags] if isinstance(tags, Tag) else list(tags))


def test_lifetime(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="multiple times"):
        lib.define("foo(Tensor x) -> Tensor")
    other = Library(ns, "FRAGMENT")
    with pytest.raises(RuntimeError, match="multiple times"):
        other.define("foo(Tensor y) -> Tensor")
    other._destroy()
    lib._destroy()
    # Smoke test: the name can be defined again once the first definition is gone.
    lib = Library(ns, "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    lib._destroy()


def test_reserved_ns():
    for kind in ["DEF", "FRAGMENT"]:
        with pytest.raises(ValueError, match="is a reserved namespace"):
            Library("prim", kind)
    Library("prim", "IMPL", "CPU")._destroy()  # kernels for prim ops are fine


# --- Library -------------------------------------------------------------------------


def test_library_kind_and_key_are_validated(ns):
    with pytest.raises(ValueError, match="Unsupported kind"):
        Library(ns, "DEFINE")
    with pytest.raises(ValueError, match="NotAKey"):
        Library(ns, "IMPL", "NotAKey")
    with pytest.raises(ValueError, match="reserved"):
        Library("_", "DEF")


def test_second_def_library_for_a_namespace_names_both_sites(ns):
    first = Library(ns, "DEF")
    try:
        with pytest.raises(RuntimeError, match=r"Only a single OPDISPATCH_LIBRARY") as e:
            Library(ns, "DEF")
        # Both sites are lines of this file.
        assert str(e.value).count(__file__) == 2
        Library(ns, "FRAGMENT")._destroy()  # fragments can join a DEF namespace
    finally:
        first._destroy()
    Library(ns, "DEF")._destroy()  # the namespace is free again


def test_define_returns_the_qualified_name(ns, lib):
    assert lib.define("foo(Tensor x) -> Tensor") == f"{ns}::foo"
    assert lib.define("foo.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)") == f"{ns}::foo.out"
    assert lib.define(f"{ns}::bar(Tensor x) -> Tensor") == f"{ns}::bar"
    assert sorted(op_names(ns)) == [f"{ns}::bar", f"{ns}::foo", f"{ns}::foo.out"]


def test_define_errors(ns, lib):
    with pytest.raises(RuntimeError, match="Invalid alias_analysis"):
        lib.define("foo(Tensor x) -> Tensor", alias_analysis="PURE")
    with pytest.raises(ValueError, match="position"):
        lib.define("foo(Tensor x -> Tensor")
    with pytest.raises(RuntimeError, match="does not match the namespace"):
        lib.define("other_ns::foo(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="opdispatch.Tag"):
        lib.define("foo(Tensor x) -> Tensor", tags=("pointwise",))
    impl_lib = Library(ns, "IMPL", "CPU")
    with pytest.raises(RuntimeError, match="Cannot define an operator inside"):
        impl_lib.define("foo(Tensor x) -> Tensor")
    impl_lib._destroy()
    assert op_names(ns) == []  # failed definitions leave nothing behind
    lib.define("foo(Tensor x) -> Tensor", alias_analysis="CONSERVATIVE")


def test_impl_accepts_names_and_opoverloads(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.define("foo.int(Tensor x, int n) -> Tensor")
    lib.impl("foo", numpy_sin, "CPU")
    lib.impl(getattr(ops, ns).foo.int, lambda x, n: tensor(x.numpy() * n), "CPU")
    lib.impl(f"{ns}::foo", numpy_sin, "Meta")
    x = tensor([1.0, 2.0])
    np.testing.assert_allclose(getattr(ops, ns).foo.int(x, 3).numpy(), [3.0, 6.0])
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "Meta")


def test_impl_argument_errors(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="callable"):
        lib.impl("foo", 3, "CPU")
    with pytest.raises(RuntimeError, match="either a name or an OpOverload"):
        lib.impl(3, numpy_sin, "CPU")
    with pytest.raises(ValueError, match="NotAKey"):
        lib.impl("foo", numpy_sin, "NotAKey")
    with pytest.raises(RuntimeError, match="does not match the namespace"):
        lib.impl("other_ns::foo", numpy_sin, "CPU")
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CPU")
    # A failed registration does not count as the (op, key)'s Python kernel.
    lib.impl("foo", numpy_sin, "CPU")


def test_impl_default_key_is_composite_implicit_autograd(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", numpy_sin)
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CompositeImplicitAutograd")
    impl_lib = Library(ns, "IMPL", "Meta")
    try:
        with pytest.raises(RuntimeError, match="should not register a meta kernel"):
            impl_lib.impl("foo", numpy_sin)
        with pytest.raises(RuntimeError, match="inconsistent with the dispatch key"):
            impl_lib.impl("foo", numpy_sin, "CPU")
    finally:
        impl_lib._destroy()


def test_impl_library_uses_its_dispatch_key(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    impl_lib = Library(ns, "IMPL", "CPU")
    impl_lib.impl("foo", numpy_sin)
    assert _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CPU")
    impl_lib._destroy()
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CPU")


def test_duplicate_python_kernel_names_both_sites(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", numpy_sin, "CPU")  # first site
    first_line = test_duplicate_python_kernel_names_both_sites.__code__.co_firstlineno + 2
    other = Library(ns, "FRAGMENT")
    try:
        with pytest.raises(RuntimeError, match="already a kernel registered from python") as e:
            other.impl("foo", numpy_sin, "CPU")  # second site
        message = str(e.value)
        assert f"{ns}::foo" in message and "CPU" in message
        assert f"{__file__}:{first_line}" in message
        assert f"{__file__}:{first_line + 5}" in message
        # Same key via the free function, and with an OpOverload: still the same (op, key).
        with pytest.raises(RuntimeError, match="already a kernel registered from python"):
            library.impl(f"{ns}::foo", "cpu", numpy_sin, lib=other)
        with pytest.raises(RuntimeError, match="already a kernel registered from python"):
            other.impl(getattr(ops, ns).foo.default, numpy_sin, "CPU")
        other.impl("foo", numpy_sin, "Meta")  # another key is fine
    finally:
        other._destroy()
    lib._destroy()
    # Once the first library is gone the (op, key) is free again.
    again = Library(ns, "FRAGMENT")
    again.define("foo(Tensor x) -> Tensor")
    again.impl("foo", numpy_sin, "CPU")
    again._destroy()


def test_registration_site_is_recorded(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    line = test_registration_site_is_recorded.__code__.co_firstlineno + 3
    lib.impl("foo", numpy_sin, "CPU")
    assert f"CPU: registered at {__file__}:{line}" in _C._dispatch_dump(f"{ns}::foo")


def test_fallthrough_kernel(ns, lib):
    with pytest.raises(NotImplementedError):
        fallthrough_kernel()
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", numpy_sin, "CPU")
    lib.impl("foo", lambda x: tensor([-1.0]), "Autograd")
    lib.impl("foo", fallthrough_kernel, "AutogradCPU")
    assert _C._dispatch_kernel_for_dispatch_key_is_fallthrough(f"{ns}::foo", _C.DispatchKey.AutogradCPU)
    x = tensor([0.5])
    x.requires_grad = True
    np.testing.assert_allclose(getattr(ops, ns).foo(x).numpy(), np.sin([0.5]), rtol=1e-6)  # skipped AutogradCPU


def test_fallback_requires_the_fallback_namespace(ns, lib):
    with pytest.raises(RuntimeError, match='global namespace "_"'):
        lib.fallback(lambda op, *a, **k: None, "PrivateUse1")
    fb = Library("_", "IMPL")
    try:
        with pytest.raises(ValueError, match="needs a dispatch key"):
            fb.fallback(lambda op, *a, **k: None)
        with pytest.raises(TypeError, match="callable"):
            fb.fallback(3, "PrivateUse1")
        fb.fallback(lambda op, *a, **k: None, "PrivateUse1")
        other = Library("_", "IMPL")
        with pytest.raises(RuntimeError, match="multiple backend fallbacks"):
            other.fallback(lambda op, *a, **k: None, "PrivateUse1")
        other._destroy()
    finally:
        fb._destroy()
    assert not _C._dispatch_has_backend_fallback(_C.DispatchKey.PrivateUse1)


# --- lifetime ------------------------------------------------------------------------


def test_destroy_undoes_everything_and_ops_forgets(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", numpy_sin, "CPU")
    namespace = getattr(ops, ns)
    packet = namespace.foo
    assert "foo" in vars(namespace)
    lib._destroy()
    lib._destroy()  # idempotent
    assert op_names(ns) == []
    assert "foo" not in vars(namespace)
    assert not hasattr(namespace, "foo")
    assert packet.overloads() == []
    assert f"{ns}/foo/CPU" not in library._impls
    with pytest.raises(RuntimeError, match="was destroyed"):
        lib.define("bar(Tensor x) -> Tensor")
    with pytest.raises(RuntimeError, match="was destroyed"):
        lib.impl("foo", numpy_sin, "CPU")


def test_ops_caches_a_packet_without_interning_the_operator_name(ns):
    # A fresh operator name (built at run time, as a program defining
    # operators of new names builds them) stays out of CPython's table of
    # interned strings while ops caches its packet: interning every name cost
    # an entry of that process-wide table per operator and most of the extra
    # time and memory of a unique-name cycle (Note [Packets are cached without
    # setattr], issue 9). Before: the name object itself became the interned one.
    name = "".join(["fresh_", "op"])
    lib = Library(ns, "FRAGMENT")
    lib.define(f"{name}(Tensor x) -> Tensor")
    lib.impl(name, numpy_sin, "CPU")
    namespace = getattr(ops, ns)
    try:
        packet = getattr(namespace, name)
        assert vars(namespace)[name] is packet
        assert getattr(namespace, "".join(["fresh_", "op"])) is packet
        assert sys.intern("".join(["fresh_", "op"])) is not name
    finally:
        lib._destroy()
    assert name not in vars(namespace)


def test_garbage_collection_undoes_registrations(ns):
    lib = Library(ns, "FRAGMENT")
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", numpy_sin, "CPU")
    assert getattr(ops, ns).foo(tensor([0.0])).numpy()[0] == 0.0
    del lib
    gc.collect()
    assert op_names(ns) == []
    assert not hasattr(getattr(ops, ns), "foo")
    # The namespace and the operator name can be reused.
    lib = Library(ns, "FRAGMENT")
    lib.define("foo(Tensor x, int n) -> Tensor")
    lib.impl("foo", lambda x, n: tensor(x.numpy() + n), "CPU")
    np.testing.assert_allclose(getattr(ops, ns).foo(tensor([1.0]), 2).numpy(), [3.0])
    lib._destroy()


def test_impl_only_library_lifetime(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    impls = Library(ns, "IMPL", "CPU")
    impls.impl("foo", numpy_sin)
    packet = getattr(ops, ns).foo
    del impls
    gc.collect()
    assert not _C._dispatch_has_kernel_for_dispatch_key(f"{ns}::foo", "CPU")
    assert getattr(ops, ns).foo is packet  # the operator itself is still defined
    with pytest.raises(NotImplementedError, match="CPU"):
        packet(tensor([1.0]))


def test_overload_removed_with_its_library(ns, lib):
    lib.define("foo(Tensor x) -> Tensor")
    other = Library(ns, "FRAGMENT")
    other.define("foo.int(Tensor x, int n) -> Tensor")
    packet = getattr(ops, ns).foo
    default = packet.default
    assert packet.overloads() == ["default", "int"]
    assert isinstance(packet.int, opdispatch._ops.OpOverload)
    other._destroy()
    # The packet stays (one overload is left) and forgets the removed one.
    assert getattr(ops, ns).foo is packet
    assert packet.overloads() == ["default"]
    assert "int" not in vars(packet)
    assert not hasattr(packet, "int")
    assert packet.default is default


def test_scoped_library(ns):
    with _scoped_library(ns, "FRAGMENT") as lib:
        lib.define("foo(Tensor x) -> Tensor")
        assert op_names(ns) == [f"{ns}::foo"]
        # The library's site is the `with` line, not contextlib.
        assert __file__ in _C._dispatch_dump(f"{ns}::foo")
    assert op_names(ns) == []
    assert lib.m is None
    with pytest.raises(ZeroDivisionError):
        with _scoped_library(ns, "FRAGMENT") as lib:
            lib.define("foo(Tensor x) -> Tensor")
            1 / 0
    assert op_names(ns) == []


def test_free_functions_keep_their_library_alive(ns):
    library.define(f"{ns}::foo", "(Tensor x) -> Tensor")
    library.impl(f"{ns}::foo", "cpu", numpy_sin)
    gc.collect()
    x = tensor([1.0])
    np.testing.assert_allclose(getattr(ops, ns).foo(x).numpy(), np.sin([1.0]), rtol=1e-6)
    assert len(library._keep_alive) >= 2  # destroyed by the conftest fixture


# --- Tags ----------------------------------------------------------------------------


def test_tags():
    assert opdispatch.Tag is Tag
    for name in ["pt2_compliant_tag", "needs_fixed_stride_order", "flexible_layout", "data_dependent_output",
                 "dynamic_output_shape", "inplace_view", "view_copy", "nondeterministic_seeded", "core",
                 "generated", "pointwise"]:
        assert Tag[name].name == name


def test_tags_from_a_cpp_definition(ns):
    cpp_lib = _C._dispatch_library("FRAGMENT", ns, "")
    cpp_lib.define("foo(Tensor x) -> Tensor", "", ["core", "pointwise"])
    assert getattr(ops, ns).foo.default.tags == [Tag.core, Tag.pointwise]
    # C++ tags are opdispatch::Tag members (PyTorch: at::Tag): an unknown name defines nothing.
    with pytest.raises(ValueError, match="unknown operator tag 'my_custom_tag'; valid tags are: core, "):
        cpp_lib.define("bar(Tensor x) -> Tensor", "", ["my_custom_tag"])
    assert not _C._dispatch_has_kernel(f"{ns}::bar")
    cpp_lib.reset()


def test_missing_kernel_error_names_a_kernel_registered_for_a_misspelled_operator(ns):
    defining = Library(ns, "DEF")
    kernels = Library(ns, "IMPL", "CPU")
    try:
        defining.define("foo(Tensor x) -> Tensor")
        kernels.impl("fooo", lambda x: x)  # a typo: accepted, as PyTorch accepts an impl before its def
        with pytest.raises(NotImplementedError, match=rf"Kernels were registered for '{ns}::fooo', which no "
                                                      rf"definition names: did you mean to register them for "
                                                      rf"'{ns}::foo'\?"):
            getattr(opdispatch.ops, ns).foo(opdispatch.ones(2))
        defining.define("bar(Tensor x) -> Tensor")
        with pytest.raises(NotImplementedError) as e:
            getattr(opdispatch.ops, ns).bar(opdispatch.ones(2))
        assert "Kernels were registered for" not in str(e.value)
    finally:
        kernels._destroy()
        defining._destroy()


def test_second_def_library_error_speaks_python_as_well_as_cpp(ns):
    first = Library(ns, "DEF")
    try:
        with pytest.raises(RuntimeError) as e:
            Library(ns, "DEF")
        message = str(e.value)
        for python_form in (f'Library("{ns}", "DEF")', f'Library("{ns}", "IMPL", key)', f'Library("{ns}", "FRAGMENT")',
                            "_destroy()"):
            assert python_form in message
    finally:
        first._destroy()


def test_duplicate_python_kernel_error_says_how_to_drop_the_first(lib):
    lib.define("foo(Tensor x) -> Tensor")
    lib.impl("foo", lambda x: x, "CPU")
    with pytest.raises(RuntimeError, match=r"drop the Library object, or call its _destroy\(\)"):
        lib.impl("foo", lambda x: x, "CPU")
