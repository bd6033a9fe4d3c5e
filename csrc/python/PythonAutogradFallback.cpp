// _C._set_autograd_fallback: lets the Python autograd layer handle calls on
// tensors that require grad for operators with no autograd kernel (see
// csrc/opdispatch/dispatch/AutogradFallback.h).
#include <memory>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/AutogradFallback.h>
#include <opdispatch/dispatch/Dispatcher.h>

#include "PythonKernelHolder.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
/// The Python fallback as a kernel: fn(op, keyset, *args, **kwargs). Owned
/// forever once set (replacing it retires the old one).
PythonKernelHolder* gFallback = nullptr;

void autogradHook(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) { (*gFallback)(op, ks, stack); }
} // namespace

void initAutogradFallbackBindings(py::module_& m) {
  m.def(
      "_set_autograd_fallback",
      [](py::object fn) {
        if (fn.is_none()) {
          setAutogradFallbackHook(nullptr);
          return;
        }
        auto* holder = new PythonKernelHolder(fn.ptr(), DispatchKey::Autograd, /*with_keyset=*/true,
                                              /*is_fallback=*/true);
        setAutogradFallbackHook(&autogradHook);
        PythonKernelHolder* old = gFallback;
        gFallback = holder;
        if (old != nullptr) {
          old->retire();
        }
      },
      py::arg("fn"),
      "Sets fn(op, keyset, *args, **kwargs), called for operators without an autograd kernel when an input "
      "requires grad; it must redispatch with keyset & _after_autograd_keyset. None restores the default "
      "(redispatch below autograd).");
}

} // namespace opdispatch::python
