// Port of pytorch/vision, torchvision/csrc/ops/cpu/roi_pool_kernel.cpp: the
// kernels' signatures, checks and registration as upstream with the name map;
// the pooling loops written against the opdispatch tensor API (float32 and
// float64, contiguous inputs) in place of the ATen ones.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <opdispatch/library.h>

namespace vision {
namespace ops {

namespace {

/// The pixel range [start, end) of bin `p` of `pooled` bins over a roi of
/// `roi_size` pixels starting at `roi_start`, clipped to [0, size).
std::pair<int64_t, int64_t> bin(int64_t p, int64_t pooled, int64_t roi_start, int64_t roi_size, int64_t size) {
  double bin_size = static_cast<double>(roi_size) / static_cast<double>(pooled);
  int64_t start = static_cast<int64_t>(std::floor(p * bin_size)) + roi_start;
  int64_t end = static_cast<int64_t>(std::ceil((p + 1) * bin_size)) + roi_start;
  return {std::clamp<int64_t>(start, 0, size), std::clamp<int64_t>(end, 0, size)};
}

template <typename T>
void roi_pool_forward_loop(const opdispatch::Tensor& input, const opdispatch::Tensor& rois, double spatial_scale,
                           const opdispatch::Tensor& output, const opdispatch::Tensor& argmax) {
  const int64_t channels = input.size(1), height = input.size(2), width = input.size(3);
  const int64_t ph_n = output.size(2), pw_n = output.size(3);
  const T* in = input.data_ptr<T>();
  const T* r = rois.data_ptr<T>();
  T* out = output.data_ptr<T>();
  int32_t* arg = argmax.data_ptr<int32_t>();
  for (int64_t n = 0; n < rois.size(0); ++n) {
    const T* roi = r + n * 5;
    int64_t batch = static_cast<int64_t>(roi[0]);
    int64_t x0 = std::lround(roi[1] * spatial_scale), y0 = std::lround(roi[2] * spatial_scale);
    int64_t x1 = std::lround(roi[3] * spatial_scale), y1 = std::lround(roi[4] * spatial_scale);
    int64_t roi_w = std::max<int64_t>(x1 - x0 + 1, 1), roi_h = std::max<int64_t>(y1 - y0 + 1, 1);
    for (int64_t ph = 0; ph < ph_n; ++ph) {
      auto [hs, he] = bin(ph, ph_n, y0, roi_h, height);
      for (int64_t pw = 0; pw < pw_n; ++pw) {
        auto [ws, we] = bin(pw, pw_n, x0, roi_w, width);
        bool empty = he <= hs || we <= ws;
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = in + (batch * channels + c) * height * width;
          T best = empty ? T(0) : -std::numeric_limits<T>::max();
          int32_t best_at = -1;
          for (int64_t h = hs; h < he; ++h) {
            for (int64_t w = ws; w < we; ++w) {
              if (plane[h * width + w] > best) {
                best = plane[h * width + w];
                best_at = static_cast<int32_t>(h * width + w);
              }
            }
          }
          int64_t o = ((n * channels + c) * ph_n + ph) * pw_n + pw;
          out[o] = best;
          arg[o] = best_at;
        }
      }
    }
  }
}

template <typename T>
void roi_pool_backward_loop(const opdispatch::Tensor& grad, const opdispatch::Tensor& rois,
                            const opdispatch::Tensor& argmax, const opdispatch::Tensor& grad_input) {
  const int64_t channels = grad_input.size(1), plane = grad_input.size(2) * grad_input.size(3);
  const T* g = grad.data_ptr<T>();
  const T* r = rois.data_ptr<T>();
  const int32_t* arg = argmax.data_ptr<int32_t>();
  T* gi = grad_input.data_ptr<T>();
  std::fill(gi, gi + grad_input.numel(), T(0));
  for (int64_t n = 0; n < rois.size(0); ++n) {
    int64_t batch = static_cast<int64_t>(r[n * 5]);
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t ph = 0; ph < grad.size(2); ++ph) {
        for (int64_t pw = 0; pw < grad.size(3); ++pw) {
          int64_t o = ((n * channels + c) * grad.size(2) + ph) * grad.size(3) + pw;
          if (arg[o] != -1) {
            gi[(batch * channels + c) * plane + arg[o]] +=
                g[n * grad.stride(0) + c * grad.stride(1) + ph * grad.stride(2) + pw * grad.stride(3)];
          }
        }
      }
    }
  }
}

