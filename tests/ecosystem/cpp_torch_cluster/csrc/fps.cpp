// After torch_cluster's csrc/fps.cpp (rusty1s/pytorch_cluster @ 3d1d9e39):
// the device switch in front of the CPU kernel, registered with the older
// API as upstream does (the schema inferred from the signature).
#include <opdispatch/library.h>

#include "cpu/fps_cpu.h"

CLUSTER_API opdispatch::Tensor fps(opdispatch::Tensor src, opdispatch::Tensor ptr, opdispatch::Tensor ratio,
                                   bool random_start) {
  if (src.device().is_cuda()) {
#ifdef WITH_CUDA
    return fps_cuda(src, ptr, ratio, random_start);
#else
    OPDISPATCH_ERROR("Not compiled with CUDA support");
#endif
  }
  return fps_cpu(src, ptr, ratio, random_start);
}

static auto registry = opdispatch::RegisterOperators().op("torch_cluster::fps", &fps);
