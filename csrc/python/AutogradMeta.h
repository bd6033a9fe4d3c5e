// opdispatch._C._AutogradMeta, the autograd state of one tensor (kept in its
// TensorImpl's autograd-metadata slot), and the two things every recorded
// operator call does with it: _set_history and _gradient_edge. In C because
// they run once per tensor per recorded call; the graph itself (nodes, the
// engine) is Python (python/opdispatch/autograd/graph.py).
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

void initAutogradMetaBindings(pybind11::module_& m);

} // namespace opdispatch::python
