// After torch_cluster's csrc/macros.h (rusty1s/pytorch_cluster @ 3d1d9e39):
// the export macro of its operator functions (empty outside Windows).
#pragma once

#ifdef _WIN32
#define CLUSTER_API __declspec(dllexport)
#else
#define CLUSTER_API
#endif
