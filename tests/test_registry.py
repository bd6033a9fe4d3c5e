"""The Python registry (opdispatch/_library/registry.py, Note [The Python
registry]): every way of registering from Python is undone by its teardown,
leaving the dispatcher, library._impls, library._defs, the
fake-impl holders, the custom-op tables and opdispatch.ops exactly as
before; a registration that fails changes none of them; alias_analysis is
checked in one place."""
from __future__ import annotations

import gc
from typing import Callable

import pytest

import opdispatch
import opdispatch._custom_ops as legacy_api
from opdispatch import Tensor, _C, library, ops
from opdispatch._library import legacy_custom_op, registry
from opdispatch._ops import OpOverloadPacket
from opdispatch.library import Library, _scoped_library, custom_op, fallthrough_kernel

# The operators every snapshot looks at: the ones the `base` fixture defines,
# and every name a way of registering below defines.
BASE_OPS = ("base", "other")
NEW_OPS = ("newop", "newop.out", "cop", "cmut", "legacy_op")
# Keys the fallback ways register at (no default fallback of opdispatch's).
FALLBACK_KEYS = ("XLA", "MPS")


def snapshot(ns: str) -> dict[str, object]:
    """Everything a registration from Python can change, for operators of ``ns``."""
    names = [f"{ns}::{n}" for n in BASE_OPS + NEW_OPS]
    namespace = ops.__dict__.get(ns)
    packets = {} if namespace is None else {
        name: tuple(p._overload_names) for name, p in vars(namespace).items() if isinstance(p, OpOverloadPacket)}
    return {
        "dump": {q: _C._dispatch_dump(q) for q in names},
        "table": {q: _C._dispatch_dump_table(q) for q in names},
        "ops": sorted(n for n in _C._dispatch_get_all_op_names() if n.startswith(ns + "::")),
        "fallbacks": {k: _C._dispatch_has_backend_fallback(k) for k in FALLBACK_KEYS},
        "impls": set(library._impls),
        "defs": set(library._defs),
        "fake": {q: (h, h.kernel) for q, h in registry.fake_holders.items()},
        "custom_op_defs": dict(registry.custom_op_defs),
        "legacy": dict(registry.legacy_custom_ops),
        "packets": packets,
        "rules": {q: list(r) for q, r in RULES.items()},
        "torch_dispatch_rules": {q: dict(r) for q, r in _torch_dispatch_rules().items()},
    }


def _torch_dispatch_rules() -> dict[str, dict[type, object]]:
    """register_torch_dispatch's table, where it exists."""
    try:
        from opdispatch.utils._python_dispatch import _torch_dispatch_rules as rules
    except ImportError:
        return {}
    return rules


def identity(x):
    return x


def double(x):
    return x * 2


def backward(ctx, grad):
    return grad * 2


@pytest.fixture
def base(ns):
    """``ns::base`` (a CPU kernel) and ``ns::other`` (no kernel), defined for
    the whole test; their packets exist before the first snapshot."""
    lib = Library(ns, "FRAGMENT")
    lib.define("base(Tensor x) -> Tensor")
    lib.define("other(Tensor x) -> Tensor")
    lib.impl("base", double, "CPU")
    getattr(ops, ns).base, getattr(ops, ns).other
    yield ns
    lib._destroy()


# Each way registers in namespace ``ns`` (the base ops exist) and returns its teardown.
Way = Callable[[str], Callable[[], None]]


def library_methods(ns: str) -> Callable[[], None]:
    lib = Library(ns, "FRAGMENT")
    lib.define("newop(Tensor x) -> Tensor", tags=opdispatch.Tag.pointwise)
    lib.define("newop.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)", alias_analysis="FROM_SCHEMA")
    lib.impl("newop", double, "CPU")
    lib.impl(getattr(ops, ns).newop.default, identity, "AutogradCPU")
    lib.impl("base", fallthrough_kernel, "XLA")
    lib.impl(f"{ns}::base", lambda keyset, x: x, "CUDA", with_keyset=True)
    lib._register_fake("newop", identity)
    lib._register_fake("base", identity)
    assert getattr(ops, ns).newop(opdispatch.ones(1)).tolist() == [2.0]
    return lib._destroy


def library_define_def_kind(ns: str) -> Callable[[], None]:
    lib = Library(ns, "DEF", "CPU")
    lib.define("newop(Tensor x) -> Tensor")
    lib.impl("newop", double)  # at the library's key
    return lib._destroy


