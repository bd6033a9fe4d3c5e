"""C++ written against PyTorch's names builds and behaves as PyTorch's with
only the name map (tests/name_map/name_map.cpp): the c10::impl TLS guards,
at::AutoDispatchBelow*, grad mode (c10::GradMode, at::NoGradGuard), TORCH_CHECK's
messages with and without a message, and an operator whose fake impl is in a
Python module (set_python_module) under Meta, FakeTensorMode and opcheck.
Expected messages are PyTorch 2.13's for the same code (run with torch, c10::
and TORCH_ spelled as upstream)."""
from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

import opdispatch
from opdispatch import _C, library, ops
from opdispatch._subclasses.fake_tensor import FakeTensorMode

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module", autouse=True)
def extension():
    import opdispatch.cpp_extension as cpp_extension
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPDISPATCH_EXTENSIONS_DIR", str(HERE.parent / "build" / "name-map"))
        return cpp_extension.load("name_map", [HERE / "name_map" / "name_map.cpp"])


def test_check_without_a_message_names_the_condition():
    # PyTorch: TORCH_CHECK(x > 0) -> RuntimeError "Expected x > 0 to be true, but got false.  (Could this
    # error message be improved?  If so, please report an enhancement request to PyTorch.)"
    with pytest.raises(RuntimeError) as e:
        ops.name_map.check_bare(-1)
    assert str(e.value) == ("Expected x > 0 to be true, but got false.  (Could this error message be improved?  "
                            "If so, please report an enhancement request to opdispatch.)")
    with pytest.raises(ValueError, match=r"^Expected x > 0 to be true, but got false\."):
        ops.name_map.check_value_bare(0)
    ops.name_map.check_bare(1)


def test_check_with_a_message_concatenates_its_parts():
    # PyTorch: TORCH_CHECK(x > 0, "x must be positive, got ", x, " (", 1.5, ")") -> the same text.
    with pytest.raises(RuntimeError) as e:
        ops.name_map.check_message(-1)
    assert str(e.value) == "x must be positive, got -1 (1.5)"


def test_tls_guards_under_pytorchs_names():
    # ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard (both restored on exit), AutoDispatchBelowAutograd
    # (every autograd key, grad mode still on), AutoDispatchBelowADInplaceOrView, BackendSelect included.
    assert ops.name_map.guards() == [1, 1, 1, 1, 1, 1, 1]
    assert _C._dispatch_tls_local_include_set() == _C.DispatchKeySet(_C.DispatchKey.BackendSelect)


def test_grad_mode_guards_and_the_python_flag_are_one_flag():
    assert ops.name_map.grad_mode() == [1, 0, 1, 1]
    with opdispatch.no_grad():
        assert ops.name_map.grad_mode() == [0, 0, 1, 0]
    x = opdispatch.ones(2, requires_grad=True)
    # A C++ kernel below autograd sees grad mode on (PyTorch: GradMode is not the autograd key exclusion).
    assert ops.name_map.grad_enabled_in_kernel(x) is True
    with opdispatch.no_grad():
        assert ops.name_map.grad_enabled_in_kernel(x) is False


def test_meta_call_without_the_fake_impl_module_names_it():
    sys.modules.pop("name_map_fake_impls", None)
    op = ops.name_map_stub.stub.default
    assert _C._dispatch_pystub("name_map_stub::stub", "") == ("name_map_fake_impls", "(see tests/test_name_map.py)")
    # PyTorch 2.13, same operator: NotImplementedError "<op>: We could not find the fake impl for this operator.
    # The operator specified that you may need to import the '<module>' Python module to load the fake impl. "
    with pytest.raises(NotImplementedError) as e:
        op(opdispatch.empty((2,), device="meta"))
    assert str(e.value) == ("name_map_stub::stub: We could not find the fake impl for this operator. The operator "
                            "specified that you may need to import the 'name_map_fake_impls' Python module to load "
                            "the fake impl. (see tests/test_name_map.py)")
    with FakeTensorMode() as mode:
        fake = mode.from_tensor(opdispatch.ones(2))
        with pytest.raises(RuntimeError, match="import the 'name_map_fake_impls' Python module") as e:
            op(fake)
    assert isinstance(e.value.__cause__, NotImplementedError)
    with pytest.raises(Exception, match="test_faketensor"):
        library.opcheck(op, (opdispatch.ones(2),))
    # Imported, yet the fake impl is still missing: PyTorch says only that.
    sys.modules["name_map_fake_impls"] = types.ModuleType("name_map_fake_impls")
    try:
        with pytest.raises(NotImplementedError) as e:
            op(opdispatch.empty((2,), device="meta"))
        assert str(e.value) == "name_map_stub::stub: We could not find the fake impl for this operator. "
    finally:
        del sys.modules["name_map_fake_impls"]


def test_fake_impl_registered_by_the_module_is_used():
    module = types.ModuleType("name_map_fake_impls")
    calls = []

    def fake(x):
        calls.append(x.shape)
        return opdispatch.empty_like(x)

    lib = library.Library("name_map_stub", "FRAGMENT")
    try:
        library.register_fake("name_map_stub::stub", fake, lib=lib)
        sys.modules["name_map_fake_impls"] = module
        with FakeTensorMode() as mode:
            out = ops.name_map_stub.stub(mode.from_tensor(opdispatch.ones(3)))
        assert tuple(out.shape) == (3,) and calls
        assert library.opcheck(ops.name_map_stub.stub.default, (opdispatch.ones(3),))["test_faketensor"] == "SUCCESS"
    finally:
        sys.modules.pop("name_map_fake_impls", None)
        lib._destroy()
