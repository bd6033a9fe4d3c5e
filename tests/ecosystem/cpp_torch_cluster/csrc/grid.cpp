// After torch_cluster's csrc/grid.cpp (rusty1s/pytorch_cluster @ 3d1d9e39):
// the device switch in front of the CPU kernel, registered through the older
// registration API, RegisterOperators().op(name, &fn), which infers the
// schema from the function's signature and registers it as a catch-all kernel.
#include <opdispatch/library.h>

#include "cpu/grid_cpu.h"

CLUSTER_API opdispatch::Tensor grid(opdispatch::Tensor pos, opdispatch::Tensor size,
                                    std::optional<opdispatch::Tensor> optional_start,
                                    std::optional<opdispatch::Tensor> optional_end) {
  if (pos.device().is_cuda()) {
#ifdef WITH_CUDA
    return grid_cuda(pos, size, optional_start, optional_end);
#else
    OPDISPATCH_ERROR("Not compiled with CUDA support");
#endif
  }
  return grid_cpu(pos, size, optional_start, optional_end);
}

static auto registry = opdispatch::RegisterOperators().op("torch_cluster::grid", &grid);
