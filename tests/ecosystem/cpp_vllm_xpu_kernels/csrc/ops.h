// Port of vllm-project/vllm-xpu-kernels, csrc/ops.h (the declarations of the
// operators ported), with the name map; signatures as upstream's at the
// torch_bindings.cpp this port follows.
#pragma once

#include <optional>
#include <string>

#include <opdispatch/core/Tensor.h>

namespace torch = opdispatch;

opdispatch::Tensor weak_ref_tensor(opdispatch::Tensor& tensor);

void rms_norm(
    opdispatch::Tensor& out,
    opdispatch::Tensor& input,
    opdispatch::Tensor& weight,
    double epsilon);

void fused_add_rms_norm(
    opdispatch::Tensor& input,
    opdispatch::Tensor& residual,
    opdispatch::Tensor& weight,
    double epsilon);

void silu_and_mul(opdispatch::Tensor& out, opdispatch::Tensor& input);

void mul_and_silu(opdispatch::Tensor& out, opdispatch::Tensor& input);

void gelu_and_mul(opdispatch::Tensor& out, opdispatch::Tensor& input);

void fatrelu_and_mul(
    opdispatch::Tensor& out, opdispatch::Tensor& input, double threshold);

void gelu_quick(opdispatch::Tensor& out, opdispatch::Tensor& input);

void rotary_embedding(
    opdispatch::Tensor& positions,
    opdispatch::Tensor& query,
    std::optional<opdispatch::Tensor> key,
    int64_t head_size,
    opdispatch::Tensor& cos_sin_cache,
    bool is_neox);

void reshape_and_cache_flash(
    opdispatch::Tensor& key,
    opdispatch::Tensor& value,
    opdispatch::Tensor& key_cache,
    opdispatch::Tensor& value_cache,
    opdispatch::Tensor& slot_mapping,
    const std::string& kv_cache_dtype,
    opdispatch::Tensor& k_scale,
    opdispatch::Tensor& v_scale);

opdispatch::Tensor get_xpu_view_from_cpu_tensor(opdispatch::Tensor& cpu_tensor);

void swap_blocks(
    opdispatch::Tensor& src,
    opdispatch::Tensor& dst,
    int64_t block_size_in_bytes,
    const opdispatch::Tensor& block_mapping);

void swap_blocks_batch(
    const opdispatch::Tensor& src_ptrs,
    const opdispatch::Tensor& dst_ptrs,
    const opdispatch::Tensor& sizes);

void xpu_memcpy_sync(
    int64_t dst_ptr,
    int64_t src_ptr,
    int64_t n_bytes,
    int64_t kind,
    int64_t device = -1);

void merge_attn_states(
    opdispatch::Tensor& output,
    std::optional<opdispatch::Tensor> output_lse,
    const opdispatch::Tensor& prefix_output,
    const opdispatch::Tensor& prefix_lse,
    const opdispatch::Tensor& suffix_output,
    const opdispatch::Tensor& suffix_lse);
