/*
 * Port of pytorch/FBGEMM, fbgemm_gpu/src/input_combine_ops/input_combine_cpu.cpp
 * (BSD-style license, Meta Platforms, Inc. and affiliates): the kernels'
 * signatures, checks and the registration (a FRAGMENT of the fbgemm namespace
 * with PT2_COMPLIANT_TAG and DISPATCH_TO_CPU) as upstream with the name map;
 * the loops written against the opdispatch tensor API (no padding trimming,
 * no pinned memory) in place of ATen.
 */

#include <algorithm>
#include <cstring>

#include "fbgemm_gpu/input_combine.h"
#include "fbgemm_gpu/utils/dispatch_macros.h"
#include "fbgemm_gpu/utils/ops_utils.h"

using Tensor = opdispatch::Tensor;

namespace fbgemm_gpu {

namespace {
/// Element `i` of a contiguous int32 or int64 tensor.
int64_t index_at(const Tensor& t, int64_t i) {
  return t.scalar_type() == opdispatch::ScalarType::Int ? t.data_ptr<int32_t>()[i] : t.data_ptr<int64_t>()[i];
}

void check_index_tensor(const Tensor& t) {
  OPDISPATCH_CHECK(
      t.dtype() == opdispatch::ScalarType::Int ||
      t.dtype() == opdispatch::ScalarType::Long);
  OPDISPATCH_CHECK(t.dim() == 1);
  OPDISPATCH_CHECK(t.is_contiguous());
}
} // namespace

static void _cat_int_tensors_out(
    Tensor& combined_tensors,
    const std::vector<Tensor>& tensor_list,
    int64_t total_num) {
  combined_tensors = opdispatch::empty({total_num}, opdispatch::ScalarType::Int);
  auto* combined_tensors_data_ptr = combined_tensors.data_ptr<int32_t>();
  size_t idx = 0;
  for (const auto& tensor : tensor_list) {
    for (int64_t j = 0; j < tensor.numel(); j++) {
      combined_tensors_data_ptr[idx++] = static_cast<int32_t>(index_at(tensor, j));
    }
  }
}

static Tensor _cat_int_tensors(
    const std::vector<Tensor>& tensor_list,
    int64_t total_num) {
  Tensor combined_tensors;
  _cat_int_tensors_out(combined_tensors, tensor_list, total_num);
  return combined_tensors;
}

static Tensor _cat_int_tensors_with_padding(
    const std::vector<Tensor>& tensor_list,
    int64_t total_num,
    int64_t batch_size) {
  auto combined_tensors = opdispatch::empty({total_num}, opdispatch::ScalarType::Int);
  auto* combined_tensors_data_ptr = combined_tensors.data_ptr<int32_t>();
  std::fill(combined_tensors_data_ptr, combined_tensors_data_ptr + total_num, 0);
  for (size_t i = 0; i < tensor_list.size(); i++) {
    size_t idx = i * batch_size;
    for (int64_t j = 0; j < tensor_list[i].numel(); j++) {
      combined_tensors_data_ptr[idx++] = static_cast<int32_t>(index_at(tensor_list[i], j));
    }
  }
  return combined_tensors;
}

static void _cat_per_sample_weights_list_out(
    Tensor& out,
    const std::vector<Tensor>& per_sample_weights,
    const std::vector<Tensor>& indices_list,
    int64_t total_num) {
  out = opdispatch::empty({total_num}, opdispatch::ScalarType::Float);
  auto* out_weights_ptr = out.data_ptr<float>();
  std::fill(out_weights_ptr, out_weights_ptr + total_num, 1.0f);

  for (size_t i = 0; i < per_sample_weights.size(); i++) {
    auto element_size = per_sample_weights[i].numel();
    if (element_size != 0) {
      memcpy(
          out_weights_ptr,
          per_sample_weights[i].data_ptr<float>(),
          element_size * sizeof(float));
    }
    out_weights_ptr += indices_list[i].numel();
  }
}

static Tensor _cat_per_sample_weights_list(
    const std::vector<Tensor>& per_sample_weights,
    const std::vector<Tensor>& indices_list,
    int64_t total_num) {
  Tensor combined_weights;
  _cat_per_sample_weights_list_out(combined_weights, per_sample_weights, indices_list, total_num);
  return combined_weights;
}

/// Whether some table has weights; checks their shapes against the indices.
static bool check_weights(const std::vector<Tensor>& per_sample_weights, const std::vector<Tensor>& indices_list) {
  bool need_weights = false;
  for (size_t i = 0; i < indices_list.size(); i++) {
    if (per_sample_weights[i].numel() > 0) {
      OPDISPATCH_CHECK(per_sample_weights[i].dim() == 1);
      OPDISPATCH_CHECK(per_sample_weights[i].numel() == indices_list[i].numel());
      OPDISPATCH_CHECK(per_sample_weights[i].is_contiguous());
      OPDISPATCH_CHECK(per_sample_weights[i].dtype() == opdispatch::ScalarType::Float);
      need_weights = true;
    }
  }
  return need_weights;
}

/// The combined offsets: 0, then each table's offsets (without its last one
/// when include_last_offsets says it has one) shifted by the indices before
/// it, and the running total after each table; with `batch_size`, each table
/// is padded with its total to batch_size entries.
static Tensor combine_offsets(
    const std::vector<Tensor>& indices_list,
    const std::vector<Tensor>& offsets_list,
    const Tensor& include_last_offsets,
    int64_t batch_size) {
  OPDISPATCH_CHECK(include_last_offsets.dtype() == opdispatch::ScalarType::Bool);
  const bool* include_last = include_last_offsets.data_ptr<bool>();
  std::vector<int32_t> combined{0};
  int32_t offset = 0;
  for (size_t i = 0; i < offsets_list.size(); i++) {
    int64_t size = offsets_list[i].numel() - (include_last[i] ? 1 : 0);
    for (int64_t j = 1; j < size; j++) {
      combined.push_back(offset + static_cast<int32_t>(index_at(offsets_list[i], j)));
    }
    offset += static_cast<int32_t>(indices_list[i].numel());
    const int64_t pads = batch_size > 0 ? batch_size - size + 1 : 1;
    OPDISPATCH_CHECK(pads >= 1, "table ", i, " has more offsets than batch_size (", batch_size, ")");
    combined.insert(combined.end(), pads, offset);
  }
  Tensor out = opdispatch::empty({static_cast<int64_t>(combined.size())}, opdispatch::ScalarType::Int);
  std::copy(combined.begin(), combined.end(), out.data_ptr<int32_t>());
  return out;
}

std::tuple<Tensor, Tensor, Tensor> tbe_input_combine_cpu(
    const std::vector<Tensor>& indices_list,
    const std::vector<Tensor>& offsets_list,
    const std::vector<Tensor>& per_sample_weights,
    const Tensor& include_last_offsets) {
  OPDISPATCH_CHECK(indices_list.size() > 0);
  OPDISPATCH_CHECK(offsets_list.size() == indices_list.size());
  OPDISPATCH_CHECK(per_sample_weights.size() == indices_list.size());
  OPDISPATCH_CHECK(
      static_cast<uint64_t>(include_last_offsets.numel()) ==
      indices_list.size());
  int64_t total_indices = 0;
  for (size_t i = 0; i < indices_list.size(); i++) {
    check_index_tensor(indices_list[i]);
    check_index_tensor(offsets_list[i]);
    total_indices += indices_list[i].numel();
  }
  bool need_weights = check_weights(per_sample_weights, indices_list);

  auto combined_indices = _cat_int_tensors(indices_list, total_indices);
  auto combined_offsets = combine_offsets(indices_list, offsets_list, include_last_offsets, 0);
  if (need_weights) {
    return {
        combined_indices,
        combined_offsets,
        _cat_per_sample_weights_list(per_sample_weights, indices_list, total_indices)};
  }
  return {combined_indices, combined_offsets, opdispatch::empty({0})};
}

void tbe_input_combine_with_length_cpu_out(
    Tensor& combined_indices,
    Tensor& combined_lengths,
    Tensor& combined_per_sample_weights,
    const std::vector<Tensor>& indices_list,
    const std::vector<Tensor>& lengths_list,
    const std::vector<Tensor>& per_sample_weights) {
  OPDISPATCH_CHECK(indices_list.size() > 0);
  OPDISPATCH_CHECK(lengths_list.size() == indices_list.size());
  OPDISPATCH_CHECK(per_sample_weights.size() == indices_list.size());
  int64_t total_indices = 0;
  int64_t total_lengths = 0;
  for (size_t i = 0; i < indices_list.size(); i++) {
    check_index_tensor(indices_list[i]);
    check_index_tensor(lengths_list[i]);
    total_indices += indices_list[i].numel();
    total_lengths += lengths_list[i].numel();
  }
  bool need_weights = check_weights(per_sample_weights, indices_list);

  _cat_int_tensors_out(combined_indices, indices_list, total_indices);
  _cat_int_tensors_out(combined_lengths, lengths_list, total_lengths);
  if (need_weights) {
    _cat_per_sample_weights_list_out(
        combined_per_sample_weights,
        per_sample_weights,
        indices_list,
        total_indices);
    return;
  }
  combined_per_sample_weights = opdispatch::empty({0});
}

static std::tuple<Tensor, Tensor, Tensor> tbe_input_combine_with_length_cpu(
    const std::vector<Tensor>& indices_list,
    const std::vector<Tensor>& lengths_list,
    const std::vector<Tensor>& per_sample_weights) {
  Tensor combined_indices, combined_lengths, combined_per_sample_weights;
  tbe_input_combine_with_length_cpu_out(
      combined_indices,
      combined_lengths,
      combined_per_sample_weights,
      indices_list,
      lengths_list,
      per_sample_weights);
  return {combined_indices, combined_lengths, combined_per_sample_weights};
}

// Similar to tbe_input_combine_cpu, but padding all the offsets
// to the size specified by batch_size.
std::tuple<Tensor, Tensor, Tensor> padding_fused_tbe_input_combine_cpu(
    const std::vector<Tensor>& indices_list,
    const std::vector<Tensor>& offsets_list,
    const std::vector<Tensor>& per_sample_weights,
    const Tensor& include_last_offsets,
    int64_t batch_size) {
  OPDISPATCH_CHECK(indices_list.size() > 0);
  OPDISPATCH_CHECK(offsets_list.size() == indices_list.size());
  OPDISPATCH_CHECK(per_sample_weights.size() == indices_list.size());
  OPDISPATCH_CHECK(batch_size > 0, "padding_fused_tbe_input_combine: batch_size must be positive");
  int64_t total_indices = 0;
  for (size_t i = 0; i < indices_list.size(); i++) {
    check_index_tensor(indices_list[i]);
    check_index_tensor(offsets_list[i]);
    total_indices += indices_list[i].numel();
  }
  bool need_weights = check_weights(per_sample_weights, indices_list);
  auto combined_indices = _cat_int_tensors(indices_list, total_indices);
  auto combined_offsets = combine_offsets(indices_list, offsets_list, include_last_offsets, batch_size);
  auto combined_weights = need_weights
      ? _cat_per_sample_weights_list(per_sample_weights, indices_list, total_indices)
      : opdispatch::empty({0});
  return {combined_indices, combined_offsets, combined_weights};
}

static std::tuple<Tensor, Tensor, Tensor>
padding_fused_tbe_input_combine_with_length_cpu(
    const std::vector<Tensor>& indices_list,
    const std::vector<Tensor>& lengths_list,
    const std::vector<Tensor>& per_sample_weights,
    int64_t batch_size) {
  OPDISPATCH_CHECK(indices_list.size() > 0);
  OPDISPATCH_CHECK(lengths_list.size() == indices_list.size());
  OPDISPATCH_CHECK(per_sample_weights.size() == indices_list.size());
  int64_t total_indices = 0;
  int64_t total_lengths = batch_size * indices_list.size();
  for (size_t i = 0; i < indices_list.size(); i++) {
    check_index_tensor(indices_list[i]);
    check_index_tensor(lengths_list[i]);
    OPDISPATCH_CHECK(lengths_list[i].numel() <= batch_size, "a table has more lengths than batch_size");
    total_indices += indices_list[i].numel();
  }
  bool need_weights = check_weights(per_sample_weights, indices_list);

  auto combined_indices = _cat_int_tensors(indices_list, total_indices);
  auto combined_lengths = _cat_int_tensors_with_padding(lengths_list, total_lengths, batch_size);
  auto combined_per_sample_weights = need_weights
      ? _cat_per_sample_weights_list(per_sample_weights, indices_list, total_indices)
      : opdispatch::empty({0});

  return {combined_indices, combined_lengths, combined_per_sample_weights};
}

} // namespace fbgemm_gpu

