// ATen's factory functions for C++ kernels (empty, zeros, ones, full, the
// *_like forms, arange), each a call of the built-in `od` factory through the
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
/// 0, 1, ..., end - 1 (int64 for an integral `end`, float32 otherwise, unless `options` sets the dtype).
Tensor arange(const Scalar& end, TensorOptions options = {});

} // namespace opdispatch
