// Structured views of the dispatcher for opdispatch.explain and
// `python -m opdispatch coverage`: the computed dispatch table with the rule
// that chose each entry, and the key sets a call's tensor arguments carry.
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/schema/SchemaParser.h>

#include "IValueConversion.h"
#include "PythonCall.h"
#include "PythonTensor.h"
#include "python_dispatch.h"

namespace py = pybind11;

namespace opdispatch::python {

namespace {

OperatorHandle operatorOrThrow(const std::string& name) {
  auto op = Dispatcher::singleton().findOp(parseName(name));
  OPDISPATCH_CHECK(op.has_value(), "operator ", name,
                   " does not exist: nothing defines or implements it (list the operators with "
                   "`python -m opdispatch ops`)");
  return *op;
}

/// One (key, kernel debug, reason, is_fallthrough, site) per table index:
/// Undefined, then every runtime key by priority. `reason` is the rule of
/// OperatorHandle::dispatchTableEntries ("missing" where no
/// kernel serves the key); `site` is "file:line" from "registered at
/// file:line", else "".
py::list tableEntries(const std::string& name) {
  const std::string prefix = "registered at ";
  py::list out;
  for (const DispatchTableEntryInfo& e : operatorOrThrow(name).dispatchTableEntries()) {
    std::string site = e.debug.compare(0, prefix.size(), prefix) == 0 ? e.debug.substr(prefix.size()) : "";
    out.append(py::make_tuple(std::string(toString(e.key)), e.debug, std::string(e.reason), e.fallthrough, site));
  }
  return out;
}

void appendKeys(py::list& out, const std::string& arg, int index, const Tensor& t) {
  if (t.defined()) {
    PyObject* obj = wrapTensor(t);
    if (obj == nullptr) {
      throw py::error_already_set();
    }
    out.append(py::make_tuple(arg, index, t.key_set(), py::reinterpret_steal<py::object>(obj)));
  }
}

/// (argument name, list index or -1, DispatchKeySet, tensor) for every tensor
/// a call with `args`/`kwargs` passes, bound to the schema exactly as the call
/// would (same TypeErrors); the key set is the tensor's own, before TLS and
/// masks, and the tensor the caller's own object (a subclass instance stays one).
py::list argumentKeySets(const std::string& name, const std::string& overload, py::args args, py::kwargs kwargs) {
  OperatorHandle op = Dispatcher::singleton().findSchemaOrThrow(name, overload);
  CallGuard guard;  // keeps the schema (Note [Reclaiming retired kernels])
  const AnnotatedSchema& s = schemaForCall(op.entry());
  const FunctionSchema& schema = s.schema;
  Stack stack;
  BoundArguments(s, PyCallArgumentsFromTuple(args.ptr(), kwargs.ptr()).get()).pushIValues(stack);
  py::list out;
  const auto& arguments = schema.arguments();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const IValue& v = stack[i];
    const std::string& arg = arguments[i].name();
    if (v.isTensor()) {
      appendKeys(out, arg, -1, v.toTensor());
    } else if (v.isTensorList()) {
      int j = 0;
      for (const auto& t : v.toTensorList()) {
        appendKeys(out, arg, j++, t);
      }
    } else if (v.isOptionalTensorList()) {
      int j = 0;
      for (const auto& t : v.toOptionalTensorList()) {
        if (t) {
          appendKeys(out, arg, j, *t);
        }
        ++j;
      }
    }
  }
  return out;
}

} // namespace

void initIntrospectionBindings(py::module_& m) {
  m.def("_dispatch_table_entries", &tableEntries, py::arg("name"),
        "[(key, kernel debug, reason, is_fallthrough, site)] for Undefined and every runtime key of operator "
        "`name` ('ns::op' or 'ns::op.overload'), computed by the rules the dispatch table uses (reason 'missing' "
        "where no kernel serves the key; site 'file:line' or '').");
  m.def("_dispatch_argument_key_sets", &argumentKeySets, py::arg("name"), py::arg("overload"),
        "[(argument, list index or -1, DispatchKeySet, tensor)]: the tensors a call of operator `name` (with overload "
        "`overload`, '' for the default) passes with the positional and keyword arguments that follow, bound "
        "as the call binds them.");
}

} // namespace opdispatch::python
