// Kernels for vllm-xpu-kernels' cache ops (upstream: csrc/cache.cpp, SYCL).
#include <cstring>

#include "kernel_utils.h"
#include "ops.h"

// key/value [num_tokens, num_heads, head_size] into the flash layout
// [num_blocks, block_size, num_heads, head_size] at each token's slot
// (block = slot / block_size, offset = slot % block_size; a negative slot is
// padding and skipped). Only kv_cache_dtype "auto" (no quantization).
void reshape_and_cache_flash(
    opdispatch::Tensor& key,
    opdispatch::Tensor& value,
    opdispatch::Tensor& key_cache,
    opdispatch::Tensor& value_cache,
    opdispatch::Tensor& slot_mapping,
    const std::string& kv_cache_dtype,
    opdispatch::Tensor& k_scale,
    opdispatch::Tensor& v_scale) {
  OPDISPATCH_CHECK(kv_cache_dtype == "auto", "reshape_and_cache_flash: unsupported kv_cache_dtype '", kv_cache_dtype,
                   "'");
  const int64_t num_tokens = key.size(0);
  const int64_t entry = key.numel() / num_tokens;  // num_heads * head_size
  const int64_t block_size = key_cache.size(1);
  OPDISPATCH_CHECK(key_cache.numel() / (key_cache.size(0) * block_size) == entry,
                   "reshape_and_cache_flash: the cache's heads and head size differ from key's");
  const int64_t* slots = slot_mapping.data_ptr<int64_t>();
  const float* k = vllm_port::xpu_data(key, "reshape_and_cache_flash");
  const float* v = vllm_port::xpu_data(value, "reshape_and_cache_flash");
  float* kc = vllm_port::xpu_data(key_cache, "reshape_and_cache_flash");
  float* vc = vllm_port::xpu_data(value_cache, "reshape_and_cache_flash");
  for (int64_t t = 0; t < num_tokens; ++t) {
    if (slots[t] < 0) {
      continue;
    }
    const int64_t at = ((slots[t] / block_size) * block_size + slots[t] % block_size) * entry;
    std::memcpy(kc + at, k + t * entry, entry * sizeof(float));
    std::memcpy(vc + at, v + t * entry, entry * sizeof(float));
  }
}

// dst block j = src block i for each (i, j) row of block_mapping [n, 2].
void swap_blocks(
    opdispatch::Tensor& src,
    opdispatch::Tensor& dst,
    int64_t block_size_in_bytes,
    const opdispatch::Tensor& block_mapping) {
  const char* s = static_cast<const char*>(src.data_ptr());
  char* d = static_cast<char*>(dst.data_ptr());
  const int64_t* map = block_mapping.data_ptr<int64_t>();
  const int64_t src_blocks = src.size(0), dst_blocks = dst.size(0);
  for (int64_t i = 0; i < block_mapping.size(0); ++i) {
    OPDISPATCH_CHECK(map[2 * i] >= 0 && map[2 * i] < src_blocks && map[2 * i + 1] >= 0 && map[2 * i + 1] < dst_blocks,
                     "swap_blocks: block index out of range in row ", i);
    std::memcpy(d + map[2 * i + 1] * block_size_in_bytes, s + map[2 * i] * block_size_in_bytes, block_size_in_bytes);
  }
}

// For each i: copy sizes[i] bytes from address src_ptrs[i] to dst_ptrs[i].
void swap_blocks_batch(
    const opdispatch::Tensor& src_ptrs,
    const opdispatch::Tensor& dst_ptrs,
    const opdispatch::Tensor& sizes) {
  OPDISPATCH_CHECK(src_ptrs.numel() == dst_ptrs.numel() && sizes.numel() == src_ptrs.numel(),
                   "swap_blocks_batch: src_ptrs, dst_ptrs and sizes must have one entry per copy");
  for (int64_t i = 0; i < sizes.numel(); ++i) {
    std::memcpy(reinterpret_cast<void*>(dst_ptrs.data_ptr<int64_t>()[i]),
                reinterpret_cast<const void*>(src_ptrs.data_ptr<int64_t>()[i]),
                static_cast<size_t>(sizes.data_ptr<int64_t>()[i]));
  }
}
