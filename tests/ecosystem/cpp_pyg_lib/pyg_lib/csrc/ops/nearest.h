// After pyg-team/pyg-lib, pyg_lib/csrc/ops/nearest.h.
#pragma once

#include <opdispatch/library.h>

#include "../macros.h"

namespace pyg {
namespace ops {

// For each point of `x`, the index of the nearest point of `y` (squared
// Euclidean distance), within the batches that `ptr_x` / `ptr_y` delimit.
PYG_API opdispatch::Tensor nearest(const opdispatch::Tensor& x,
                           const opdispatch::Tensor& y,
                           const std::optional<opdispatch::Tensor>& ptr_x,
                           const std::optional<opdispatch::Tensor>& ptr_y);

}  // namespace ops
}  // namespace pyg
