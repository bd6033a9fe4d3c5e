// After pyg-team/pyg-lib, pyg_lib/csrc/ops/cpu/sampled_kernel.cpp: the CPU
// kernel, index_select of the picked rows and a Tensor operator.
#include <opdispatch/library.h>
#include <opdispatch/library.h>

#include <map>
#include <string>

namespace pyg {
namespace ops {

namespace {

enum FnType { ADD, SUB, MUL, DIV };
const std::map<std::string, FnType> to_fn_type = {
    {"add", ADD}, {"sub", SUB}, {"mul", MUL}, {"div", DIV}};

opdispatch::Tensor sampled_op_kernel(const opdispatch::Tensor& left,
                             const opdispatch::Tensor& right,
                             const opdispatch::optional<opdispatch::Tensor> left_index,
                             const opdispatch::optional<opdispatch::Tensor> right_index,
                             const std::string fn) {
  opdispatch::Tensor a = left_index.has_value()
                     ? left.index_select(0, left_index.value())
                     : left;
  opdispatch::Tensor b = right_index.has_value()
                     ? right.index_select(0, right_index.value())
                     : right;
  switch (to_fn_type.at(fn)) {
    case ADD:
      return a + b;
    case SUB:
      return a - b;
    case MUL:
      return a * b;
    case DIV:
      return a / b;
  }
  return opdispatch::Tensor();
}

}  // namespace

OPDISPATCH_LIBRARY_IMPL(pyg, CPU, m) {
  m.impl(OPDISPATCH_SELECTIVE_NAME("pyg::sampled_op"), OPDISPATCH_FN(sampled_op_kernel));
}

}  // namespace ops
}  // namespace pyg
