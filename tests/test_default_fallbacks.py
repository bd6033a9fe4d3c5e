"""The fallbacks opdispatch installs itself are defaults a user's fallback
replaces (Note [Default fallbacks] in csrc/opdispatch/dispatch/BackendFallbacks.h):
an out-of-tree device plugin registers its AutogradPrivateUse1 fallback as it
would with PyTorch, and removing it restores the default."""
from __future__ import annotations

import pytest

import opdispatch
from opdispatch import _C
from opdispatch.library import Library, fallthrough_kernel

DK = _C.DispatchKey


def privateuse1(requires_grad: bool = False):
    t = _C.empty_strided((2,), (1,), opdispatch.float32, "privateuseone")
    t.requires_grad = requires_grad
    return t


def row(table: str, key: str) -> str:
    return next((line for line in table.splitlines() if line.startswith(key + ":")), "")


@pytest.fixture
def op(lib, ns):
    """ns::f(Tensor x) -> Tensor for PrivateUse1 (returns x) and CPU (a new tensor); no autograd formula."""
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x, "PrivateUse1")
    lib.impl("f", lambda x: opdispatch.zeros(x.shape), "CPU")
    return getattr(opdispatch.ops, ns).f.default


def test_a_plugins_autograd_privateuse1_fallback_replaces_the_default_until_it_goes(op):
    default_row = row(_C._dispatch_dump_table(op._name), "AutogradPrivateUse1")
    assert "_library/autograd.py" in default_row and default_row.endswith("[backend fallback]")
    calls = []

    def plugin_fallback(keyset, op_, *args, **kwargs):
        calls.append(op_)
        return op_.redispatch(keyset & _C._after_autograd_keyset, *args, **kwargs)

    plugin = Library("_", "IMPL", "AutogradPrivateUse1")
    plugin.fallback(plugin_fallback, with_keyset=True)  # no "multiple backend fallbacks", as in PyTorch
    try:
        x = privateuse1(requires_grad=True)
        out = op(x)
        assert out is x and calls == [op]
        assert "test_default_fallbacks.py" in row(_C._dispatch_dump_table(op._name), "AutogradPrivateUse1")
        _C._dispatch_check_invariants(op._name)
    finally:
        plugin._destroy()
    assert row(_C._dispatch_dump_table(op._name), "AutogradPrivateUse1") == default_row
    # The default is back: it records a node whose backward raises "derivative ... not implemented".
    out = op(privateuse1(requires_grad=True))
    assert calls == [op] and type(out.grad_fn).__name__ == "NotImplementedNode"


def test_several_plugin_fallbacks_at_autograd_privateuse1_stack_newest_first(op):
    # PyTorch accepts several there, for compatibility; the newest is in effect.
    seen = []

    def fallback(name):
        def fn(keyset, op_, *args, **kwargs):
            seen.append(name)
            return op_.redispatch(keyset & _C._after_autograd_keyset, *args, **kwargs)
        return fn

    first, second = Library("_", "IMPL", "AutogradPrivateUse1"), Library("_", "IMPL", "AutogradPrivateUse1")
    first.fallback(fallback("first"), with_keyset=True)
    second.fallback(fallback("second"), with_keyset=True)
    x = privateuse1(requires_grad=True)
    op(x)
    second._destroy()
    op(x)
    first._destroy()
    op(x)
    assert seen == ["second", "first"]  # then the default, which records nothing here


def test_a_user_fallthrough_replaces_a_default_fallthrough_and_a_second_user_one_is_an_error(op):
    before = _C._dispatch_dump_table(op._name)
    assert "ADInplaceOrView: fallthrough registered at" in before
    user = Library("_", "IMPL", "ADInplaceOrView")
    user.fallback(fallthrough_kernel)
    try:
        assert "test_default_fallbacks.py" in row(_C._dispatch_dump_table(op._name), "ADInplaceOrView")
        other = Library("_", "IMPL", "ADInplaceOrView")
        with pytest.raises(RuntimeError, match="multiple backend fallbacks for the same dispatch key ADInplaceOrView"):
            other.fallback(fallthrough_kernel)
        other._destroy()
    finally:
        user._destroy()
    assert _C._dispatch_dump_table(op._name) == before


def test_a_user_fallback_replaces_the_autograd_default_on_every_autograd_key(op):
    # PyTorch refuses this one at AutogradCPU (only AutogradPrivateUse1 is
    # replaceable there); opdispatch treats every default alike.
    calls = []

    def fallback(keyset, op_, *args, **kwargs):
        calls.append(keyset.highestPriorityTypeId())
        return op_.redispatch(keyset & _C._after_autograd_keyset, *args, **kwargs)

    user = Library("_", "IMPL", "Autograd")
    user.fallback(fallback, with_keyset=True)
    try:
        x = opdispatch.tensor([1.0], requires_grad=True)
        out = op(x)
        assert calls == [DK.AutogradCPU] and out.grad_fn is None  # not the default's not-implemented node
    finally:
        user._destroy()
    out = op(opdispatch.tensor([1.0], requires_grad=True))
    assert out.grad_fn is not None and calls == [DK.AutogradCPU]


def test_a_default_registered_after_a_user_fallback_does_not_replace_it(op):
    calls = []
    user = Library("_", "IMPL", "PrivateUse1")
    user.fallback(lambda op_, x: calls.append("user") or x)
    later = _C._dispatch_register_default_fallback("PrivateUse1", lambda op_, x: calls.append("default") or x,
                                                   debug="registered by the test")
    lib = _C._dispatch_library("FRAGMENT", op._name.split("::")[0], "")
    lib.define("g(Tensor x) -> Tensor")  # no PrivateUse1 kernel: the fallback serves it
    g = getattr(opdispatch.ops, op._name.split("::")[0]).g.default
    try:
        g(privateuse1())
        user._destroy()
        g(privateuse1())
        later.remove()
        assert not _C._dispatch_has_backend_fallback(DK.PrivateUse1)
        with pytest.raises(NotImplementedError, match="PrivateUse1"):
            g(privateuse1())
    finally:
        lib.reset()
        later.remove()
    assert calls == ["user", "default"]
