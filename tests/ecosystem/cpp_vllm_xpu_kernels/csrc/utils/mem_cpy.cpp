// Kernel for vllm-xpu-kernels' xpu_memcpy_sync (upstream:
// csrc/utils/mem_cpy.cpp): copies n_bytes between raw addresses; every kind
// (0=H2D, 1=D2H, 2=D2D) is a host copy on this device.
#include <cstring>

#include <opdispatch/core/Exception.h>

#include "../ops.h"

void xpu_memcpy_sync(
    int64_t dst_ptr,
    int64_t src_ptr,
    int64_t n_bytes,
    int64_t kind,
    int64_t device) {
  OPDISPATCH_CHECK(kind >= 0 && kind <= 2, "xpu_memcpy_sync: kind must be 0 (H2D), 1 (D2H) or 2 (D2D), got ", kind);
  OPDISPATCH_CHECK(n_bytes >= 0, "xpu_memcpy_sync: n_bytes must be >= 0");
  (void)device;
  std::memcpy(reinterpret_cast<void*>(dst_ptr), reinterpret_cast<const void*>(src_ptr), static_cast<size_t>(n_bytes));
}
