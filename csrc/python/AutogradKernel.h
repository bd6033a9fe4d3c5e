// _C._PlainAutogradKernel: the recording kernel of operators with a plain
// schema and an autograd formula (see AutogradKernel.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

void initAutogradKernelBindings(pybind11::module_& m);

} // namespace opdispatch::python
