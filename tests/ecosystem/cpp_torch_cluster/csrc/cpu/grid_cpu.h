// After torch_cluster's csrc/cpu/grid_cpu.h.
#pragma once

#include "../extensions.h"

opdispatch::Tensor grid_cpu(opdispatch::Tensor pos, opdispatch::Tensor size,
                            std::optional<opdispatch::Tensor> optional_start,
                            std::optional<opdispatch::Tensor> optional_end);
