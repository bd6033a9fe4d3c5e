// Kernels for vllm-xpu-kernels' tensor views (upstream: csrc/tensor_utils.cpp
// and csrc/utils.h): an xpu tensor over a cpu tensor's memory (on this
// device, xpu memory is host memory, as with Intel GPUs' shared USM), and a
// second handle to a tensor's memory.
#include <opdispatch/core/Exception.h>

#include "ops.h"

namespace {
opdispatch::Tensor alias_on(const opdispatch::Tensor& t, opdispatch::Device device) {
  const opdispatch::TensorImpl* impl = t.unsafeGetTensorImpl();
  return opdispatch::Tensor(opdispatch::make_intrusive<opdispatch::TensorImpl>(
      impl->storage(), impl->dtype(), device, impl->sizes().vec(), impl->strides().vec(), impl->storage_offset()));
}
} // namespace

opdispatch::Tensor get_xpu_view_from_cpu_tensor(opdispatch::Tensor& cpu_tensor) {
  OPDISPATCH_CHECK(cpu_tensor.device().is_cpu(), "get_xpu_view_from_cpu_tensor: expected a cpu tensor");
  return alias_on(cpu_tensor, opdispatch::Device(opdispatch::kXPU));
}

opdispatch::Tensor weak_ref_tensor(opdispatch::Tensor& tensor) {
  return alias_on(tensor, tensor.device());
}
