// Port of pytorch/FBGEMM, fbgemm_gpu/include/fbgemm_gpu/input_combine.h (the
// declarations the CPU file defines), with the name map.
#pragma once

#include <tuple>
#include <vector>

#include <opdispatch/library.h>

namespace fbgemm_gpu {

std::tuple<opdispatch::Tensor, opdispatch::Tensor, opdispatch::Tensor> tbe_input_combine_cpu(
    const std::vector<opdispatch::Tensor>& indices_list,
    const std::vector<opdispatch::Tensor>& offsets_list,
    const std::vector<opdispatch::Tensor>& per_sample_weights,
    const opdispatch::Tensor& include_last_offsets);

void tbe_input_combine_with_length_cpu_out(
    opdispatch::Tensor& combined_indices,
    opdispatch::Tensor& combined_lengths,
    opdispatch::Tensor& combined_per_sample_weights,
    const std::vector<opdispatch::Tensor>& indices_list,
    const std::vector<opdispatch::Tensor>& lengths_list,
    const std::vector<opdispatch::Tensor>& per_sample_weights);

} // namespace fbgemm_gpu