def library_fallback(ns: str) -> Callable[[], None]:
    lib = Library("_", "IMPL", "XLA")
    lib.fallback(lambda op, *args, **kwargs: None)
    lib.fallback(fallthrough_kernel, "MPS")
    return lib._destroy


def free_functions_with_lib(ns: str) -> Callable[[], None]:
    lib = Library(ns, "FRAGMENT")
    library.define(f"{ns}::newop", "(Tensor x) -> Tensor", lib=lib)
    library.impl(f"{ns}::newop", "cpu", double, lib=lib)
    library.impl(lib, "newop", "AutogradCPU")(identity)
    library.define(lib, "cop(Tensor x) -> Tensor")(double)
    library.register_kernel(f"{ns}::base", "cuda", identity, lib=lib)
    library.register_kernel(f"{ns}::other", None, double, lib=lib)
    library.register_fake(f"{ns}::newop", identity, lib=lib)
    library.register_autograd(f"{ns}::base", backward, lib=lib)
    assert getattr(ops, ns).cop(opdispatch.ones(1)).tolist() == [2.0]
    return lib._destroy


def scoped_library(ns: str) -> Callable[[], None]:
    scope = _scoped_library(ns, "FRAGMENT")
    lib = scope.__enter__()
    lib.define("newop(Tensor x) -> Tensor")
    lib.impl("newop", double, "CPU")
    library.register_fake(f"{ns}::base", identity, lib=lib)
    library.register_autograd(f"{ns}::newop", backward, lib=lib)
    return lambda: scope.__exit__(None, None, None)


def collected_library(ns: str) -> Callable[[], None]:
    held = [Library(ns, "FRAGMENT")]
    held[0].define("newop(Tensor x) -> Tensor")
    held[0].impl("newop", double, "CPU")
    held[0]._register_fake("base", identity)

    def drop() -> None:
        held.clear()
        gc.collect()

    return drop


def kept_alive_libraries(ns: str) -> Callable[[], None]:
    # define / impl / register_* without lib= keep their library for the
    # process; destroying those libraries (as the test fixtures do) undoes them.
    kept = len(library._keep_alive)
    library.define(f"{ns}::newop", "(Tensor x) -> Tensor")
    library.impl(f"{ns}::newop", "default", double)
    library.register_fake(f"{ns}::newop", identity)
    library.register_autograd(f"{ns}::newop", backward)
    library.register_kernel(f"{ns}::base", "cuda", identity)

    def destroy() -> None:
        for lib in library._keep_alive[kept:]:
            lib._destroy()
        del library._keep_alive[kept:]

    return destroy


def custom_op_methods(ns: str) -> Callable[[], None]:
    @custom_op(f"{ns}::cop", mutates_args=(), device_types="cpu")
    def cop(x: Tensor, *, n: int = 1) -> Tensor:
        return x * n

    cop.register_kernel("cuda", lambda x, *, n=1: x.clone())
    cop.register_kernel("cpu", lambda x, *, n=1: x + n)  # replaces the first cpu kernel
    cop.register_kernel("cpu", lambda x, *, n=1: x - n)  # replaces the replacement
    cop.register_fake(lambda x, *, n=1: opdispatch.empty_like(x))
    cop.register_fake(lambda x, *, n=1: x.clone())
    cop.register_autograd(lambda ctx, grad: grad)
    library.register_kernel(cop, None, lambda x, *, n=1: x.clone())
    library.register_fake(f"{ns}::cop", lambda x, *, n=1: x.clone())
    library.register_autograd(cop._opoverload, lambda ctx, grad: grad * 3)
    with cop.set_kernel_enabled("cpu", False):
        assert cop(opdispatch.ones(1), n=3).tolist() == [3.0]
    assert cop(opdispatch.ones(1), n=3).tolist() == [-2.0]

    @custom_op(f"{ns}::cmut", mutates_args=("x",), schema="(Tensor(a0!) x) -> ()")
    def cmut(x):
        x.add_(1)

    return lambda: (cop._destroy(), cmut._destroy())


