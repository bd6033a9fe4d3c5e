// Test glue (ours, not pyg-lib's): exposes pyg-lib's C++ entry points
// pyg::ops::sampled_op and pyg::ops::nearest, which check or reshape their
// arguments before the dispatcher call, as operators Python can call.
#include <opdispatch/library.h>

#include "pyg_lib/csrc/ops/nearest.h"
#include "pyg_lib/csrc/ops/sampled.h"

OPDISPATCH_LIBRARY(pyg_port, m) {
  m.def("sampled_op_entry(Tensor left, Tensor right, Tensor? left_index, Tensor? right_index, str op) -> Tensor",
        &pyg::ops::sampled_op);
  m.def("nearest_entry(Tensor x, Tensor y, Tensor? ptr_x=None, Tensor? ptr_y=None) -> Tensor", &pyg::ops::nearest);
}
