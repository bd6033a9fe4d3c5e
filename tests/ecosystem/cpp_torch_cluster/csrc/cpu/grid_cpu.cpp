// After torch_cluster's csrc/cpu/grid_cpu.cpp (rusty1s/pytorch_cluster @
// 3d1d9e39): the voxel grid clustering of points. Each point `pos[i]` falls
// in the cell floor((pos[i] - start) / size) of a grid spanning start..end
// (the points' minimum and maximum unless given); the cell's number is its
// row-major index. The same ATen calls as upstream: view, min/max with a
// dim, true_divide, toType, cumprod, cat with ones, narrow, *=, sum.
#include "grid_cpu.h"

#include "utils.h"

opdispatch::Tensor grid_cpu(opdispatch::Tensor pos, opdispatch::Tensor size,
                            std::optional<opdispatch::Tensor> optional_start,
                            std::optional<opdispatch::Tensor> optional_end) {
  CHECK_CPU(pos);
  CHECK_CPU(size);
  if (optional_start.has_value()) CHECK_CPU(optional_start.value());
  if (optional_end.has_value()) CHECK_CPU(optional_end.value());

  // One row of coordinates per point.
  pos = pos.view({pos.size(0), -1});
  CHECK_INPUT(size.numel() == pos.size(1));

  if (optional_start.has_value())
    CHECK_INPUT(optional_start.value().numel() == pos.size(1));
  else
    optional_start = std::get<0>(pos.min(0));
  if (optional_end.has_value())
    CHECK_INPUT(optional_end.value().numel() == pos.size(1));
  else
    optional_end = std::get<0>(pos.max(0));

  auto start = optional_start.value();
  auto end = optional_end.value();
  pos = pos - start.unsqueeze(0);

  // Cells per dimension, then the stride of each dimension in cells:
  // 1, n0, n0*n1, ... (an exclusive running product).
  auto cells = (end - start).true_divide(size).toType(opdispatch::kLong) + 1;
  cells = cells.cumprod(0);
  cells = opdispatch::cat({opdispatch::ones({1}, cells.options()), cells}, 0);
  cells = cells.narrow(0, 0, size.size(0));

  auto cluster = pos.true_divide(size.view({1, -1})).toType(opdispatch::kLong);
  cluster *= cells.view({1, -1});
  return cluster.sum(1);
}