def legacy_custom_ops(ns: str) -> Callable[[], None]:
    qualname = f"{ns}::legacy_op"

    @legacy_api.custom_op(qualname)
    def legacy_op(x: Tensor) -> Tensor:
        ...

    legacy_api.impl(qualname, device_types="cpu", func=double)
    legacy_api.impl_abstract(qualname, func=lambda x: opdispatch.empty_like(x))
    legacy_api.impl_save_for_backward(qualname, func=lambda inputs, output: None)
    legacy_api.impl_backward(qualname, func=lambda ctx, saved, grad: {"x": grad * 2})
    assert getattr(ops, ns).legacy_op(opdispatch.ones(1)).tolist() == [2.0]
    # The legacy API on an operator defined otherwise: a CustomOp of its own.
    # (The module-level impl_abstract registers through a kept-alive Library,
    # as in PyTorch: the CustomOp's method ties the fake impl to the CustomOp.)
    legacy_api.impl(f"{ns}::other", device_types="cuda", func=identity)
    legacy_custom_op.find_custom_op(f"{ns}::other").impl_abstract()(identity)

    def destroy() -> None:
        legacy_api._destroy(qualname)
        legacy_custom_op.global_registry[f"{ns}::other"]._destroy()

    return destroy


def legacy_custom_op_from_schema(ns: str) -> Callable[[], None]:
    legacy_api.custom_op(f"{ns}::legacy_op", "(Tensor x) -> Tensor")
    legacy_api.impl(f"{ns}::legacy_op", func=double)
    return lambda: legacy_api._destroy(f"{ns}::legacy_op")


def handle_of_a_library(ns: str) -> Callable[[], None]:
    # A registration kept outside the dispatcher, undone with the library
    # (PyTorch appends such handles to Library._registration_handles).
    lib = Library(ns, "FRAGMENT")
    lib.impl("other", identity, "CPU")
    rules = RULES.setdefault(f"{ns}::other", [])
    lib._register_handle(rules.pop)
    rules.append(identity)
    lib._registration_handles.append(registry.RegistrationHandle(lambda: RULES.pop(f"{ns}::other")))
    return lib._destroy


# A table outside the registry, for handle_of_a_library.
RULES: dict[str, list[Callable[..., object]]] = {}

WAYS: list[Way] = [library_methods, library_define_def_kind, library_fallback, free_functions_with_lib,
                   scoped_library, collected_library, kept_alive_libraries, custom_op_methods, legacy_custom_ops,
                   legacy_custom_op_from_schema, handle_of_a_library]

if hasattr(library, "register_torch_dispatch"):  # (the Python key's API, where present)
    def torch_dispatch_rule(ns: str) -> Callable[[], None]:
        class Mode:
            pass

        lib = Library(ns, "FRAGMENT")
        library.register_torch_dispatch(f"{ns}::base", Mode, identity, lib=lib)
        library.register_kernel(f"{ns}::base", "cuda", identity, lib=lib)
        return lib._destroy

    WAYS.append(torch_dispatch_rule)


@pytest.mark.parametrize("way", WAYS, ids=[w.__name__ for w in WAYS])
def test_teardown_restores_everything(base, way):
    ns = base
    before = snapshot(ns)
    teardown = way(ns)
    during = snapshot(ns)
    changed = {k for k in before if before[k] != during[k]}
    assert "dump" in changed or "fallbacks" in changed
    teardown()
    after = snapshot(ns)
    for key in before:
        assert after[key] == before[key], key


def test_registering_again_after_teardown(base):
    # A teardown frees every slot it held: the same registrations succeed again.
    ns = base
    for _ in range(2):
        library_methods(ns)()
        custom_op_methods(ns)()
        legacy_custom_ops(ns)()


def test_failed_registrations_change_nothing(base):
    ns = base
    lib = Library(ns, "FRAGMENT")
    lib.define("newop(Tensor x) -> Tensor")
    lib.impl("newop", identity, "CPU")
    before = snapshot(ns)
    other = Library(ns, "FRAGMENT")
    with pytest.raises(RuntimeError, match="already a kernel registered from python"):
        other.impl("newop", double, "CPU")
    with pytest.raises(RuntimeError, match="already a kernel registered from python"):
        other.impl("base", double, "CPU")  # the base library's slot
    with pytest.raises(RuntimeError, match="Invalid alias_analysis"):
        other.define("cop(Tensor x) -> Tensor", alias_analysis="PURE_FUNCTION")
    with pytest.raises(ValueError):
        other.impl("newop", double, "NoSuchKey")
    with pytest.raises(ValueError, match="is not defined"):
        library.register_fake(f"{ns}::nope", identity, lib=other)
    with pytest.raises(NotImplementedError, match="kwarg-only Tensor"):
        @custom_op(f"{ns}::cop", mutates_args=())
        def cop(x: Tensor, *, y: Tensor) -> Tensor:
            return x

    with pytest.raises(RuntimeError):  # the name is taken by a Library's definition
        @custom_op(f"{ns}::newop", mutates_args=())
        def newop(x: Tensor) -> Tensor:
            return x

    assert snapshot(ns) == before
    other._destroy()
    lib._destroy()


