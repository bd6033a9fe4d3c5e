// _topk_indices: topk's selection as PyTorch's CPU kernel makes it.
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

void initTopKBindings(pybind11::module_& m);

} // namespace opdispatch::python
