// Checked wrappers of the CPython C-API calls the backward engine and its
// nodes make (Engine.cpp, OpNode.cpp): each turns a failed call (a null
// result, -1 with an error set) into py::error_already_set.
#pragma once

#include <Python.h>

#include <string>

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// Owns the new reference `obj`; throws the pending Python error if it is null.
inline pybind11::object steal(PyObject* obj) {
  if (obj == nullptr) {
    throw pybind11::error_already_set();
  }
  return pybind11::reinterpret_steal<pybind11::object>(obj);
}

/// obj.name (`name` an interned string).
inline pybind11::object attr(PyObject* obj, PyObject* name) { return steal(PyObject_GetAttr(obj, name)); }

/// Python's truth of `obj`.
inline bool truth(PyObject* obj) {
  int t = PyObject_IsTrue(obj);
  if (t < 0) {
    throw pybind11::error_already_set();
  }
  return t != 0;
}

/// obj.name() or obj.name(arg).
inline pybind11::object callMethod(PyObject* obj, PyObject* name, PyObject* arg = nullptr) {
  PyObject* args[] = {obj, arg};
  size_t n = arg == nullptr ? 1 : 2;
  return steal(PyObject_VectorcallMethod(name, args, n | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr));
}

/// A tuple or list with the items of iterable `obj` (PySequence_Fast; TypeError `what` otherwise).
inline pybind11::object fastSequence(PyObject* obj, const char* what) { return steal(PySequence_Fast(obj, what)); }

/// int(obj) as a Py_ssize_t (OverflowError beyond it, TypeError for a non-integer).
inline Py_ssize_t ssizeOf(PyObject* obj) {
  Py_ssize_t v = PyNumber_AsSsize_t(obj, PyExc_OverflowError);
  if (v == -1 && PyErr_Occurred()) {
    throw pybind11::error_already_set();
  }
  return v;
}

/// str(obj) as UTF-8.
inline std::string strOf(PyObject* obj) {
  pybind11::object s = steal(PyObject_Str(obj));
  const char* utf8 = PyUnicode_AsUTF8(s.ptr());
  if (utf8 == nullptr) {
    throw pybind11::error_already_set();
  }
  return utf8;
}

} // namespace opdispatch::python
