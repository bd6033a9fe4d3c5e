// The operator definitions (schemas) of the example extension. Kernels are
// registered per dispatch key in the other files:
//   cpu_kernels.cpp        CPU kernels (the arithmetic)
//   meta_kernels.cpp       Meta kernels (output shape, dtype and device only)
//   inplace_or_view.cpp    an ADInplaceOrView kernel for relu_ that redispatches
//   call_op.cpp            kernels that call other operators by name (and from a thread)
//   normalize_rows.cpp     a kernel written with the ATen-style API (TensorOptions, a
//                          factory, argument checks, a typed call of rowsum)
#include "myext.h"

OPDISPATCH_LIBRARY(OPDISPATCH_EXAMPLE_NS, m) {
  // a * b + c elementwise; an operand with a single element is broadcast.
  m.def("fma(Tensor a, Tensor b, Tensor c) -> Tensor");
  m.def("relu(Tensor x) -> Tensor");
  // In place: writes max(x, 0) into x and returns x.
  m.def("relu_(Tensor(a!) x) -> Tensor(a!)");
  // (N, M) -> (N,): the sum of each row.
  m.def("rowsum(Tensor x) -> Tensor");
  // Calls operator `name` ("ns::op" or "ns::op.overload", taking one Tensor
  // and returning one Tensor) on x through the dispatcher.
  m.def("call_op(Tensor x, str name) -> Tensor");
  // The same, from a new std::thread, with the GIL released while waiting.
  m.def("call_op_in_thread(Tensor x, str name) -> Tensor");
  // Each row of a 2-D tensor divided by its sum (computed in float64).
  m.def("normalize_rows(Tensor x) -> Tensor");
}
