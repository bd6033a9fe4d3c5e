// opdispatch._C._DispatchOperator: the callable base class of OpOverload.
// Calling it binds the Python arguments to the schema and dispatches, in C.
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

void initOperatorBindings(pybind11::module_& m);

} // namespace opdispatch::python
