// After torch_cluster's csrc/cpu/fps_cpu.cpp (rusty1s/pytorch_cluster @
// 3d1d9e39): farthest point sampling. Each example b of the batch (the rows
// ptr[b] .. ptr[b+1]-1 of src) keeps ceil(ratio * its size) points: its
// first point (or a random one), then again and again the point farthest
// from those kept so far. The same ATen calls as upstream: x[i], pow_, sum
// over a dim, ceil, toType, cumsum, argmax, the two-tensor min, narrow,
// empty with options, and parallel_for over the examples.
#include "fps_cpu.h"

#include <opdispatch/library.h>

#include "utils.h"

// Squared distances of every row of x to row idx.
inline opdispatch::Tensor get_dist(opdispatch::Tensor x, int64_t idx) {
  return (x - x[idx]).pow_(2).sum(1);
}

opdispatch::Tensor fps_cpu(opdispatch::Tensor src, opdispatch::Tensor ptr, opdispatch::Tensor ratio,
                           bool random_start) {
  CHECK_CPU(src);
  CHECK_CPU(ptr);
  CHECK_CPU(ratio);
  CHECK_INPUT(ptr.dim() == 1);

  src = src.view({src.size(0), -1}).contiguous();
  ptr = ptr.contiguous();
  auto batch_size = ptr.numel() - 1;

  // Points per example, then how many each keeps, as exclusive ends.
  auto deg = ptr.narrow(0, 1, batch_size) - ptr.narrow(0, 0, batch_size);
  auto out_ptr = deg.toType(opdispatch::kFloat) * ratio;
  out_ptr = out_ptr.ceil().toType(opdispatch::kLong).cumsum(0);

  auto out = opdispatch::empty({out_ptr[-1].data_ptr<int64_t>()[0]}, ptr.options());

  auto ptr_data = ptr.data_ptr<int64_t>();
  auto out_ptr_data = out_ptr.data_ptr<int64_t>();
  auto out_data = out.data_ptr<int64_t>();

  int64_t grain_size = 1;  // one example per task
  opdispatch::parallel_for(0, batch_size, grain_size, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; b++) {
      int64_t first = ptr_data[b], last = ptr_data[b + 1];
      int64_t out_first = b == 0 ? 0 : out_ptr_data[b - 1], out_last = out_ptr_data[b];

      auto y = src.narrow(0, first, last - first);

      int64_t start_idx = 0;
      if (random_start) start_idx = rand() % y.size(0);

      out_data[out_first] = first + start_idx;
      auto dist = get_dist(y, start_idx);

      for (int64_t i = 1; i < out_last - out_first; i++) {
        int64_t farthest = dist.argmax().data_ptr<int64_t>()[0];
        out_data[out_first + i] = first + farthest;
        dist = opdispatch::min(dist, get_dist(y, farthest));
      }
    }
  });

  return out;
}
