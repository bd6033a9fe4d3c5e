// After torch_cluster's csrc/cpu/rw_cpu.cpp (rusty1s/pytorch_cluster @
// 3d1d9e39): random walks of `walk_length` steps from each start node of a
// CSR graph, giving the nodes visited (walk_length + 1 per walk) and the
// edges taken (-1 where a node has none, the walk staying put). With p = q =
// 1 each step follows a uniform edge, drawn from rand({numel, walk_length});
// otherwise node2vec's biased walk by rejection sampling with rand(). The
// same ATen calls as upstream: rand, empty with options, data_ptr,
// parallel_for with a grain of at::internal::GRAIN_SIZE / walk_length.
#include "rw_cpu.h"

#include <cmath>
#include <cstdlib>

#include <opdispatch/library.h>

#include "utils.h"

void uniform_sampling(const int64_t *rowptr, const int64_t *col, const int64_t *start, int64_t *n_out,
                      int64_t *e_out, const int64_t numel, const int64_t walk_length) {
  auto rand = opdispatch::rand({numel, walk_length});
  auto rand_data = rand.data_ptr<float>();

  int64_t grain_size = opdispatch::internal::GRAIN_SIZE / walk_length;
  opdispatch::parallel_for(0, numel, grain_size, [&](int64_t begin, int64_t end) {
    for (auto n = begin; n < end; n++) {
      int64_t n_cur = start[n], e_cur;
      n_out[n * (walk_length + 1)] = n_cur;

      for (int64_t l = 0; l < walk_length; l++) {
        int64_t row_start = rowptr[n_cur], row_end = rowptr[n_cur + 1];
        if (row_end == row_start) {
          e_cur = -1;  // no edge: stay
        } else {
          e_cur = row_start + int64_t(rand_data[n * walk_length + l] * (row_end - row_start));
          n_cur = col[e_cur];
        }
        n_out[n * (walk_length + 1) + (l + 1)] = n_cur;
        e_out[n * walk_length + l] = e_cur;
      }
    }
  });
}

inline bool is_neighbor(const int64_t *rowptr, const int64_t *col, int64_t v, int64_t w) {
  for (auto e = rowptr[v]; e < rowptr[v + 1]; e++)
    if (col[e] == w) return true;
  return false;
}

// node2vec's second-order walk: from v (having come from t), a drawn edge to x
// is kept with probability 1/p if x is t, 1 if x neighbours t, 1/q otherwise
// (each divided by the largest of the three).
void rejection_sampling(const int64_t *rowptr, const int64_t *col, int64_t *start, int64_t *n_out, int64_t *e_out,
                        const int64_t numel, const int64_t walk_length, const double p, const double q) {
  double max_prob = fmax(fmax(1. / p, 1.), 1. / q);
  double prob_0 = 1. / p / max_prob;
  double prob_1 = 1. / max_prob;
  double prob_2 = 1. / q / max_prob;

  int64_t grain_size = opdispatch::internal::GRAIN_SIZE / walk_length;
  opdispatch::parallel_for(0, numel, grain_size, [&](int64_t begin, int64_t end) {
    for (auto n = begin; n < end; n++) {
      int64_t t = start[n], v, x, e_cur;
      n_out[n * (walk_length + 1)] = t;

      // The first step is uniform.
      int64_t row_start = rowptr[t], row_end = rowptr[t + 1];
      if (row_end == row_start) {
        e_cur = -1;
        v = t;
      } else {
        e_cur = row_start + (rand() % (row_end - row_start));
        v = col[e_cur];
      }
      n_out[n * (walk_length + 1) + 1] = v;
      e_out[n * walk_length] = e_cur;

      for (int64_t l = 1; l < walk_length; l++) {
        row_start = rowptr[v], row_end = rowptr[v + 1];
        if (row_end == row_start) {
          e_cur = -1;
          x = v;
        } else if (row_end - row_start == 1) {
          e_cur = row_start;
          x = col[e_cur];
        } else {
          while (true) {
            e_cur = row_start + (rand() % (row_end - row_start));
            x = col[e_cur];
            auto r = ((double)rand() / (RAND_MAX));  // [0, 1]
            if (x == t && r < prob_0) break;
            if (is_neighbor(rowptr, col, x, t) && r < prob_1) break;
            if (r < prob_2) break;
          }
        }
        n_out[n * (walk_length + 1) + (l + 1)] = x;
        e_out[n * walk_length + l] = e_cur;
        t = v;
        v = x;
      }
    }
  });
}

std::tuple<opdispatch::Tensor, opdispatch::Tensor> random_walk_cpu(opdispatch::Tensor rowptr, opdispatch::Tensor col,
                                                                   opdispatch::Tensor start, int64_t walk_length,
                                                                   double p, double q) {
  CHECK_CPU(rowptr);
  CHECK_CPU(col);
  CHECK_CPU(start);

  CHECK_INPUT(rowptr.dim() == 1);
  CHECK_INPUT(col.dim() == 1);
  CHECK_INPUT(start.dim() == 1);

  auto n_out = opdispatch::empty({start.size(0), walk_length + 1}, start.options());
  auto e_out = opdispatch::empty({start.size(0), walk_length}, start.options());

  auto rowptr_data = rowptr.data_ptr<int64_t>();
  auto col_data = col.data_ptr<int64_t>();
  auto start_data = start.data_ptr<int64_t>();
  auto n_out_data = n_out.data_ptr<int64_t>();
  auto e_out_data = e_out.data_ptr<int64_t>();

  if (p == 1. && q == 1.) {
    uniform_sampling(rowptr_data, col_data, start_data, n_out_data, e_out_data, start.numel(), walk_length);
  } else {
    rejection_sampling(rowptr_data, col_data, start_data, n_out_data, e_out_data, start.numel(), walk_length, p, q);
  }

  return std::make_tuple(n_out, e_out);
}
