// CPU kernels: the arithmetic of fma, relu, relu_ and rowsum on float32 and
// float64, for any strides (non-contiguous inputs are read through their
// strides; results are contiguous). The loops run without the GIL.
#include "myext.h"

namespace myext {
namespace {

/// Strides for reading operand `t` as if it had shape `result`: its own
/// strides, or zeros when it is a single element broadcast to the result.
std::vector<int64_t> readStrides(const Tensor& t, IntArrayRef result) {
  if (t.numel() == 1 && !t.sizes().equals(result)) {
    return std::vector<int64_t>(result.size(), 0);
  }
  return t.strides().vec();
}

template <class T>
void fmaLoop(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& out) {
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  const T* pc = c.data_ptr<T>();
  T* po = out.data_ptr<T>();
  forEachElement<4>(
      out.sizes(),
      {readStrides(a, out.sizes()), readStrides(b, out.sizes()), readStrides(c, out.sizes()), out.strides().vec()},
      [&](const std::array<int64_t, 4>& off) { po[off[3]] = pa[off[0]] * pb[off[1]] + pc[off[2]]; });
}

Tensor fmaCpu(const Tensor& a, const Tensor& b, const Tensor& c) {
  Tensor out = opdispatch::empty(fmaResultShape(a, b, c), a.dtype(), a.device());
  opdispatch::ReleaseGIL nogil;  // the loop touches no Python object
  if (a.dtype() == ScalarType::Float) {
    fmaLoop<float>(a, b, c, out);
  } else {
    fmaLoop<double>(a, b, c, out);
  }
  return out;
}

/// out[i] = max(in[i], 0), elementwise over the shape of `in`; `out` may be `in`.
template <class T>
void reluLoop(const Tensor& in, const Tensor& out) {
  const T* pi = in.data_ptr<T>();
  T* po = out.data_ptr<T>();
  forEachElement<2>(in.sizes(), {in.strides().vec(), out.strides().vec()}, [&](const std::array<int64_t, 2>& off) {
    T v = pi[off[0]];
    po[off[1]] = v > T(0) ? v : T(0);
  });
}

void relu(const Tensor& in, const Tensor& out) {
  opdispatch::ReleaseGIL nogil;
  if (in.dtype() == ScalarType::Float) {
    reluLoop<float>(in, out);
  } else {
    reluLoop<double>(in, out);
  }
}

Tensor reluCpu(const Tensor& x) {
  checkFloating("relu", x);
  Tensor out = opdispatch::empty(x.sizes(), x.dtype(), x.device());
  relu(x, out);
  return out;
}

// The version counter is bumped by the ADInplaceOrView kernel (inplace_or_view.cpp).
Tensor reluInplaceCpu(const Tensor& x) {
  checkFloating("relu_", x);
  relu(x, x);
  return x;
}

template <class T>
void rowsumLoop(const Tensor& x, const Tensor& out) {
  const T* px = x.data_ptr<T>();
  T* po = out.data_ptr<T>();
  const int64_t rows = x.size(0), cols = x.size(1), rs = x.stride(0), cs = x.stride(1);
  for (int64_t i = 0; i < rows; ++i) {
    double acc = 0;  // accumulate in double: closer to NumPy's pairwise sum for float32
    for (int64_t j = 0; j < cols; ++j) {
      acc += px[i * rs + j * cs];
    }
    po[i] = static_cast<T>(acc);
  }
}

Tensor rowsumCpu(const Tensor& x) {
  Tensor out = opdispatch::empty(rowsumResultShape(x), x.dtype(), x.device());
  opdispatch::ReleaseGIL nogil;
  if (x.dtype() == ScalarType::Float) {
    rowsumLoop<float>(x, out);
  } else {
    rowsumLoop<double>(x, out);
  }
  return out;
}

} // namespace
} // namespace myext

OPDISPATCH_LIBRARY_IMPL(OPDISPATCH_EXAMPLE_NS, CPU, m) {
  m.impl("fma", OPDISPATCH_FN(myext::fmaCpu));
  m.impl("relu", OPDISPATCH_FN(myext::reluCpu));
  m.impl("relu_", OPDISPATCH_FN(myext::reluInplaceCpu));
  m.impl("rowsum", OPDISPATCH_FN(myext::rowsumCpu));
}
