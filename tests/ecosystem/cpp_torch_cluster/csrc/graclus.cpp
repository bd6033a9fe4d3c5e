// After torch_cluster's csrc/graclus.cpp (rusty1s/pytorch_cluster @ 3d1d9e39):
// the device switch in front of the CPU kernel, registered with the older API.
#include <opdispatch/library.h>

#include "cpu/graclus_cpu.h"

CLUSTER_API opdispatch::Tensor graclus(opdispatch::Tensor rowptr, opdispatch::Tensor col,
                                       std::optional<opdispatch::Tensor> optional_weight) {
  if (rowptr.device().is_cuda()) {
#ifdef WITH_CUDA
    return graclus_cuda(rowptr, col, optional_weight);
#else
    OPDISPATCH_ERROR("Not compiled with CUDA support");
#endif
  }
  return graclus_cpu(rowptr, col, optional_weight);
}

static auto registry = opdispatch::RegisterOperators().op("torch_cluster::graclus", &graclus);
