// After torch_cluster's csrc/sampler.cpp (rusty1s/pytorch_cluster @ 3d1d9e39):
// the device switch in front of the CPU kernel (there is no CUDA kernel),
// registered with the older API.
#include <opdispatch/library.h>

#include "cpu/sampler_cpu.h"

CLUSTER_API opdispatch::Tensor neighbor_sampler(opdispatch::Tensor start, opdispatch::Tensor rowptr, int64_t count,
                                                double factor) {
  if (rowptr.device().is_cuda()) {
#ifdef WITH_CUDA
    OPDISPATCH_ERROR("No CUDA version supported");
#else
    OPDISPATCH_ERROR("Not compiled with CUDA support");
#endif
  }
  return neighbor_sampler_cpu(start, rowptr, count, factor);
}

static auto registry = opdispatch::RegisterOperators().op("torch_cluster::neighbor_sampler", &neighbor_sampler);
