// Port of vllm-project/vllm-xpu-kernels, csrc/torch_bindings.cpp: the
// registration code as upstream with the name map (torch::/at:: ->
// opdispatch::, TORCH_ -> OPDISPATCH_), for a subset of the operators (the
// others are left out with their kernels). Two libraries (_C and
// _C_cache_ops) named through macros, XPU kernels beside CPU ones, and an
// impl without a key.
#include "core/registration.h"
#include "ops.h"

#include <opdispatch/library.h>

// Note on op signatures:
// The X_meta signatures are for the meta functions corresponding to op X.
// They must be kept in sync with the signature for X. Generally, only
// functions that return Tensors require a meta function.
//
// See the following links for detailed docs on op registration and function
// schemas.
// https://docs.google.com/document/d/1_W62p8WJOQQUzPsJYa7s701JXt0qf2OfLub2sbkHOaU/edit#heading=h.ptttacy8y1u9
// https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#annotations

OPDISPATCH_LIBRARY_EXPAND(OPDISPATCH_EXTENSION_NAME, ops) {
  opdispatch::Tag stride_tag = opdispatch::Tag::needs_fixed_stride_order;

  ops.def("weak_ref_tensor(Tensor input) -> Tensor");
  ops.impl("weak_ref_tensor", opdispatch::kXPU, &weak_ref_tensor);

  // Layernorm
  // Apply Root Mean Square (RMS) Normalization to the input tensor.
  // FIXME: torch op check consider input & weight is mutable in some ut
  // cases. so we make it mutable here.
  ops.def(
      "rms_norm(Tensor! result, Tensor input, Tensor weight, float epsilon) "
      "-> "
      "()");
  ops.impl("rms_norm", opdispatch::kXPU, &rms_norm);

  // In-place fused Add and RMS Normalization.
  ops.def(
      "fused_add_rms_norm(Tensor! input, Tensor! residual, Tensor weight, "
      "float epsilon) -> ()");
  ops.impl("fused_add_rms_norm", opdispatch::kXPU, &fused_add_rms_norm);

  // activation ops
  ops.def("silu_and_mul(Tensor! result, Tensor input) -> ()");
  ops.impl("silu_and_mul", opdispatch::kXPU, &silu_and_mul);

  ops.def("mul_and_silu(Tensor! out, Tensor input) -> ()");
  ops.impl("mul_and_silu", opdispatch::kXPU, &mul_and_silu);

  ops.def("gelu_and_mul(Tensor! out, Tensor input) -> ()");
  ops.impl("gelu_and_mul", opdispatch::kXPU, &gelu_and_mul);

  ops.def("fatrelu_and_mul(Tensor! out, Tensor! input, float threshold) -> ()");
  ops.impl("fatrelu_and_mul", opdispatch::kXPU, &fatrelu_and_mul);

  ops.def("gelu_quick(Tensor! out, Tensor input) -> ()");
  ops.impl("gelu_quick", opdispatch::kXPU, &gelu_quick);

  // pos_embedding
  ops.def(
      "rotary_embedding(Tensor positions, Tensor! query,"
      "                 Tensor!? key, int head_size,"
      "                 Tensor cos_sin_cache, bool is_neox) -> ()");
  ops.impl("rotary_embedding", opdispatch::kXPU, &rotary_embedding);

  ops.def(
      "get_xpu_view_from_cpu_tensor(Tensor cpu_tensor) -> "
      "Tensor");
  ops.impl(
      "get_xpu_view_from_cpu_tensor",
      opdispatch::kCPU,
      &get_xpu_view_from_cpu_tensor);

  // Synchronous raw-pointer memcpy helper (0=H2D, 1=D2H, 2=D2D).
  // This is intentionally pointer-based to support allocator-managed buffers.
  ops.def(
      "xpu_memcpy_sync(int dst_ptr, int src_ptr, int n_bytes, int kind, "
      "int device=-1) -> ()");
  ops.impl("xpu_memcpy_sync", &xpu_memcpy_sync);

  // Merge attn states
  // Implements section 2.2 of https://www.arxiv.org/pdf/2501.01005
  // can be used to combine partial attention results (in the split-KV case)
  ops.def(
      "merge_attn_states("
      "    Tensor! output,"
      "    Tensor!? output_lse,"
      "    Tensor prefix_output,"
      "    Tensor prefix_lse,"
      "    Tensor suffix_output,"
      "    Tensor suffix_lse) -> ()");
  ops.impl("merge_attn_states", opdispatch::kXPU, &merge_attn_states);
}

OPDISPATCH_LIBRARY_EXPAND(CONCAT(OPDISPATCH_EXTENSION_NAME, _cache_ops), cache_ops) {
  // Reshape the key and value tensors and cache them.
  cache_ops.def(
      "reshape_and_cache_flash(Tensor key, Tensor value,"
      "                        Tensor! key_cache,"
      "                        Tensor! value_cache,"
      "                        Tensor slot_mapping,"
      "                        str kv_cache_dtype,"
      "                        Tensor k_scale, Tensor v_scale) -> ()");
  cache_ops.impl(
      "reshape_and_cache_flash", opdispatch::kXPU, &reshape_and_cache_flash);

  // Cache ops
  // Swap in (out) the cache blocks from src to dst.
  cache_ops.def(
      "swap_blocks(Tensor src, Tensor! dst,"
      "            int block_size_in_bytes, Tensor block_mapping) -> ()");
  cache_ops.impl("swap_blocks", opdispatch::kXPU, &swap_blocks);
  // Batch swap: copies N (src_ptr, dst_ptr, size) triples in one call.
  // The target XPU device is auto-inferred from the device pointer.
  cache_ops.def(
      "swap_blocks_batch(Tensor src_ptrs, Tensor dst_ptrs,"
      "                  Tensor sizes) -> ()");
  cache_ops.impl("swap_blocks_batch", opdispatch::kCPU, &swap_blocks_batch);
}

REGISTER_EXTENSION(OPDISPATCH_EXTENSION_NAME)
