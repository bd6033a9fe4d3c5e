// PythonKernelHolder: the Python-kernel trampoline. A boxed kernel that
// converts a call's arguments to Python, calls a Python function with the GIL
// held, and checks and pushes its results. PyTorch: python_dispatch.cpp.
#pragma once

#include <Python.h>

#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/KernelFunction.h>

namespace opdispatch::python {

/// Per-call checks a kernel asks for (opdispatch.library.custom_op does). See
/// Note [Custom op kernel checks] in PythonKernelHolder.cpp.
struct KernelChecks {
  /// Tensor outputs may share memory with no input and no other output.
  bool aliasing = false;
};

class PythonKernelHolder final : public OperatorKernel {
 public:
  /// Takes a new reference to `func`. `key` is where it is registered (for
  /// messages); with `with_keyset` the function receives the call's
  /// DispatchKeySet first. `is_fallback`: the function receives the OpOverload
  /// first (after the keyset, if any): fn([keyset,] [op,] *args, **kwargs).
  /// `checks` run around every call.
  PythonKernelHolder(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback, KernelChecks checks = {});
  ~PythonKernelHolder() override;

  /// The boxed entry: pops the arguments, calls the function, pushes the checked results.
  void operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);
  /// Releases the Python function (taking the GIL); later calls redispatch.
  void retire() override;

  /// Calls `func` (this kernel's function(), held by the caller for the
  /// whole call) with Python arguments (`args[0..nargs)` positional, `kwargs`
  /// a dict or null), prepending the key set and/or the OpOverload as
  /// configured. GIL held. Returns a new reference, or null with the Python
  /// error set.
  PyObject* callPython(const pybind11::object& func, const OperatorHandle& op, DispatchKeySet ks,
                       PyObject* const* args, size_t nargs, PyObject* kwargs) const;
  /// A strong reference to the function; empty once retire() ran (GIL held).
  pybind11::object function() const { return pybind11::reinterpret_borrow<pybind11::object>(func_); }
  /// "Python kernel registered at <key>", for messages.
  const std::string& where() const { return where_; }
  const KernelChecks& checks() const { return checks_; }

  /// A boxed KernelFunction running `func`.
  static KernelFunction makeKernel(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback = false,
                                   KernelChecks checks = {});
  /// The PythonKernelHolder of `k`, or null if `k` is not a Python kernel.
  static PythonKernelHolder* of(const KernelFunction& k);

 private:
  PyObject* func_; ///< owned; null once retired (read and written with the GIL held)
  std::string where_;
  bool with_keyset_;
  bool is_fallback_;
  KernelChecks checks_;
};

/// The tensors among a call's arguments: (argument index, tensor).
using ArgumentTensors = std::vector<std::pair<size_t, Tensor>>;

/// Throws (see throwOutputAliases) if a tensor among the results at the top of
/// `stack` shares memory with one of `args` or with another result.
void checkResultsDoNotAlias(const FunctionSchema& schema, const std::string& where, const ArgumentTensors& args,
                            const Stack& stack);

/// Throws Error (RuntimeError) for return `return_index` of `op`'s kernel
/// (`where`) sharing memory with argument `other` (or, when `other_is_return`,
/// with an earlier return of that index). Note [Custom op kernel checks].
[[noreturn]] void throwOutputAliases(const FunctionSchema& schema, const std::string& where, size_t return_index,
                                     bool other_is_return, const std::string& other, bool same_tensor);

/// Sets the function that maps an OperatorHandle to its Python OpOverload
/// (used for the op argument of Python fallbacks); null or None removes it.
/// Returns the previous resolver (a new reference, or null).
PyObject* setOpOverloadResolver(PyObject* resolver);

/// A borrowed reference to the Python DispatchKeySet object for `ks`
/// (cached: kernels called with_keyset get one per call).
PyObject* dispatchKeySetObject(DispatchKeySet ks);

} // namespace opdispatch::python
