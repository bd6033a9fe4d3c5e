// StrView: a str (or bytes, bytearray) argument of a bound function, viewed
// in place: no std::string copy, and no keep-alive entry (pybind11's
// std::string_view caster records one per call, a heap block). The text
// lives as long as the call's arguments, so a StrView must not outlive the
// call. For hot bindings that read text once (parse_schema).
#pragma once

#include <Python.h>

#include <string_view>

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// The UTF-8 text of a str argument (or the bytes of a bytes/bytearray),
/// valid during the call.
struct StrView {
  std::string_view text;
};

} // namespace opdispatch::python

namespace pybind11::detail {
/// Accepts what pybind11's std::string caster accepts, with the same name
/// ("str") in signatures and the same TypeError for a str that is no UTF-8
/// (lone surrogates).
template <>
struct type_caster<opdispatch::python::StrView> {
  PYBIND11_TYPE_CASTER(opdispatch::python::StrView, const_name("str"));

  bool load(handle src, bool) {
    PyObject* o = src.ptr();
    if (o == nullptr) {
      return false;
    }
    if (PyUnicode_Check(o)) {
      Py_ssize_t size = 0;
      const char* data = PyUnicode_AsUTF8AndSize(o, &size); // (cached in the str)
      if (data == nullptr) {
        PyErr_Clear();
        return false;
      }
      value.text = std::string_view(data, static_cast<size_t>(size));
      return true;
    }
    if (PyBytes_Check(o)) {
      value.text = std::string_view(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o)));
      return true;
    }
    if (PyByteArray_Check(o)) {
      value.text = std::string_view(PyByteArray_AS_STRING(o), static_cast<size_t>(PyByteArray_GET_SIZE(o)));
      return true;
    }
    return false;
  }

  static handle cast(const opdispatch::python::StrView& s, return_value_policy, handle) {
    return PyUnicode_DecodeUTF8(s.text.data(), static_cast<Py_ssize_t>(s.text.size()), nullptr);
  }
};
} // namespace pybind11::detail
