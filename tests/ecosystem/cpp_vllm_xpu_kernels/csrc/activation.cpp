// Kernels for vllm-xpu-kernels' activation ops (upstream: csrc/activation.cpp,
// SYCL), as loops over the last dimension: the gated ones read `input` as
// [..., 2 * d] and write [..., d].
#include <cmath>

#include "kernel_utils.h"
#include "ops.h"

namespace {

template <class F>
void gated(opdispatch::Tensor& out, const opdispatch::Tensor& input, const char* what, F f) {
  const float* x = vllm_port::xpu_data(input, what);
  float* y = vllm_port::xpu_data(out, what);
  const int64_t d = input.size(-1) / 2;
  OPDISPATCH_CHECK(out.size(-1) == d && out.numel() * 2 == input.numel(), what,
                   ": out must be input's shape with the last dimension halved");
  for (int64_t row = 0; row < out.numel() / d; ++row) {
    for (int64_t i = 0; i < d; ++i) {
      y[row * d + i] = f(x[row * 2 * d + i], x[row * 2 * d + d + i]);
    }
  }
}

float silu(float x) { return x / (1.0f + std::exp(-x)); }
float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * static_cast<float>(M_SQRT1_2))); }

} // namespace

void silu_and_mul(opdispatch::Tensor& out, opdispatch::Tensor& input) {
  gated(out, input, "silu_and_mul", [](float a, float b) { return silu(a) * b; });
}

void mul_and_silu(opdispatch::Tensor& out, opdispatch::Tensor& input) {
  gated(out, input, "mul_and_silu", [](float a, float b) { return a * silu(b); });
}

void gelu_and_mul(opdispatch::Tensor& out, opdispatch::Tensor& input) {
  gated(out, input, "gelu_and_mul", [](float a, float b) { return gelu(a) * b; });
}

void fatrelu_and_mul(opdispatch::Tensor& out, opdispatch::Tensor& input, double threshold) {
  const float t = static_cast<float>(threshold);
  gated(out, input, "fatrelu_and_mul", [t](float a, float b) { return (a > t ? a : 0.0f) * b; });
}

void gelu_quick(opdispatch::Tensor& out, opdispatch::Tensor& input) {
  const float* x = vllm_port::xpu_data(input, "gelu_quick");
  float* y = vllm_port::xpu_data(out, "gelu_quick");
  OPDISPATCH_CHECK(out.numel() == input.numel(), "gelu_quick: out and input differ in size");
  for (int64_t i = 0; i < input.numel(); ++i) {
    y[i] = x[i] / (1.0f + std::exp(-1.702f * x[i]));
  }
}
