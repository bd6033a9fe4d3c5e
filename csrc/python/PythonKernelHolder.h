// PythonKernelHolder: the Python-kernel trampoline. A boxed kernel that
// converts a call's arguments to Python, calls a Python function with the GIL
// held, and checks and pushes its results. PyTorch: python_dispatch.cpp.
#pragma once

#include <Python.h>

#include <string>

#include <opdispatch/dispatch/KernelFunction.h>

namespace opdispatch::python {

class PythonKernelHolder final : public OperatorKernel {
 public:
  /// Takes a new reference to `func`. `key` is where it is registered (for
  /// messages); with `with_keyset` the function receives the call's
  /// DispatchKeySet first. `is_fallback`: the function receives the OpOverload first.
  PythonKernelHolder(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback);
  ~PythonKernelHolder() override;

  void operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);
  /// Releases the Python function (taking the GIL); later calls redispatch.
  void retire() override;

  /// A boxed KernelFunction running `func`.
  static KernelFunction makeKernel(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback = false);

 private:
  PyObject* func_; ///< owned; null once retired (read and written with the GIL held)
  std::string where_; ///< "Python kernel registered at <key>", for messages

  bool with_keyset_;
  bool is_fallback_;
};

/// Sets the function that maps an OperatorHandle to its Python OpOverload
/// (used for the first argument of Python fallbacks).
void setOpOverloadResolver(PyObject* resolver);
/// The resolver set by setOpOverloadResolver (borrowed), or nullptr.
PyObject* opOverloadResolver();

} // namespace opdispatch::python
