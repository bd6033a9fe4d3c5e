// Mapping C++ exceptions to Python ones: opdispatch::Error -> RuntimeError,
// NotImplementedError, TypeError, ValueError, IndexError; a Python error
// raised in a Python kernel passes through C++ unchanged.
#pragma once

#include <Python.h>

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// Sets the Python error for the C++ exception being handled (call inside a
/// catch block). Restores a pybind11::error_already_set as it was.
void setPythonErrorFromCurrentException();

/// Runs `f` (returning a new reference or null); converts any C++ exception
/// into a Python error and returns null. For raw C-API entry points.
template <class F>
PyObject* pythonEntry(F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    setPythonErrorFromCurrentException();
    return nullptr;
  }
}

void initExceptionTranslation(pybind11::module_& m);

} // namespace opdispatch::python
