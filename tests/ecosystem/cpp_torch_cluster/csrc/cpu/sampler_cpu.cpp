// After torch_cluster's csrc/cpu/sampler_cpu.cpp (rusty1s/pytorch_cluster @
// 3d1d9e39): neighbour sampling in a CSR graph. For each start node it picks
// `count` of its edges (or ceil(factor * degree) when count < 1, at most all
// of them) without replacement: rand() into a set when it wants few, the
// head of a randperm when it wants most. The edge ids are gathered in a
// std::vector and returned through from_blob(..., options).clone(), as
// upstream does.
#include "sampler_cpu.h"

#include <cmath>
#include <unordered_set>
#include <vector>

#include "utils.h"

opdispatch::Tensor neighbor_sampler_cpu(opdispatch::Tensor start, opdispatch::Tensor rowptr, int64_t count,
                                        double factor) {
  auto start_data = start.data_ptr<int64_t>();
  auto rowptr_data = rowptr.data_ptr<int64_t>();

  std::vector<int64_t> e_ids;
  for (int64_t i = 0; i < start.size(0); i++) {
    auto row_start = rowptr_data[start_data[i]];
    auto num_neighbors = rowptr_data[start_data[i] + 1] - row_start;

    int64_t size = count;
    if (count < 1) size = int64_t(ceil(factor * float(num_neighbors)));
    if (size > num_neighbors) size = num_neighbors;

    if (size < 0.7 * float(num_neighbors)) {
      std::unordered_set<int64_t> picked;
      while (int64_t(picked.size()) < size) picked.insert(rand() % num_neighbors + row_start);
      e_ids.insert(e_ids.end(), picked.begin(), picked.end());
    } else {
      auto perm = opdispatch::randperm(num_neighbors, start.options());
      auto perm_data = perm.data_ptr<int64_t>();
      for (int64_t j = 0; j < size; j++) e_ids.push_back(perm_data[j] + row_start);
    }
  }

  int64_t length = e_ids.size();
  return opdispatch::from_blob(e_ids.data(), {length}, start.options()).clone();
}
