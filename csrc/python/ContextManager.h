// Binding an RAII guard as a Python context manager of opdispatch._C.
#pragma once

#include <memory>
#include <vector>

#include <pybind11/pybind11.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch::python {

/// Binds class `name`: `with name():` holds a `Guard` (default-constructed)
/// between __enter__ and __exit__. One object may be entered again while
/// entered; each __exit__ drops the newest guard.
template <class Guard>
void bindContextManager(pybind11::module_& m, const char* name, const char* doc) {
  struct Active {
    std::vector<std::unique_ptr<Guard>> guards;
  };
  pybind11::class_<Active>(m, name, doc)
      .def(pybind11::init<>())
      .def("__enter__", [](Active& a) { a.guards.push_back(std::make_unique<Guard>()); })
      .def("__exit__", [name](Active& a, pybind11::args) {
        OPDISPATCH_CHECK(!a.guards.empty(), name, ".__exit__ called without a matching __enter__");
        a.guards.pop_back();
      });
}

/// Binds class `name`: constructing an object holds a `Guard`
/// (default-constructed) until __exit__ or the object's destruction, as
/// PyTorch's RAII guard classes (`g = _DisableTorchDispatch(); ...; del g`);
/// `with name():` works too (__enter__ returns the object).
template <class Guard>
void bindHeldGuard(pybind11::module_& m, const char* name, const char* doc) {
  struct Held {
    std::unique_ptr<Guard> guard = std::make_unique<Guard>();
  };
  pybind11::class_<Held>(m, name, doc)
      .def(pybind11::init<>())
      .def("__enter__", [](pybind11::object self) { return self; })
      .def("__exit__", [](Held& h, pybind11::args) { h.guard.reset(); });
}

} // namespace opdispatch::python
