// After torch_cluster's csrc/cpu/graclus_cpu.cpp (rusty1s/pytorch_cluster @
// 3d1d9e39): Graclus' greedy matching of a graph in CSR form (rowptr, col).
// The nodes are visited in a random order (randperm); an unmatched node is
// matched with an unmatched neighbour -- the first one, or with weights the
// heaviest edge's -- and both get the smaller node's number as cluster.
// The same ATen calls as upstream: full and randperm with rowptr's options,
// data_ptr, and AT_DISPATCH_ALL_TYPES_AND2 with Half and BFloat16.
#include "graclus_cpu.h"

#include "utils.h"

opdispatch::Tensor graclus_cpu(opdispatch::Tensor rowptr, opdispatch::Tensor col,
                               std::optional<opdispatch::Tensor> optional_weight) {
  CHECK_CPU(rowptr);
  CHECK_CPU(col);
  CHECK_INPUT(rowptr.dim() == 1 && col.dim() == 1);
  if (optional_weight.has_value()) {
    CHECK_CPU(optional_weight.value());
    CHECK_INPUT(optional_weight.value().dim() == 1);
    CHECK_INPUT(optional_weight.value().numel() == col.numel());
  }

  int64_t num_nodes = rowptr.numel() - 1;
  auto out = opdispatch::full(num_nodes, -1, rowptr.options());
  auto node_perm = opdispatch::randperm(num_nodes, rowptr.options());

  auto rowptr_data = rowptr.data_ptr<int64_t>();
  auto col_data = col.data_ptr<int64_t>();
  auto node_perm_data = node_perm.data_ptr<int64_t>();
  auto out_data = out.data_ptr<int64_t>();

  if (!optional_weight.has_value()) {
    for (int64_t n = 0; n < num_nodes; n++) {
      auto u = node_perm_data[n];
      if (out_data[u] >= 0) continue;  // matched already

      out_data[u] = u;
      for (auto e = rowptr_data[u]; e < rowptr_data[u + 1]; e++) {
        auto v = col_data[e];
        if (out_data[v] >= 0) continue;
        out_data[u] = std::min(u, v);
        out_data[v] = std::min(u, v);
        break;
      }
    }
  } else {
    auto weight = optional_weight.value();
    auto scalar_type = weight.scalar_type();
    OPDISPATCH_DISPATCH_ALL_TYPES_AND2(opdispatch::ScalarType::Half, opdispatch::ScalarType::BFloat16, scalar_type,
                                       "graclus_cpu", [&] {
      auto weight_data = weight.data_ptr<scalar_t>();

      for (int64_t n = 0; n < num_nodes; n++) {
        auto u = node_perm_data[n];
        if (out_data[u] >= 0) continue;

        // The unmatched neighbour over the heaviest edge (the last among equals), else u itself.
        auto v_max = u;
        scalar_t w_max = (scalar_t)0.;
        for (auto e = rowptr_data[u]; e < rowptr_data[u + 1]; e++) {
          auto v = col_data[e];
          if (out_data[v] >= 0) continue;
          if (weight_data[e] >= w_max) {
            v_max = v;
            w_max = weight_data[e];
          }
        }
        out_data[u] = std::min(u, v_max);
        out_data[v_max] = std::min(u, v_max);
      }
    });
  }

  return out;
}
