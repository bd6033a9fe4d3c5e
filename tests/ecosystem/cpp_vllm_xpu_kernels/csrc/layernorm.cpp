// Kernels for vllm-xpu-kernels' RMS norms (upstream: csrc/layernorm.cpp,
// SYCL): rows of the last dimension, y = x / sqrt(mean(x^2) + eps) * weight.
#include <cmath>

#include "kernel_utils.h"
#include "ops.h"

namespace {
void rms_rows(const float* x, const float* w, float* y, int64_t rows, int64_t d, double epsilon) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t i = 0; i < d; ++i) {
      sum += static_cast<double>(x[r * d + i]) * x[r * d + i];
    }
    const float inv = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(d) + epsilon));
    for (int64_t i = 0; i < d; ++i) {
      y[r * d + i] = x[r * d + i] * inv * w[i];
    }
  }
}
} // namespace

void rms_norm(opdispatch::Tensor& out, opdispatch::Tensor& input, opdispatch::Tensor& weight, double epsilon) {
  const int64_t d = input.size(-1);
  OPDISPATCH_CHECK(weight.numel() == d && out.numel() == input.numel(), "rms_norm: shapes do not match");
  rms_rows(vllm_port::xpu_data(input, "rms_norm"), vllm_port::xpu_data(weight, "rms_norm"),
           vllm_port::xpu_data(out, "rms_norm"), input.numel() / d, d, epsilon);
}

void fused_add_rms_norm(opdispatch::Tensor& input, opdispatch::Tensor& residual, opdispatch::Tensor& weight,
                        double epsilon) {
  const int64_t d = input.size(-1);
  OPDISPATCH_CHECK(weight.numel() == d && residual.numel() == input.numel(), "fused_add_rms_norm: shapes do not match");
  float* x = vllm_port::xpu_data(input, "fused_add_rms_norm");
  float* res = vllm_port::xpu_data(residual, "fused_add_rms_norm");
  // residual += input; input = rms_norm(residual) * weight
  for (int64_t i = 0; i < input.numel(); ++i) {
    res[i] += x[i];
  }
  rms_rows(res, vllm_port::xpu_data(weight, "fused_add_rms_norm"), x, input.numel() / d, d, epsilon);
}
