// Mapping C++ exceptions to Python ones: opdispatch::Error -> RuntimeError,
// NotImplementedError, TypeError, ValueError, IndexError, OverflowError; a Python error
// raised in a Python kernel passes through C++ unchanged. Also whether the
// interpreter can still be called.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/Reclaimer.h>

#include "PyWarningHandler.h"

namespace opdispatch::python {

/// Sets the Python error for the C++ exception being handled (call inside a
/// catch block). Restores a pybind11::error_already_set as it was.
void setPythonErrorFromCurrentException();

/// Runs `f` (returning a new reference or null); converts any C++ exception
/// into a Python error and returns null. For raw C-API entry points; `f`
/// runs as a call (CallGuard): the schemas and kernels it reads stay alive.
/// The C++ warnings `f` issues become Python warnings as it returns (Note
/// [C++ warnings reach Python when the call returns]).
template <class F>
PyObject* pythonEntry(F&& f) noexcept {
  CallGuard guard;
  PyWarningHandler warnings;
  PyObject* result;
  try {
    result = f();
  } catch (...) {
    setPythonErrorFromCurrentException();
    result = nullptr;
  }
  return warnings.flush(result);
}

void initExceptionTranslation(pybind11::module_& m);

/// Whether Python may still be called (it is initialised and not finalising):
/// releasing Python objects from C++ destructors checks this first.
inline bool interpreterAlive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

} // namespace opdispatch::python
