// staticTypeObject(): the starting value of a PyTypeObject defined in C++;
// addStaticType(): readies one and adds it to the module; intern(): the
// interned strs (attribute names) their functions use.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// A type object with every slot empty and the object header PyType_Ready
/// expects (what `{PyVarObject_HEAD_INIT(nullptr, 0)}` gives, with no slot
/// left to implicit initialisation). Fill in the slots, then PyType_Ready.
inline PyTypeObject staticTypeObject() {
  PyTypeObject t{};
  PyVarObject head = {PyObject_HEAD_INIT(nullptr) 0};
  t.ob_base = head;
  return t;
}

/// PyType_Ready(`t`), then `module.<name> = t` (the module keeps a reference).
/// Throws py::error_already_set if the type cannot be readied.
inline void addStaticType(pybind11::module_& module, PyTypeObject& t, const char* name) {
  if (PyType_Ready(&t) < 0) {
    throw pybind11::error_already_set();
  }
  Py_INCREF(&t);
  module.attr(name) = pybind11::reinterpret_borrow<pybind11::object>(reinterpret_cast<PyObject*>(&t));
}

/// `slot` = the interned str `name`, for the process's lifetime. Throws
/// py::error_already_set if it cannot be made.
inline void intern(PyObject*& slot, const char* name) {
  slot = PyUnicode_InternFromString(name);
  if (slot == nullptr) {
    throw pybind11::error_already_set();
  }
}

} // namespace opdispatch::python
