// Port of pytorch/vision, torchvision/csrc/ops/roi_pool.h, with the name map.
#pragma once

#include <tuple>

#include <opdispatch/library.h>
#include "../macros.h"

namespace vision {
namespace ops {

VISION_API std::tuple<opdispatch::Tensor, opdispatch::Tensor> roi_pool(
    const opdispatch::Tensor& input,
    const opdispatch::Tensor& rois,
    double spatial_scale,
    int64_t pooled_height,
    int64_t pooled_width);

namespace detail {

opdispatch::Tensor _roi_pool_backward(
    const opdispatch::Tensor& grad,
    const opdispatch::Tensor& rois,
    const opdispatch::Tensor& argmax,
    double spatial_scale,
    int64_t pooled_height,
    int64_t pooled_width,
    int64_t batch_size,
    int64_t channels,
    int64_t height,
    int64_t width);

} // namespace detail

} // namespace ops
} // namespace vision
