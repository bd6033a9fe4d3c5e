// Port of pytorch/vision, torchvision/csrc/ops/nms.cpp: the operator's
// definition and its C++ entry point (a typed call through the dispatcher),
// as upstream with the name map.
#include "nms.h"

namespace vision {
namespace ops {

opdispatch::Tensor nms(
    const opdispatch::Tensor& dets,
    const opdispatch::Tensor& scores,
    double iou_threshold) {
  static auto op = opdispatch::Dispatcher::singleton()
                       .findSchemaOrThrow("torchvision::nms", "")
                       .typed<decltype(nms)>();
  return op.call(dets, scores, iou_threshold);
}

OPDISPATCH_LIBRARY_FRAGMENT(torchvision, m) {
  m.def(OPDISPATCH_SELECTIVE_SCHEMA(
      "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"));
}

} // namespace ops
} // namespace vision
