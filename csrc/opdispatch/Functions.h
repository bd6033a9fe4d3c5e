// ATen's factory functions for C++ kernels (empty, zeros, ones, full, the
// *_like forms, arange, randperm, cat, and the function forms of some methods), each a call of the built-in `od` factory through the
// dispatcher, so BackendSelect sends it to the device's kernel and modes see
// it. PyTorch: ATen/Functions.h. The core's own allocation is
// opdispatch::empty(sizes, dtype, device) in core/Tensor.h.
#pragma once

#include <optional>

#include <opdispatch/core/Scalar.h>
#include <opdispatch/core/Tensor.h>
#include <opdispatch/core/TensorOptions.h>

namespace opdispatch {

/// Uninitialised memory (od::empty.memory_format). Throws Error if the `od`
/// operators are not registered (before `import opdispatch`).
Tensor empty(IntArrayRef size, TensorOptions options, std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor ones(IntArrayRef size, TensorOptions options = {});
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {});
/// Like `self` (its dtype and device unless `options` sets them).
Tensor empty_like(const Tensor& self, TensorOptions options = {});
Tensor zeros_like(const Tensor& self, TensorOptions options = {});
Tensor ones_like(const Tensor& self, TensorOptions options = {});
/// A random permutation of 0 .. n-1 in `options`' dtype (od::randperm, drawing
/// from the Python package's generator). The default is kLong, as ATen's
/// generated `randperm(int64_t n, TensorOptions options = at::kLong)`.
Tensor randperm(int64_t n, TensorOptions options = kLong);
/// Uniform random numbers in [0, 1) of `options`' dtype (float32 unless set),
/// drawn from the Python package's generator (od::rand). PyTorch: at::rand(size, options).
Tensor rand(IntArrayRef size, TensorOptions options = {});
/// The tensors joined along `dim`: all of one rank, equal sizes but along `dim`
/// (od::cat, which also promotes their dtypes).
Tensor cat(TensorList tensors, int64_t dim = 0);

// ATen's function forms of the Tensor methods (at::max(x, 0) is x.max(0)).
inline std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false) {
  return self.max(dim, keepdim);
}
inline std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false) {
  return self.min(dim, keepdim);
}
inline Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false) {
  return self.argmax(dim, keepdim);
}
/// The elementwise minimum / maximum of two tensors (self.min(other)). PyTorch: at::min(self, other), at::max.
inline Tensor min(const Tensor& self, const Tensor& other) { return self.min(other); }
inline Tensor max(const Tensor& self, const Tensor& other) { return self.max(other); }
/// self.pow(exponent), self.ceil(). PyTorch: at::pow, at::ceil.
inline Tensor pow(const Tensor& self, const Scalar& exponent) { return self.pow(exponent); }
inline Tensor pow(const Tensor& self, const Tensor& exponent) { return self.pow(exponent); }
inline Tensor ceil(const Tensor& self) { return self.ceil(); }
inline Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return self.div(other, rounding_mode);
}
inline Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return self.cumsum(dim, dtype);
}
inline Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt) {
  return self.cumprod(dim, dtype);
}

/// 0, 1, ..., end - 1 (int64 for an integral `end`, float32 otherwise, unless `options` sets the dtype).
Tensor arange(const Scalar& end, TensorOptions options = {});

} // namespace opdispatch
