// Issuing buffered C++ warnings as Python warnings; see Note [C++ warnings reach Python when the call returns].
#include "PyWarningHandler.h"

#include <string>

namespace opdispatch::python {

namespace {
PyObject* pythonCategory(const Warning& warning) {
  return std::holds_alternative<DeprecationWarning>(warning.type()) ? PyExc_DeprecationWarning : PyExc_UserWarning;
}

/// PyErr_WarnEx's result (0, or -1 with the warning's exception set).
int issue(const Warning& warning) {
  if (warning.verbatim()) {
    return PyErr_WarnEx(pythonCategory(warning), warning.msg().c_str(), 1);
  }
  const SourceLocation& loc = warning.source_location();
  std::string text = detail::str(warning.msg(), " (Triggered internally at ", loc.file, ":", loc.line, ".)");
  return PyErr_WarnEx(pythonCategory(warning), text.c_str(), 1);
}
} // namespace

void PyWarningHandler::Buffer::process(const Warning& warning) { warnings.push_back(warning); }

PyObject* PyWarningHandler::flushSlow(PyObject* result) noexcept {
  std::vector<Warning> warnings;
  warnings.swap(buffer_.warnings);
  const bool raising = result == nullptr;
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  if (raising) {
    PyErr_Fetch(&type, &value, &traceback);
  }
  for (const Warning& warning : warnings) {
    if (issue(warning) < 0) {
      if (!raising) {
        Py_DECREF(result);
        return nullptr;
      }
      PyErr_Print();
    }
  }
  if (raising) {
    PyErr_Restore(type, value, traceback);
  }
  return result;
}

} // namespace opdispatch::python
