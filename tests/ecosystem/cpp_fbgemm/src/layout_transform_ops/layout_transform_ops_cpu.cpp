/*
 * Port of pytorch/FBGEMM,
 * fbgemm_gpu/src/layout_transform_ops/layout_transform_ops_cpu.cpp
 * (BSD-style license, Meta Platforms, Inc. and affiliates): built as a second
 * extension that adds to the same fbgemm namespace, as upstream's separate
 * libraries do. Registration as upstream with the name map; the copy loop
 * written against the opdispatch tensor API (float32 and float64).
 */

#include <cstring>
#include <numeric>
#include <vector>

#include <opdispatch/library.h>
#include "fbgemm_gpu/utils/dispatch_macros.h"
#include "fbgemm_gpu/utils/ops_utils.h"

using Tensor = opdispatch::Tensor;

/// @defgroup layout-transform-cpu Layout Transformation CPU Operators
///

namespace fbgemm_gpu {

///@ingroup layout-transform-cpu
Tensor recat_embedding_grad_output_mixed_D_cpu(
    const Tensor& grad_output, // [B_local][Sum_T_global(D)]
    const std::vector<int64_t>& dim_sum_per_rank) {
  OPDISPATCH_CHECK(grad_output.is_contiguous());
  OPDISPATCH_CHECK(grad_output.dim() == 2, "grad_output must be [B_local][Sum_T_global(D)]");
  const auto B_local = grad_output.sizes()[0];

  Tensor sharded_grad_output =
      opdispatch::empty({grad_output.numel()}, grad_output.dtype());

  int n = dim_sum_per_rank.size();
  std::vector<int64_t> accum_dim_sum(n + 1);
  accum_dim_sum[0] = 0;
  std::partial_sum(
      dim_sum_per_rank.begin(), dim_sum_per_rank.end(), &accum_dim_sum[1]);
  const auto global_dim_sum = accum_dim_sum[n];
  OPDISPATCH_CHECK(B_local * global_dim_sum == grad_output.numel());

  const size_t itemsize = grad_output.scalar_type() == opdispatch::ScalarType::Double ? 8 : 4;
  OPDISPATCH_CHECK(grad_output.scalar_type() == opdispatch::ScalarType::Double ||
                   grad_output.scalar_type() == opdispatch::ScalarType::Float);
  const char* go = static_cast<const char*>(grad_output.data_ptr());
  char* sgo = static_cast<char*>(sharded_grad_output.data_ptr());
  for (int dim = 0; dim < n; ++dim) {
    const auto dim_sum = dim_sum_per_rank[dim];
    const auto sgo_offset = B_local * accum_dim_sum[dim];
    for (int64_t r = 0; r < B_local; ++r) {
      memcpy(
          sgo + (sgo_offset + r * dim_sum) * itemsize,
          go + (r * global_dim_sum + accum_dim_sum[dim]) * itemsize,
          dim_sum * itemsize);
    }
  }

  return sharded_grad_output;
}

} // namespace fbgemm_gpu

OPDISPATCH_LIBRARY_FRAGMENT(fbgemm, m) {
  m.def(
      "recat_embedding_grad_output_mixed_D_batch(Tensor grad_output, Tensor dim_sum_per_rank, Tensor cumsum_dim_sum_per_rank) -> Tensor");
  m.def(
      "recat_embedding_grad_output_mixed_D(Tensor grad_output, int[] dim_sum_per_rank) -> Tensor");
  m.def(
      "recat_embedding_grad_output(Tensor grad_output, int[] num_features_per_rank) -> Tensor");
}

OPDISPATCH_LIBRARY_IMPL(fbgemm, CPU, m) {
  DISPATCH_TO_CPU(
      "recat_embedding_grad_output_mixed_D",
      fbgemm_gpu::recat_embedding_grad_output_mixed_D_cpu);
}
