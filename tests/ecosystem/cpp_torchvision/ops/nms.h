// Port of pytorch/vision, torchvision/csrc/ops/nms.h, with the name map.
#pragma once

#include <opdispatch/library.h>
#include "../macros.h"

namespace vision {
namespace ops {

VISION_API opdispatch::Tensor nms(
    const opdispatch::Tensor& dets,
    const opdispatch::Tensor& scores,
    double iou_threshold);

} // namespace ops
} // namespace vision
