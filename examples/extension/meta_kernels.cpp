// Meta kernels: the same checks as the CPU kernels, then a result with the
// right shape, dtype and device and no data. They let callers compute output
// shapes (e.g. to plan memory) without running the arithmetic.
#include "myext.h"

namespace myext {
namespace {

Tensor fmaMeta(const Tensor& a, const Tensor& b, const Tensor& c) {
  return opdispatch::empty(fmaResultShape(a, b, c), a.dtype(), a.device());
}

Tensor reluMeta(const Tensor& x) {
  checkFloating("relu", x);
  return opdispatch::empty(x.sizes(), x.dtype(), x.device());
}

Tensor reluInplaceMeta(const Tensor& x) {
  checkFloating("relu_", x);
  return x;
}

Tensor rowsumMeta(const Tensor& x) { return opdispatch::empty(rowsumResultShape(x), x.dtype(), x.device()); }

} // namespace
} // namespace myext

OPDISPATCH_LIBRARY_IMPL(OPDISPATCH_EXAMPLE_NS, Meta, m) {
  m.impl("fma", OPDISPATCH_FN(myext::fmaMeta));
  m.impl("relu", OPDISPATCH_FN(myext::reluMeta));
  m.impl("relu_", OPDISPATCH_FN(myext::reluInplaceMeta));
  m.impl("rowsum", OPDISPATCH_FN(myext::rowsumMeta));
}
