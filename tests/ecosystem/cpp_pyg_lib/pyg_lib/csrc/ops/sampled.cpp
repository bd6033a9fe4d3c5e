// After pyg-team/pyg-lib, pyg_lib/csrc/ops/sampled.cpp: the operator's schema
// (a fragment of the `pyg` namespace) and its C++ entry point, which checks
// the arguments with ATen's TensorUtils and calls the operator through the
// dispatcher with a typed handle.
#include "sampled.h"

#include <opdispatch/library.h>
#include <opdispatch/library.h>

namespace pyg {
namespace ops {

PYG_API opdispatch::Tensor sampled_op(const opdispatch::Tensor& left,
                              const opdispatch::Tensor& right,
                              const opdispatch::optional<opdispatch::Tensor> left_index,
                              const opdispatch::optional<opdispatch::Tensor> right_index,
                              const std::string fn) {
  opdispatch::CheckedFrom c{"sampled_op"};
  opdispatch::TensorArg left_arg{left, "left", 0};
  opdispatch::TensorArg right_arg{right, "right", 1};
  opdispatch::checkAllDefined(c, {left_arg, right_arg});
  opdispatch::checkSameType(c, left_arg, right_arg);
  opdispatch::checkContiguous(c, left_arg);
  opdispatch::checkContiguous(c, right_arg);
  opdispatch::checkDim(c, left_arg, 2);
  opdispatch::checkDim(c, right_arg, 2);
  opdispatch::checkSize(c, left_arg, 1, right_arg->size(1));

  if (left_index.has_value()) {
    opdispatch::TensorArg arg{left_index.value(), "left_index", 2};
    opdispatch::checkContiguous(c, arg);
    opdispatch::checkDim(c, arg, 1);
  }
  if (right_index.has_value()) {
    opdispatch::TensorArg arg{right_index.value(), "right_index", 3};
    opdispatch::checkContiguous(c, arg);
    opdispatch::checkDim(c, arg, 1);
  }
  if (left_index.has_value() && right_index.has_value()) {
    opdispatch::TensorArg l{left_index.value(), "left_index", 2};
    opdispatch::TensorArg r{right_index.value(), "right_index", 3};
    opdispatch::checkSameType(c, l, r);
    opdispatch::checkSize(c, l, 0, r->size(0));
  }
  if (!left_index.has_value() && !right_index.has_value()) {
    opdispatch::checkSize(c, left_arg, 0, right_arg->size(0));
  }

  static auto op = opdispatch::Dispatcher::singleton()
                       .findSchemaOrThrow("pyg::sampled_op", "")
                       .typed<decltype(sampled_op)>();
  return op.call(left, right, left_index, right_index, fn);
}

OPDISPATCH_LIBRARY_FRAGMENT(pyg, m) {
  m.def(OPDISPATCH_SELECTIVE_SCHEMA(
      "pyg::sampled_op(Tensor left, Tensor right, Tensor? left_index, Tensor? "
      "right_index, str op) -> Tensor"));
}

}  // namespace ops
}  // namespace pyg
