// Declarations shared by the _C binding files.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

#include <opdispatch/dispatch/Dispatcher.h>

#include "DispatchKeyCaster.h"

namespace opdispatch::python {

void initDispatchBindings(pybind11::module_& m);
void initSchemaBindings(pybind11::module_& m);

/// "registered at <file>:<line>" of the innermost Python frame outside
/// opdispatch's own registration code.
std::string pythonCallSite();

/// Binds args/kwargs to the schema, calls the operator, returns the result(s).
pybind11::object callBoxedFromPython(const OperatorHandle& op, pybind11::args args, pybind11::kwargs kwargs);

} // namespace opdispatch::python
