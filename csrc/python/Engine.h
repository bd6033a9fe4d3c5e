// The backward engine's loop (_C._run_backward): dependency counting over the
// graph reachable from the roots, the ready stack, the per-node gradient
// buffers, the check of each gradient against the tensor it is for, and
// accumulation into leaves' .grad. The nodes and their formulas stay Python
// objects (python/opdispatch/autograd/graph.py): an OpNode's formula is
// called in C (OpNode.h), other nodes through their methods; the rules the
// fast paths here do not cover are Python functions the engine module
// installs (python/opdispatch/autograd/engine.py).
#pragma once

#include <pybind11/pybind11.h>

namespace opdispatch::python {

void initEngineBindings(pybind11::module_& m);

} // namespace opdispatch::python
