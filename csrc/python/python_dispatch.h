// Declarations shared by the _C binding files.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/Dispatcher.h>

#include "DispatchKeyCaster.h"

namespace opdispatch::python {

void initDispatchBindings(pybind11::module_& m);
void initSchemaBindings(pybind11::module_& m);
void initAutogradFallbackBindings(pybind11::module_& m);
void initIntrospectionBindings(pybind11::module_& m);

/// (file, line) of the innermost Python frame outside opdispatch's own
/// registration code (library.py, _ops.py, _library/, _custom_ops.py) and
/// contextlib; nullopt if there is none.
std::optional<std::pair<std::string, int>> pythonCallSiteFrame();
/// "registered at <file>:<line>" of that frame ("registered from Python" if none).
std::string pythonCallSite();

/// Binds args/kwargs to the schema, calls the operator, returns the result(s).
pybind11::object callBoxedFromPython(const OperatorHandle& op, pybind11::args args, pybind11::kwargs kwargs);

} // namespace opdispatch::python
