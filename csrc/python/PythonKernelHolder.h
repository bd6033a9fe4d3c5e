// PythonKernelHolder: a kernel that is a Python function. It calls the
// function with Python arguments — the kept objects of a Python call, or the
// converted IValues of a boxed call (its boxed entry, the trampoline) — with
// the GIL held, and checks the result against the schema's returns.
// PyTorch: PythonKernelHolder in python_dispatch.cpp.
#pragma once

#include <Python.h>

#include <string>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/KernelFunction.h>

namespace opdispatch::python {

class PythonKernelArguments;

class PythonKernelHolder final : public OperatorKernel {
 public:
  /// Takes a new reference to `func`. `key` is where it is registered (for
  /// messages); with `with_keyset` the function receives the call's
  /// DispatchKeySet first. `is_fallback`: the function receives the OpOverload
  /// first (after the keyset, if any): fn([keyset,] [op,] *args, **kwargs).
  PythonKernelHolder(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback);
  ~PythonKernelHolder() override;

  /// The boxed entry: pops the arguments, calls the function, pushes the checked results.
  void operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);
  /// Releases the Python function (taking the GIL); later calls run the
  /// kernel the table then has for their keys.
  void retire() override;
  /// "Python kernel registered at <key>" (or "Python fallback ..."), for messages.
  std::string describe() const override { return *where_; }

  /// Calls `func` (this kernel's function(), held by the caller for the
  /// whole call) with `args`, prepending the key set and/or the OpOverload as
  /// configured, and returns its result checked against the schema's returns
  /// (checkedPythonResult). GIL held. Throws what the function raises, or
  /// TypeError/ValueError for a wrong result.
  pybind11::object call(const pybind11::object& func, const OperatorHandle& op, DispatchKeySet ks,
                        PythonKernelArguments& args) const;
  /// A strong reference to the function; empty once retire() ran (GIL held).
  pybind11::object function() const { return pybind11::reinterpret_borrow<pybind11::object>(func_); }
  /// For a call that found this kernel retired: throws Error if the table
  /// still leads here (running `now` would come back here forever).
  void checkNotStillChosen(const OperatorHandle& op, KernelRef now) const;

  /// A boxed KernelFunction running `func`.
  static KernelFunction makeKernel(PyObject* func, DispatchKey key, bool with_keyset, bool is_fallback = false);
  /// The PythonKernelHolder of `k`, or null if `k` is not a Python kernel.
  static PythonKernelHolder* of(const KernelRef& k) {
    return KernelFunction::isBoxedFunctor<PythonKernelHolder>(k) ? static_cast<PythonKernelHolder*>(k.functor())
                                                                 : nullptr;
  }

 private:
  /// Calls the function; returns its raw result (a new reference).
  pybind11::object callRaw(const pybind11::object& func, const OperatorHandle& op, DispatchKeySet ks,
                           PythonKernelArguments& args) const;

  PyObject* func_; ///< owned; null once retired (read and written with the GIL held)
  /// "Python kernel registered at <key>", shared by the kernels of one key.
  const std::string* where_;
  bool with_keyset_;
  bool is_fallback_;
};

/// Sets the function that maps an OperatorHandle to its Python OpOverload
/// (used for the op argument of Python fallbacks); null or None removes it.
/// Returns the previous resolver (a new reference, or null).
PyObject* setOpOverloadResolver(PyObject* resolver);

/// A borrowed reference to the Python DispatchKeySet object for `ks`
/// (cached: kernels called with_keyset get one per call).
PyObject* dispatchKeySetObject(DispatchKeySet ks);

} // namespace opdispatch::python