void checkSameFloatingType(const char* c, const opdispatch::Tensor& a, const opdispatch::Tensor& b) {
  OPDISPATCH_CHECK(a.scalar_type() == b.scalar_type(), c, ": expected the same dtype, got ", a.scalar_type(),
                   " and ", b.scalar_type());
  OPDISPATCH_CHECK(a.scalar_type() == opdispatch::ScalarType::Float ||
                       a.scalar_type() == opdispatch::ScalarType::Double,
                   c, ": expected float32 or float64");
}

std::tuple<opdispatch::Tensor, opdispatch::Tensor> roi_pool_forward_kernel(
    const opdispatch::Tensor& input,
    const opdispatch::Tensor& rois,
    double spatial_scale,
    int64_t pooled_height,
    int64_t pooled_width) {
  OPDISPATCH_CHECK(input.device().is_cpu(), "input must be a CPU tensor");
  OPDISPATCH_CHECK(rois.device().is_cpu(), "rois must be a CPU tensor");
  checkSameFloatingType("roi_pool_forward_kernel", input, rois);
  OPDISPATCH_CHECK(input.is_contiguous() && rois.is_contiguous(), "roi_pool_forward_kernel: contiguous inputs only");

  int64_t num_rois = rois.size(0);
  int64_t channels = input.size(1);

  opdispatch::Tensor output = opdispatch::empty({num_rois, channels, pooled_height, pooled_width}, input.dtype());
  opdispatch::Tensor argmax =
      opdispatch::empty({num_rois, channels, pooled_height, pooled_width}, opdispatch::ScalarType::Int);
  if (input.scalar_type() == opdispatch::ScalarType::Double) {
    roi_pool_forward_loop<double>(input, rois, spatial_scale, output, argmax);
  } else {
    roi_pool_forward_loop<float>(input, rois, spatial_scale, output, argmax);
  }
  return std::make_tuple(output, argmax);
}

opdispatch::Tensor roi_pool_backward_kernel(
    const opdispatch::Tensor& grad,
    const opdispatch::Tensor& rois,
    const opdispatch::Tensor& argmax,
    double spatial_scale,
    int64_t pooled_height,
    int64_t pooled_width,
    int64_t batch_size,
    int64_t channels,
    int64_t height,
    int64_t width) {
  // Check if input tensors are CPU tensors
  OPDISPATCH_CHECK(grad.device().is_cpu(), "grad must be a CPU tensor");
  OPDISPATCH_CHECK(rois.device().is_cpu(), "rois must be a CPU tensor");
  OPDISPATCH_CHECK(argmax.device().is_cpu(), "argmax must be a CPU tensor");
  OPDISPATCH_CHECK(
      rois.size(1) == 5, "Tensor rois should have shape as Tensor[K, 5]");
  checkSameFloatingType("roi_pool_backward_kernel", grad, rois);

  opdispatch::Tensor grad_input = opdispatch::empty({batch_size, channels, height, width}, grad.dtype());
  if (grad.scalar_type() == opdispatch::ScalarType::Double) {
    roi_pool_backward_loop<double>(grad, rois, argmax, grad_input);
  } else {
    roi_pool_backward_loop<float>(grad, rois, argmax, grad_input);
  }
  return grad_input;
}

} // namespace

OPDISPATCH_LIBRARY_IMPL(torchvision, CPU, m) {
  m.impl(
      OPDISPATCH_SELECTIVE_NAME("torchvision::roi_pool"),
      OPDISPATCH_FN(roi_pool_forward_kernel));
  m.impl(
      OPDISPATCH_SELECTIVE_NAME("torchvision::_roi_pool_backward"),
      OPDISPATCH_FN(roi_pool_backward_kernel));
}

} // namespace ops
} // namespace vision
