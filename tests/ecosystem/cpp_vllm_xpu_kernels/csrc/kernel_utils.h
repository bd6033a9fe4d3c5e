// Helpers for this port's kernels (not part of vllm-xpu-kernels): the
// kernels read and write float32 tensors through element pointers; on this
// host-memory "xpu" device a plain loop stands in for the SYCL kernel.
#pragma once

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/Tensor.h>

namespace vllm_port {

/// The float32 data of a contiguous tensor on an xpu device, for `what`.
inline float* xpu_data(const opdispatch::Tensor& t, const char* what) {
  OPDISPATCH_CHECK(t.device().is_xpu(), what, ": expected an xpu tensor, got one on ", t.device());
  OPDISPATCH_CHECK(t.is_contiguous(), what, ": expected a contiguous tensor");
  OPDISPATCH_CHECK(t.scalar_type() == opdispatch::ScalarType::Float, what, ": expected float32");
  return t.data_ptr<float>();
}

} // namespace vllm_port
