// After torch_cluster's csrc/cpu/fps_cpu.h.
#pragma once

#include "../extensions.h"

opdispatch::Tensor fps_cpu(opdispatch::Tensor src, opdispatch::Tensor ptr, opdispatch::Tensor ratio,
                           bool random_start);
