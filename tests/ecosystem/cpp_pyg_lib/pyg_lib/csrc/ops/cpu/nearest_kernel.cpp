// After pyg-team/pyg-lib, pyg_lib/csrc/ops/cpu/nearest_kernel.cpp: a brute
// force search per batch, dtype-dispatched over the floating types.
#include "../nearest.h"

#include <opdispatch/library.h>
#include <opdispatch/library.h>

#include <limits>

namespace pyg {
namespace ops {

namespace {

template <typename scalar_t>
int64_t closest(const scalar_t* x_row,
                const scalar_t* y_data,
                int64_t y_begin,
                int64_t y_end,
                int64_t dim) {
  scalar_t best = std::numeric_limits<scalar_t>::max();
  int64_t best_j = y_begin;
  for (int64_t j = y_begin; j < y_end; j++) {
    scalar_t dist = 0;
    for (int64_t d = 0; d < dim; d++) {
      const scalar_t diff = x_row[d] - y_data[j * dim + d];
      dist += diff * diff;
    }
    if (dist < best) {
      best = dist;
      best_j = j;
    }
  }
  return best_j;
}

opdispatch::Tensor nearest_kernel(const opdispatch::Tensor& x,
                          const opdispatch::Tensor& y,
                          const std::optional<opdispatch::Tensor>& ptr_x,
                          const std::optional<opdispatch::Tensor>& ptr_y) {
  auto out = opdispatch::empty({x.size(0)}, x.options().dtype(opdispatch::kLong));

  OPDISPATCH_DISPATCH_FLOATING_TYPES(x.scalar_type(), "nearest_cpu", [&] {
    const scalar_t* x_data = x.data_ptr<scalar_t>();
    const scalar_t* y_data = y.data_ptr<scalar_t>();
    int64_t* out_data = out.data_ptr<int64_t>();
    const int64_t dim = x.size(1);

    if (!ptr_x.has_value()) {
      for (int64_t i = 0; i < x.size(0); i++) {
        out_data[i] = closest(x_data + i * dim, y_data, 0, y.size(0), dim);
      }
      return;
    }
    const int64_t* px = ptr_x.value().data_ptr<int64_t>();
    const int64_t* py = ptr_y.value().data_ptr<int64_t>();
    for (int64_t b = 0; b < ptr_x.value().size(0) - 1; b++) {
      for (int64_t i = px[b]; i < px[b + 1]; i++) {
        out_data[i] = closest(x_data + i * dim, y_data, py[b], py[b + 1], dim);
      }
    }
  });

  return out;
}

}  // namespace

OPDISPATCH_LIBRARY_IMPL(pyg, CPU, m) {
  m.impl(OPDISPATCH_SELECTIVE_NAME("pyg::nearest"), OPDISPATCH_FN(nearest_kernel));
}

}  // namespace ops
}  // namespace pyg