OPDISPATCH_LIBRARY_FRAGMENT(fbgemm, m) {
#ifdef HAS_IMPL_ABSTRACT_PYSTUB
  m.impl_abstract_pystub(
      "fbgemm_gpu.sparse_ops",
      "//deeplearning/fbgemm/fbgemm_gpu:sparse_ops_py");
#endif
  m.def(
      "tbe_input_combine(Tensor[] indices_list, Tensor[] offsets_list, Tensor[] per_sample_weights, Tensor include_last_offsets) -> (Tensor, Tensor, Tensor)",
      {PT2_COMPLIANT_TAG});
  m.def(
      "tbe_input_combine_with_length(Tensor[] indices_list, Tensor[] lengths_list, Tensor[] per_sample_weights) -> (Tensor, Tensor, Tensor)",
      {PT2_COMPLIANT_TAG});
  m.def(
      "padding_fused_tbe_input_combine(Tensor[] indices_list, Tensor[] offsets_list, Tensor[] per_sample_weights, Tensor include_last_offsets, int batch_size) -> (Tensor, Tensor, Tensor)");
  m.def(
      "padding_fused_tbe_input_combine_with_length(Tensor[] indices_list, Tensor[] lengths_list, Tensor[] per_sample_weights, int batch_size) -> (Tensor, Tensor, Tensor)");
  DISPATCH_TO_CPU("tbe_input_combine", fbgemm_gpu::tbe_input_combine_cpu);
  DISPATCH_TO_CPU(
      "tbe_input_combine_with_length",
      fbgemm_gpu::tbe_input_combine_with_length_cpu);
  DISPATCH_TO_CPU(
      "padding_fused_tbe_input_combine",
      fbgemm_gpu::padding_fused_tbe_input_combine_cpu);
  DISPATCH_TO_CPU(
      "padding_fused_tbe_input_combine_with_length",
      fbgemm_gpu::padding_fused_tbe_input_combine_with_length_cpu);
}
