// After pyg-team/pyg-lib, pyg_lib/csrc/ops/sampled.h.
#pragma once

#include <opdispatch/library.h>

#include "../macros.h"

namespace pyg {
namespace ops {

// Applies the binary function `fn` ("add", "sub", "mul" or "div") to the rows
// of `left` and `right` picked by the optional index vectors.
PYG_API opdispatch::Tensor sampled_op(const opdispatch::Tensor& left,
                              const opdispatch::Tensor& right,
                              const opdispatch::optional<opdispatch::Tensor> left_index,
                              const opdispatch::optional<opdispatch::Tensor> right_index,
                              const std::string fn);

}  // namespace ops
}  // namespace pyg
