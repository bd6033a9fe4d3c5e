// Kernel for vllm-xpu-kernels' merge_attn_states (upstream:
// csrc/attention/merge_attn_states.cpp, SYCL): combines two partial
// attention results by their log-sum-exps (section 2.2 of arXiv:2501.01005).
// outputs [num_tokens, num_heads, head_size], lses [num_heads, num_tokens].
#include <algorithm>
#include <cmath>

#include "../kernel_utils.h"
#include "../ops.h"

void merge_attn_states(
    opdispatch::Tensor& output,
    std::optional<opdispatch::Tensor> output_lse,
    const opdispatch::Tensor& prefix_output,
    const opdispatch::Tensor& prefix_lse,
    const opdispatch::Tensor& suffix_output,
    const opdispatch::Tensor& suffix_lse) {
  const int64_t num_tokens = output.size(0), num_heads = output.size(1), head_size = output.size(2);
  const float* po = vllm_port::xpu_data(prefix_output, "merge_attn_states");
  const float* so = vllm_port::xpu_data(suffix_output, "merge_attn_states");
  const float* pl = vllm_port::xpu_data(prefix_lse, "merge_attn_states");
  const float* sl = vllm_port::xpu_data(suffix_lse, "merge_attn_states");
  float* out = vllm_port::xpu_data(output, "merge_attn_states");
  float* out_lse = output_lse ? vllm_port::xpu_data(*output_lse, "merge_attn_states") : nullptr;
  for (int64_t t = 0; t < num_tokens; ++t) {
    for (int64_t h = 0; h < num_heads; ++h) {
      const float p = pl[h * num_tokens + t], s = sl[h * num_tokens + t];
      const float m = std::max(p, s);
      const float pw = std::exp(p - m), sw = std::exp(s - m);
      for (int64_t i = 0; i < head_size; ++i) {
        const int64_t at = (t * num_heads + h) * head_size + i;
        out[at] = (po[at] * pw + so[at] * sw) / (pw + sw);
      }
      if (out_lse != nullptr) {
        out_lse[h * num_tokens + t] = m + std::log(pw + sw);
      }
    }
  }
}
