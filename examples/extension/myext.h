// Declarations shared by the example extension's source files: the operator
// namespace (overridable with -DOPDISPATCH_EXAMPLE_NS=...), the argument
// checks that the CPU and Meta kernels share, and a strided element loop.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <opdispatch/library.h>

// The namespace the operators are registered in. A process can hold one DEF
// library per namespace, so a second build of this example loaded into the
// same process needs another one (tests/test_cpp_extension.py does that).
#ifndef OPDISPATCH_EXAMPLE_NS
#define OPDISPATCH_EXAMPLE_NS myext
#endif
#define MYEXT_STRINGIFY_(x) #x
#define MYEXT_STRINGIFY(x) MYEXT_STRINGIFY_(x)
/// "myext", as a string literal.
#define MYEXT_NS_STR MYEXT_STRINGIFY(OPDISPATCH_EXAMPLE_NS)

namespace myext {

using opdispatch::IntArrayRef;
using opdispatch::ScalarType;
using opdispatch::Tensor;

/// "myext::<op>": the qualified operator name used in error messages and lookups.
std::string qualified(const char* op);

/// "[2, 3]".
std::string shapeString(IntArrayRef sizes);

/// Throws TypeError naming `op` unless `x` is float32 or float64.
void checkFloating(const char* op, const Tensor& x);

/// Checks fma's operands (same dtype, float32/float64, same device, shapes
/// equal or single-element) and returns the result's shape. Throws TypeError
/// or ValueError naming the operator and the shapes.
std::vector<int64_t> fmaResultShape(const Tensor& a, const Tensor& b, const Tensor& c);

/// Checks rowsum's argument (2-D, float32/float64) and returns the result's shape (N,).
std::vector<int64_t> rowsumResultShape(const Tensor& x);

/// Calls fn(offsets) once per element of a tensor of shape `sizes`, in C
/// order, where offsets[k] is the element's offset (in elements) in operand k,
/// whose strides are strides[k] (0 for a broadcast dimension).
template <size_t N, class F>
void forEachElement(IntArrayRef sizes, const std::array<std::vector<int64_t>, N>& strides, F&& fn) {
  const size_t ndim = sizes.size();
  int64_t numel = 1;
  for (int64_t s : sizes) {
    numel *= s;
  }
  std::vector<int64_t> index(ndim, 0);
  std::array<int64_t, N> offsets{};
  for (int64_t i = 0; i < numel; ++i) {
    fn(offsets);
    for (size_t d = ndim; d-- > 0;) {  // odometer increment, innermost dimension first
      if (++index[d] < sizes[d]) {
        for (size_t k = 0; k < N; ++k) {
          offsets[k] += strides[k][d];
        }
        break;
      }
      for (size_t k = 0; k < N; ++k) {
        offsets[k] -= strides[k][d] * (sizes[d] - 1);
      }
      index[d] = 0;
    }
  }
}

} // namespace myext
