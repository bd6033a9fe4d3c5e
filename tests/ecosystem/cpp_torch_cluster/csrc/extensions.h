// After torch_cluster's csrc/extensions.h: the one include of the library's
// sources (<torch/torch.h> under the name map).
#pragma once

#include <opdispatch/library.h>
#include "macros.h"
