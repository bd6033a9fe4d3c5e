// After torch_cluster's csrc/cpu/rw_cpu.h.
#pragma once

#include "../extensions.h"

std::tuple<opdispatch::Tensor, opdispatch::Tensor> random_walk_cpu(opdispatch::Tensor rowptr, opdispatch::Tensor col,
                                                                   opdispatch::Tensor start, int64_t walk_length,
                                                                   double p, double q);
