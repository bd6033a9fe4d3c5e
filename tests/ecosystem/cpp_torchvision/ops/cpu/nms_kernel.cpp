// Port of pytorch/vision, torchvision/csrc/ops/cpu/nms_kernel.cpp: the
// argument checks and the registration as upstream with the name map; the
// greedy suppression loop written against the opdispatch tensor API in place
// of ATen (select/sort/narrow).
#include <algorithm>
#include <numeric>
#include <vector>

#include <opdispatch/library.h>

namespace vision {
namespace ops {

namespace {

template <typename scalar_t>
opdispatch::Tensor nms_kernel_impl(
    const opdispatch::Tensor& dets,
    const opdispatch::Tensor& scores,
    double iou_threshold) {
  OPDISPATCH_CHECK(dets.device().is_cpu(), "dets must be a CPU tensor");
  OPDISPATCH_CHECK(scores.device().is_cpu(), "scores must be a CPU tensor");
  OPDISPATCH_CHECK(
      dets.scalar_type() == scores.scalar_type(),
      "dets should have the same type as scores");
  const int64_t ndets = dets.size(0);
  const scalar_t* d = dets.data_ptr<scalar_t>();
  const scalar_t* s = scores.data_ptr<scalar_t>();
  auto box = [&](int64_t i, int64_t k) { return d[i * dets.stride(0) + k * dets.stride(1)]; };
  auto area = [&](int64_t i) { return (box(i, 2) - box(i, 0)) * (box(i, 3) - box(i, 1)); };

  std::vector<int64_t> order(ndets);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return s[a * scores.stride(0)] > s[b * scores.stride(0)];
  });
  std::vector<bool> suppressed(ndets, false);
  std::vector<int64_t> keep;
  for (int64_t oi = 0; oi < ndets; ++oi) {
    int64_t i = order[oi];
    if (suppressed[i]) {
      continue;
    }
    keep.push_back(i);
    for (int64_t oj = oi + 1; oj < ndets; ++oj) {
      int64_t j = order[oj];
      scalar_t w = std::max(scalar_t(0), std::min(box(i, 2), box(j, 2)) - std::max(box(i, 0), box(j, 0)));
      scalar_t h = std::max(scalar_t(0), std::min(box(i, 3), box(j, 3)) - std::max(box(i, 1), box(j, 1)));
      scalar_t inter = w * h;
      if (inter / (area(i) + area(j) - inter) > iou_threshold) {
        suppressed[j] = true;
      }
    }
  }
  opdispatch::Tensor keep_t = opdispatch::empty({static_cast<int64_t>(keep.size())}, opdispatch::ScalarType::Long);
  std::copy(keep.begin(), keep.end(), keep_t.data_ptr<int64_t>());
  return keep_t;
}

opdispatch::Tensor nms_kernel(
    const opdispatch::Tensor& dets,
    const opdispatch::Tensor& scores,
    double iou_threshold) {
  OPDISPATCH_CHECK(
      dets.dim() == 2, "boxes should be a 2d tensor, got ", dets.dim(), "D");
  OPDISPATCH_CHECK(
      dets.size(1) == 4,
      "boxes should have 4 elements in dimension 1, got ",
      dets.size(1));
  OPDISPATCH_CHECK(
      scores.dim() == 1,
      "scores should be a 1d tensor, got ",
      scores.dim(),
      "D");
  OPDISPATCH_CHECK(
      dets.size(0) == scores.size(0),
      "boxes and scores should have same number of elements in ",
      "dimension 0, got ",
      dets.size(0),
      " and ",
      scores.size(0));

  if (dets.scalar_type() == opdispatch::ScalarType::Double) {
    return nms_kernel_impl<double>(dets, scores, iou_threshold);
  }
  OPDISPATCH_CHECK(dets.scalar_type() == opdispatch::ScalarType::Float, "nms_kernel: expected a floating dtype");
  return nms_kernel_impl<float>(dets, scores, iou_threshold);
}

} // namespace

OPDISPATCH_LIBRARY_IMPL(torchvision, CPU, m) {
  m.impl(OPDISPATCH_SELECTIVE_NAME("torchvision::nms"), OPDISPATCH_FN(nms_kernel));
}

} // namespace ops
} // namespace vision
