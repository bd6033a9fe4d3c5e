// parse_schema and the FunctionSchema / Argument / AliasInfo classes as
// Python sees them (as torch._C.parse_schema).
#include <set>
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/schema/SchemaParser.h>

#include "IValueConversion.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {
/// A Python set of 'alias::<name>' strings, as torch._C's AliasInfo returns them.
std::set<std::string> qualified(const std::vector<std::string>& sets) {
  std::set<std::string> out;
  for (const auto& s : sets) {
    out.insert("alias::" + s);
  }
  return out;
}
} // namespace

void initSchemaBindings(py::module_& m) {
  py::class_<AliasInfo>(m, "_AliasInfo", "An alias annotation such as (a!) or (a -> *).")
      .def_readonly("is_write", &AliasInfo::is_write)
      .def_property_readonly("before_set", [](const AliasInfo& a) { return qualified(a.before_set); },
                             "Alias sets before the call: a set of 'alias::a' strings (PyTorch's spelling).")
      .def_property_readonly("after_set", [](const AliasInfo& a) { return qualified(a.after_set); })
      .def_readonly("contained_types", &AliasInfo::contained_types)
      .def("__repr__", [](const AliasInfo& a) {
        std::ostringstream ss;
        ss << a;
        return ss.str();
      });

  py::class_<Argument>(m, "Argument", "One argument or return of a FunctionSchema.")
      .def_property_readonly("name", &Argument::name)
      .def_property_readonly("type", [](const Argument& a) { return a.type()->toString(); },
                             "The type as written in a schema, e.g. 'Tensor', 'int[]', 'float?'.")
      .def_property_readonly("N", &Argument::N)
      .def_property_readonly("default_value",
                             [](const Argument& a) -> py::object {
                               if (!a.default_value()) {
                                 return py::none();
                               }
                               try {
                                 return py::reinterpret_steal<py::object>(toPyObject(*a.default_value(), a.type()));
                               } catch (const ValueError& e) {
                                 throw ValueError(detail::str("the default value of argument '", a.name(),
                                                              "': ", e.what()));
                               }
                             })
      .def("has_default_value", [](const Argument& a) { return a.default_value().has_value(); })
      .def_property_readonly("kwarg_only", &Argument::kwarg_only)
      .def_property_readonly("is_out", [](const Argument& a) { return a.kwarg_only() && a.is_write(); })
      .def_property_readonly("alias_info", [](const Argument& a) { return a.alias_info(); })
      .def("__str__", [](const Argument& a) {
        std::ostringstream ss;
        ss << a;
        return ss.str();
      })
      .def("__repr__", [](const Argument& a) {
        std::ostringstream ss;
        ss << a;
        return "<Argument " + ss.str() + ">";
      });

  py::class_<FunctionSchema>(m, "FunctionSchema", "A parsed operator schema.")
      .def_property_readonly("name", &FunctionSchema::name)
      .def_property_readonly("overload_name", &FunctionSchema::overload_name)
      .def_property_readonly("arguments", &FunctionSchema::arguments)
      .def_property_readonly("returns", &FunctionSchema::returns)
      .def_property_readonly("is_mutable", &FunctionSchema::isMutable)
      .def("__eq__", [](const FunctionSchema& a, const FunctionSchema& b) { return a == b; }, py::is_operator())
      .def("__hash__", [](const FunctionSchema& s) { return std::hash<std::string>()(s.toString()); })
      .def("__str__", &FunctionSchema::toString)
      .def("__repr__", [](const FunctionSchema& s) { return "FunctionSchema(" + s.toString() + ")"; });

  m.def("parse_schema", &parseSchema, py::arg("schema"),
        "Parses a schema string; raises ValueError with the position of the problem.");
  m.def(
      "_parse_name",
      [](const std::string& n) {
        OperatorName name = parseName(n);
        return std::make_pair(name.name, name.overload_name);
      },
      "Parses 'ns::name[.overload]' into (name, overload_name).");
}

} // namespace opdispatch::python
