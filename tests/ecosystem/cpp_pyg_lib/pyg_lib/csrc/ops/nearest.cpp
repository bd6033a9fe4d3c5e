// After pyg-team/pyg-lib, pyg_lib/csrc/ops/nearest.cpp: the schema (a
// fragment of `pyg`) and the C++ entry point, which flattens the features
// (view + contiguous) and calls the operator with a typed handle.
#include "nearest.h"

#include <opdispatch/library.h>
#include <opdispatch/library.h>

namespace pyg {
namespace ops {

PYG_API opdispatch::Tensor nearest(const opdispatch::Tensor& x,
                           const opdispatch::Tensor& y,
                           const std::optional<opdispatch::Tensor>& ptr_x,
                           const std::optional<opdispatch::Tensor>& ptr_y) {
  opdispatch::CheckedFrom c{"nearest"};
  opdispatch::TensorArg x_arg{x, "x", 0};
  opdispatch::TensorArg y_arg{y, "y", 1};
  opdispatch::checkAllDefined(c, {x_arg, y_arg});

  opdispatch::Tensor x_flat = x.view({x.size(0), -1}).contiguous();
  opdispatch::Tensor y_flat = y.view({y.size(0), -1}).contiguous();
  OPDISPATCH_CHECK(x_flat.size(1) == y_flat.size(1),
              "x and y must have the same feature dim");

  static auto op = opdispatch::Dispatcher::singleton()
                       .findSchemaOrThrow("pyg::nearest", "")
                       .typed<decltype(nearest)>();
  return op.call(x_flat, y_flat, ptr_x, ptr_y);
}

OPDISPATCH_LIBRARY_FRAGMENT(pyg, m) {
  m.def(OPDISPATCH_SELECTIVE_SCHEMA(
      "pyg::nearest(Tensor x, Tensor y, Tensor? ptr_x=None, "
      "Tensor? ptr_y=None) -> Tensor"));
}

}  // namespace ops
}  // namespace pyg
