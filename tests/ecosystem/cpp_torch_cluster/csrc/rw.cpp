// After torch_cluster's csrc/rw.cpp (rusty1s/pytorch_cluster @ 3d1d9e39):
// the device switch in front of the CPU kernel, registered with the older
// API; its two results make the inferred schema return a tuple.
#include <opdispatch/library.h>

#include "cpu/rw_cpu.h"

CLUSTER_API std::tuple<opdispatch::Tensor, opdispatch::Tensor> random_walk(opdispatch::Tensor rowptr,
                                                                           opdispatch::Tensor col,
                                                                           opdispatch::Tensor start,
                                                                           int64_t walk_length, double p, double q) {
  if (rowptr.device().is_cuda()) {
#ifdef WITH_CUDA
    return random_walk_cuda(rowptr, col, start, walk_length, p, q);
#else
    OPDISPATCH_ERROR("Not compiled with CUDA support");
#endif
  }
  return random_walk_cpu(rowptr, col, start, walk_length, p, q);
}

static auto registry = opdispatch::RegisterOperators().op("torch_cluster::random_walk", &random_walk);
