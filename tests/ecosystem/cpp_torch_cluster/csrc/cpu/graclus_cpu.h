// After torch_cluster's csrc/cpu/graclus_cpu.h.
#pragma once

#include "../extensions.h"

opdispatch::Tensor graclus_cpu(opdispatch::Tensor rowptr, opdispatch::Tensor col,
                               std::optional<opdispatch::Tensor> optional_weight);
