// Port of pytorch/extension-cpp, extension_cpp/csrc/muladd.cpp (the official
// custom C++ operator tutorial): the registration code as upstream with the
// name map (torch/at/c10 -> opdispatch, TORCH_ -> OPDISPATCH_); the kernel
// bodies are written against the opdispatch tensor API in place of ATen
// (at::Tensor::contiguous / torch::empty / options()).
#include <opdispatch/library.h>

#include <vector>

namespace extension_cpp {

namespace {
// The loop the tutorial writes: result[i] = f(a[i], b[i]) over contiguous float32 tensors.
template <class F>
void binaryLoop(const opdispatch::Tensor& a, const opdispatch::Tensor& b, const opdispatch::Tensor& result, F f) {
  OPDISPATCH_CHECK(a.is_contiguous() && b.is_contiguous(), "extension_cpp: the inputs must be contiguous");
  const float* a_ptr = a.data_ptr<float>();
  const float* b_ptr = b.data_ptr<float>();
  float* result_ptr = result.data_ptr<float>();
  for (int64_t i = 0; i < result.numel(); i++) {
    result_ptr[i] = f(a_ptr[i], b_ptr[i]);
  }
}
} // namespace

opdispatch::Tensor mymuladd_cpu(const opdispatch::Tensor& a, const opdispatch::Tensor& b, double c) {
  OPDISPATCH_CHECK(a.sizes().equals(b.sizes()));
  OPDISPATCH_CHECK(a.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_CHECK(b.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_INTERNAL_ASSERT(a.device().type() == opdispatch::DeviceType::CPU);
  OPDISPATCH_INTERNAL_ASSERT(b.device().type() == opdispatch::DeviceType::CPU);
  opdispatch::Tensor result = opdispatch::empty(a.sizes(), a.dtype(), a.device());
  binaryLoop(a, b, result, [c](float x, float y) { return x * y + static_cast<float>(c); });
  return result;
}

opdispatch::Tensor mymul_cpu(const opdispatch::Tensor& a, const opdispatch::Tensor& b) {
  OPDISPATCH_CHECK(a.sizes().equals(b.sizes()));
  OPDISPATCH_CHECK(a.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_CHECK(b.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_INTERNAL_ASSERT(a.device().type() == opdispatch::DeviceType::CPU);
  OPDISPATCH_INTERNAL_ASSERT(b.device().type() == opdispatch::DeviceType::CPU);
  opdispatch::Tensor result = opdispatch::empty(a.sizes(), a.dtype(), a.device());
  binaryLoop(a, b, result, [](float x, float y) { return x * y; });
  return result;
}

// An example of an operator that mutates one of its inputs.
void myadd_out_cpu(const opdispatch::Tensor& a, const opdispatch::Tensor& b, opdispatch::Tensor& out) {
  OPDISPATCH_CHECK(a.sizes().equals(b.sizes()));
  OPDISPATCH_CHECK(b.sizes().equals(out.sizes()));
  OPDISPATCH_CHECK(a.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_CHECK(b.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_CHECK(out.dtype() == opdispatch::ScalarType::Float);
  OPDISPATCH_CHECK(out.is_contiguous());
  OPDISPATCH_INTERNAL_ASSERT(a.device().type() == opdispatch::DeviceType::CPU);
  OPDISPATCH_INTERNAL_ASSERT(b.device().type() == opdispatch::DeviceType::CPU);
  OPDISPATCH_INTERNAL_ASSERT(out.device().type() == opdispatch::DeviceType::CPU);
  binaryLoop(a, b, out, [](float x, float y) { return x + y; });
}

// Defines the operators
OPDISPATCH_LIBRARY(extension_cpp, m) {
  m.def("mymuladd(Tensor a, Tensor b, float c) -> Tensor");
  m.def("mymul(Tensor a, Tensor b) -> Tensor");
  m.def("myadd_out(Tensor a, Tensor b, Tensor(a!) out) -> ()");
}

// Registers CPU implementations for mymuladd, mymul, myadd_out
OPDISPATCH_LIBRARY_IMPL(extension_cpp, CPU, m) {
  m.impl("mymuladd", &mymuladd_cpu);
  m.impl("mymul", &mymul_cpu);
  m.impl("myadd_out", &myadd_out_cpu);
}

}
