// Lets every _C function that takes a DispatchKey also take its name as a
// str ("CPU"), as PyTorch does (py::implicitly_convertible<std::string,
// DispatchKey>); an unknown name raises ValueError listing the valid keys.
#pragma once

#include <Python.h>

#include <string>

#include <pybind11/pybind11.h>

#include <opdispatch/core/DispatchKey.h>

namespace pybind11::detail {
/// Include this header in every file that converts DispatchKey with pybind11
/// (one caster per program).
template <>
struct type_caster<opdispatch::DispatchKey> : public type_caster_base<opdispatch::DispatchKey> {
  bool load(handle src, bool convert) {
    if (PyUnicode_Check(src.ptr())) {
      parsed_ = opdispatch::parseDispatchKey(src.cast<std::string>()); // throws ValueError
      value = &parsed_;
      return true;
    }
    return type_caster_base<opdispatch::DispatchKey>::load(src, convert);
  }

 private:
  opdispatch::DispatchKey parsed_ = opdispatch::DispatchKey::Undefined;
};
} // namespace pybind11::detail
