"""PyTorch's out-of-tree device example, OpenReg (pytorch/pytorch,
test/cpp_extensions/open_registration_extension/torch_openreg/csrc/aten/
OpenRegMinimal.cpp, OpenRegExtra.cpp, native/Minimal.cpp), ported with the
name map, plus a device plugin's AutogradPrivateUse1 fallthrough (Ascend/pytorch,
torch_npu/csrc/aten/VariableFallbackKernel.cpp): kernels registered for
PrivateUse1 on the built-in operators, a global PrivateUse1 fallback that runs
operators on the CPU, one operator sent to that fallback by name, a DEF library
with a PrivateUse1 kernel, AutogradPrivateUse1 kernels, and factories reaching
the device's kernel through BackendSelect, as PyTorch's do."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import opdispatch
from opdispatch import _C, ops

from _cpp_ports import build

SOURCES = ["csrc/aten/native/Minimal.cpp", "csrc/aten/OpenRegMinimal.cpp", "csrc/aten/OpenRegExtra.cpp"]
VALUES = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]], dtype=np.float32)


@pytest.fixture(scope="module", autouse=True)
def extension():
    return build("openreg", SOURCES, extra_cflags=["-Icsrc/aten"])


def calls() -> int:
    return ops.openreg._kernel_call_count()


def on_device(values: np.ndarray) -> opdispatch.Tensor:
    """An openreg tensor holding ``values``: empty on the device, then copy_ from the CPU."""
    host = opdispatch.from_numpy(np.ascontiguousarray(values))
    dev = opdispatch.empty(values.shape, dtype=host.dtype, device="privateuseone")
    dev.copy_(host)
    return dev


def to_numpy(dev: opdispatch.Tensor) -> np.ndarray:
    """The values of an openreg tensor: copy_ into a CPU tensor (the device's copy_ kernel)."""
    host = opdispatch.empty(tuple(dev.shape), dtype=dev.dtype)
    host.copy_(dev)
    return host.numpy()


def test_factory_reaches_the_devices_kernel_through_backend_select():
    before = calls()
    x = opdispatch.empty((2, 3), device="privateuseone")
    assert calls() == before + 1  # the C++ wrapper_empty_memory_format ran
    assert x.device == opdispatch.device("privateuseone", 0) and tuple(x.shape) == (2, 3)
    assert _C._dispatch_keys(x).has(_C.DispatchKey.PrivateUse1)
    table = _C._dispatch_dump_table("od::empty.memory_format")
    assert "BackendSelect: registered at" in table and "OpenRegMinimal.cpp" in table
    # The other devices keep the built-in kernel.
    assert opdispatch.empty((2,), device="meta").device.type == "meta"
    assert opdispatch.empty((2,)).device.type == "cpu"


def test_a_factory_without_a_device_kernel_is_made_with_empty_and_copy():
    # As PyTorch's CompositeExplicitAutograd factories: the values are made and
    # copied into the device's empty tensor (Note [Copies to and from a device plugin]).
    before = calls()
    x = opdispatch.ones((2, 3), device="privateuseone")
    assert calls() == before + 2  # the device's empty.memory_format and copy_
    assert x.device.type == "privateuseone"
    np.testing.assert_array_equal(to_numpy(x), np.ones((2, 3), np.float32))


def test_a_factory_on_a_device_no_plugin_serves_names_both_operators():
    with pytest.raises(NotImplementedError, match=r"od::ones: od::empty.memory_format: device cuda has no memory"):
        opdispatch.ones((2,), device="cuda")


def test_copy_to_and_from_the_device():
    np.testing.assert_array_equal(to_numpy(on_device(VALUES)), VALUES)


def test_to_and_back_use_the_devices_empty_and_copy():
    before = calls()
    dev = opdispatch.from_numpy(VALUES).to("privateuseone")
    assert dev.device.type == "privateuseone" and calls() == before + 2
    back = dev.to("cpu")
    assert back.device.type == "cpu" and calls() == before + 3  # the device's copy_ into a cpu tensor
    np.testing.assert_array_equal(back.numpy(), VALUES)


def test_kernel_of_the_openreg_library():
    x = on_device(VALUES)
    out = ops.openreg.custom_abs(x)
    assert out.device.type == "privateuseone"
    np.testing.assert_array_equal(to_numpy(out), np.abs(VALUES))
    with pytest.raises(RuntimeError, match="Only support float type"):
        ops.openreg.custom_abs(on_device(VALUES.astype(np.float64)))
    # The device's copy_ checks with a bare OPDISPATCH_CHECK(cond): the message names the condition.
    with pytest.raises(RuntimeError, match=r"^Expected self.scalar_type\(\) == src.scalar_type\(\) to be true, "):
        opdispatch.empty((2, 3), device="privateuseone").copy_(opdispatch.from_numpy(VALUES.astype(np.float64)))


def test_view_kernel_aliases_the_device_memory():
    x = on_device(VALUES)
    v = x.view(3, 2)
    assert tuple(v.shape) == (3, 2) and v.device.type == "privateuseone"
    assert v.data_ptr() == x.data_ptr()


def test_operator_sent_to_the_fallback_by_name():
    a, b = on_device(VALUES), on_device(2 * VALUES)
    before = calls()
    out = ops.od.sub.Tensor(a, b)
    assert calls() > before and out.device.type == "privateuseone"
    np.testing.assert_array_equal(to_numpy(out), VALUES - 2 * VALUES)
    assert "sub.Tensor" not in _C._dispatch_dump("od::neg")
    assert "OpenRegMinimal.cpp:6" in _C._dispatch_dump_table("od::sub.Tensor")


def test_global_fallback_runs_other_operators_on_the_cpu():
    x = on_device(VALUES)
    assert "PrivateUse1: registered at" in _C._dispatch_dump_table("od::neg")
    out = opdispatch.neg(x)
    assert out.device.type == "privateuseone"
    np.testing.assert_array_equal(to_numpy(out), -VALUES)
    assert _C._dispatch_has_backend_fallback(_C.DispatchKey.PrivateUse1)


def test_autograd_private_use1_kernels():
    x = on_device(VALUES)
    x.requires_grad_()
    # opdispatch tensors carry their autograd key only while they require grad (docs/architecture.rst, "Dispatch keys").
    assert _C._dispatch_keys(x).has(_C.DispatchKey.AutogradPrivateUse1)
    assert ops.openreg.custom_autograd_fn_returns_self(x) is x
    aliased = ops.openreg.custom_autograd_fn_aliasing(x)
    assert aliased.data_ptr() == x.data_ptr() and tuple(aliased.shape) == (2, 3)


def test_rename_privateuse1_backend():
    # Renaming is once per process, so it runs in a child process.
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, sys.argv[1])
        import opdispatch
        from opdispatch import _C
        from _cpp_ports import build
        build("openreg", {SOURCES!r}, extra_cflags=["-Icsrc/aten"])
        assert _C._get_privateuse1_backend_name() == "privateuseone"
        opdispatch.utils.rename_privateuse1_backend("openreg")
        opdispatch.utils.rename_privateuse1_backend("openreg")  # the same name again: no-op
        x = opdispatch.empty((2,), device="openreg")
        print(x.device, x.device.type, _C._get_privateuse1_backend_name(), _C._dispatch_key_for_device("openreg"),
              opdispatch.device("privateuseone:1"))
        try:
            opdispatch.utils.rename_privateuse1_backend("other")
        except RuntimeError as e:
            print(e)
    """)
    here = str(__import__("pathlib").Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", script, here], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "openreg:0 openreg openreg PrivateUse1 openreg:1"
    assert "already named 'openreg'" in lines[1] and "'other'" in lines[1]


@pytest.mark.parametrize("name", ["", "cpu", "a:b"])
def test_rename_privateuse1_backend_rejects_bad_names(name):
    with pytest.raises(ValueError, match="cannot name a device type"):
        opdispatch.utils.rename_privateuse1_backend(name)
    assert _C._get_privateuse1_backend_name() == "privateuseone"


def test_device_plugins_autograd_fallthrough_replaces_the_default():
    build("openreg", ["VariableFallbackKernel.cpp"], library="cpp_openreg_autograd")
    x = on_device(VALUES)
    x.requires_grad_()
    # The computed table: the plugin's fallthrough fallback, not opdispatch's default autograd fallback.
    table = _C._dispatch_dump_table("openreg::custom_abs")
    assert "AutogradPrivateUse1: fallthrough registered at " in table and "VariableFallbackKernel.cpp" in table
    out = ops.openreg.custom_abs(x)  # no autograd kernel: autograd is skipped on the device
    assert not out.requires_grad and out.grad_fn is None
