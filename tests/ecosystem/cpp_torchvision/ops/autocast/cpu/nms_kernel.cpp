// Port of pytorch/vision, torchvision/csrc/ops/autocast/cpu/nms_kernel.cpp:
// an AutocastCPU kernel that casts its inputs to float32 and redispatches
// through the typed C++ entry point `nms`, as upstream with the name map. Two
// spellings differ: the guard is opdispatch::ExcludeDispatchKeyGuard
// (PyTorch: c10::impl::), and at::autocast::cached_cast is replaced by a
// plain cast.
#include "../../nms.h"

namespace vision {
namespace ops {

namespace {

// float64 -> float32 (what at::autocast::cached_cast(at::kFloat, t) does to a CPU double tensor).
opdispatch::Tensor cast_to_float(const opdispatch::Tensor& t) {
  if (t.scalar_type() != opdispatch::ScalarType::Double) {
    return t;
  }
  opdispatch::Tensor out = opdispatch::empty(t.sizes(), opdispatch::ScalarType::Float, t.device());
  OPDISPATCH_CHECK(t.is_contiguous(), "nms_autocast: contiguous inputs only");
  const double* src = t.data_ptr<double>();
  float* dst = out.data_ptr<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    dst[i] = static_cast<float>(src[i]);
  }
  return out;
}

opdispatch::Tensor nms_autocast(
    const opdispatch::Tensor& dets,
    const opdispatch::Tensor& scores,
    double iou_threshold) {
  opdispatch::ExcludeDispatchKeyGuard no_autocast(opdispatch::DispatchKey::AutocastCPU);
  return nms(
      cast_to_float(dets),
      cast_to_float(scores),
      iou_threshold);
}

} // namespace

OPDISPATCH_LIBRARY_IMPL(torchvision, AutocastCPU, m) {
  m.impl(OPDISPATCH_SELECTIVE_NAME("torchvision::nms"), OPDISPATCH_FN(nms_autocast));
}

} // namespace ops
} // namespace vision
