// Kernel for vllm-xpu-kernels' rotary_embedding (upstream:
// csrc/pos_encoding_kernels.cpp, SYCL): rotates the first rot_dim values of
// each head of query (and key, if given) in place by the position's angles in
// cos_sin_cache [max_position, rot_dim] (cos half, then sin half); GPT-NeoX
// style pairs (i, i + rot_dim / 2), GPT-J style pairs (2i, 2i + 1).
#include "kernel_utils.h"
#include "ops.h"

namespace {
void rotate(float* x, int64_t num_tokens, int64_t row_size, int64_t head_size, const int64_t* positions,
            const float* cache, int64_t rot_dim, bool is_neox) {
  const int64_t half = rot_dim / 2;
  for (int64_t t = 0; t < num_tokens; ++t) {
    const float* cos = cache + positions[t] * rot_dim;
    const float* sin = cos + half;
    for (int64_t h = 0; h < row_size / head_size; ++h) {
      float* head = x + t * row_size + h * head_size;
      for (int64_t i = 0; i < half; ++i) {
        const int64_t a = is_neox ? i : 2 * i;
        const int64_t b = is_neox ? i + half : 2 * i + 1;
        const float xa = head[a], xb = head[b];
        head[a] = xa * cos[i] - xb * sin[i];
        head[b] = xb * cos[i] + xa * sin[i];
      }
    }
  }
}
} // namespace

void rotary_embedding(
    opdispatch::Tensor& positions,
    opdispatch::Tensor& query,
    std::optional<opdispatch::Tensor> key,
    int64_t head_size,
    opdispatch::Tensor& cos_sin_cache,
    bool is_neox) {
  OPDISPATCH_CHECK(positions.scalar_type() == opdispatch::ScalarType::Long && positions.is_contiguous(),
                   "rotary_embedding: positions must be contiguous int64");
  const int64_t num_tokens = positions.numel();
  const int64_t rot_dim = cos_sin_cache.size(1);
  const float* cache = vllm_port::xpu_data(cos_sin_cache, "rotary_embedding");
  rotate(vllm_port::xpu_data(query, "rotary_embedding"), num_tokens, query.numel() / num_tokens, head_size,
         positions.data_ptr<int64_t>(), cache, rot_dim, is_neox);
  if (key) {
    rotate(vllm_port::xpu_data(*key, "rotary_embedding"), num_tokens, key->numel() / num_tokens, head_size,
           positions.data_ptr<int64_t>(), cache, rot_dim, is_neox);
  }
}