def test_meta_kernel_on_a_decomposing_operator_is_refused(ns, lib):
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", identity)  # CompositeImplicitAutograd
    with pytest.raises(RuntimeError, match="should not register a meta kernel"):
        lib.impl("f", identity, "Meta")
    assert f"{ns}/f/Meta" not in library._impls


def test_alias_analysis_is_checked_by_the_definition(ns, lib):
    # Library.define, the legacy define(lib, schema, alias_analysis) and the
    # registrations custom ops use all define through _C._library_define,
    # which checks it before anything is registered (Note [Registration fast path]).
    lib.define("f(Tensor x) -> Tensor", alias_analysis="CONSERVATIVE")
    library.define(lib, "g(Tensor x) -> Tensor", "FROM_SCHEMA")(identity)
    library.define(f"{ns}::h", "(Tensor x) -> Tensor", lib=lib)
    assert {f"{ns}::f", f"{ns}::g", f"{ns}::h"} <= library._defs
    for bad in ("PURE_FUNCTION", "conservative", "x"):
        with pytest.raises(RuntimeError, match=f"Invalid alias_analysis type '{bad}'"):
            library.define(lib, "k(Tensor x) -> Tensor", bad)(identity)
        with pytest.raises(RuntimeError, match=f"Invalid alias_analysis type '{bad}'"):
            lib.define("k(Tensor x) -> Tensor", alias_analysis=bad)
        with pytest.raises(RuntimeError, match=f"Invalid alias_analysis type '{bad}'"):
            lib._registrations.define("k(Tensor x) -> Tensor", bad)
    assert f"{ns}::k" not in library._defs and f"{ns}::k" not in lib._op_defs
    assert not _C._dispatch_has_kernel(f"{ns}::k")


def test_tables_are_seed_000s(ns, lib):
    # library._impls / _defs are the registry's tables (seed 000 names), and
    # a legacy CustomOp and a CustomOpDef are found through registry tables.
    assert library._impls is registry.impls and library._defs is registry.defs
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", identity, "CPU")
    assert f"{ns}/f/CPU" in library._impls and f"{ns}::f" in library._defs
    assert lib._op_impls == {f"{ns}/f/CPU"} and lib._op_defs == {f"{ns}::f"}
    assert getattr(ops, ns).f.default._defined_in_python

    @custom_op(f"{ns}::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x.clone()

    assert registry.custom_op_defs[f"{ns}::g"] is g
    assert registry.fake_holders[f"{ns}::g"] is g._fake
    g._destroy()
    assert f"{ns}::g" not in registry.custom_op_defs and f"{ns}::g" not in registry.fake_holders
    lib._destroy()
    assert f"{ns}/f/CPU" not in library._impls and f"{ns}::f" not in library._defs
    assert not lib._op_impls and not lib._op_defs and lib.m is None


def test_registering_through_destroyed_registrations_raises(ns):
    @custom_op(f"{ns}::f", mutates_args=())
    def f(x: Tensor) -> Tensor:
        return x.clone()

    f._destroy()
    with pytest.raises(RuntimeError, match="its definition was removed"):
        f.register_kernel("cpu", identity)  # (the operator object finds no schema first)
    with pytest.raises(RuntimeError, match="registrations that were destroyed"):
        f.register_kernel(None, identity)
    with pytest.raises(RuntimeError, match="registrations that were destroyed"):
        f.register_fake(identity)
    assert f"{ns}::f" not in library._defs and f"{ns}::f" not in registry.fake_holders
    lib = Library(ns, "FRAGMENT")
    lib._destroy()
    with pytest.raises(RuntimeError, match="was destroyed"):
        lib.define("g(Tensor x) -> Tensor")
