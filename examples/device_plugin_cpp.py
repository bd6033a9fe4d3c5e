"""A device plugin in C++ (examples/device_plugin_cpp/hostmem_device.cpp):
kernels for the PrivateUse1 key registered with OPDISPATCH_LIBRARY_IMPL, a
boxed fallback for every other operator, compiled and loaded with
opdispatch.cpp_extension.load, the device renamed "hostmem". Factories,
.to("hostmem") and back, arithmetic, autograd and operators the plugin has
no kernel for (through its fallback) then work on the device.

Run: python examples/device_plugin_cpp.py   (compiles on first run, ~20 s)
"""
from __future__ import annotations

from pathlib import Path

import opdispatch
from opdispatch import cpp_extension

cpp_extension.load("hostmem_device", [Path(__file__).parent / "device_plugin_cpp" / "hostmem_device.cpp"])
opdispatch.utils.rename_privateuse1_backend("hostmem")
calls = opdispatch.ops.hostmem.kernel_calls

a = opdispatch.tensor([[1.0, -2.0], [3.0, 4.0]]).to("hostmem")  # the plugin's empty and copy_
b = opdispatch.ones(2, 2, device="hostmem")
print("device:", a.device, "| kernel calls so far:", calls())
print("a * b + a:", (a * b + a).to("cpu").tolist())
print("a.abs() (the fallback):", a.abs().to("cpu").tolist(), "on", a.abs().device)

a.requires_grad_()
(a * a).sum().backward()
print("d(sum(a*a))/da:", a.grad.to("cpu").tolist(), "on", a.grad.device)
