// After torch_cluster's csrc/cpu/sampler_cpu.h.
#pragma once

#include "../extensions.h"

opdispatch::Tensor neighbor_sampler_cpu(opdispatch::Tensor start, opdispatch::Tensor rowptr, int64_t count,
                                        double factor);
