// Overflow-checked integer arithmetic for tensor sizes, strides, offsets and
// byte counts: each helper reports overflow instead of wrapping (signed
// overflow is undefined behaviour). See Note [Checked size arithmetic].
#pragma once

#include <cstddef>
#include <cstdint>

#include <opdispatch/core/ArrayRef.h>

namespace opdispatch {

// Note [Checked size arithmetic]
// Sizes, strides and offsets come from users (Python ints, NumPy arrays,
// DLPack, C++ kernels), so every product and sum of them is computed with
// the compiler's overflow-reporting builtins below, in one place. A
// TensorImpl refuses at construction any geometry whose arithmetic does not
// fit int64 (TensorImpl::TensorImpl, computeStorageNbytes); once it exists,
// these invariants hold for its whole life:
//   1. the product of its nonzero sizes fits int64, so numel and every
//      contiguous stride do (PyTorch also refuses (0, 2**62, 2**62): "Stride
//      calculation overflowed");
//   2. storage_offset * itemsize fits int64, so data_ptr() is computable;
//   3. if it has elements, the bytes they reach,
//      (storage_offset + 1 + sum((size_i - 1) * stride_i)) * itemsize,
//      fit int64 and are at most its storage's size (meta tensors have no
//      storage, but the sum must still fit).
// Only a dimension that addresses one element or none (size <= 1, or a
// tensor without elements) may have a stride whose byte value does not fit:
// code converting strides to bytes (Tensor.numpy()) checks that case.

/// *out = a * b; true if the exact result does not fit (then *out is unspecified).
inline bool mulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
/// *out = a + b; true if the exact result does not fit.
inline bool addOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
/// Unsigned forms, for byte counts of allocations.
inline bool mulOverflows(size_t a, size_t b, size_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool addOverflows(size_t a, size_t b, size_t* out) { return __builtin_add_overflow(a, b, out); }

/// *out = the product of the nonzero `sizes` (each >= 0); true if it does
/// not fit int64. That product bounds numel and every contiguous stride.
inline bool nonzeroProductOverflows(IntArrayRef sizes, int64_t* out) {
  int64_t p = 1;
  for (int64_t s : sizes) {
    if (s != 0 && mulOverflows(p, s, &p)) {
      return true;
    }
  }
  *out = p;
  return false;
}

/// *out = (offset + 1 + sum((sizes[i] - 1) * strides[i])) * itemsize, the
/// bytes from the start of the storage to the end of the last element, for
/// sizes >= 1, strides >= 0 and offset >= 0 (callers handle a size of 0:
/// no elements, no bytes); true if any step does not fit int64.
inline bool storageNbytesOverflows(IntArrayRef sizes, IntArrayRef strides, int64_t offset, int64_t itemsize,
                                   int64_t* out) {
  int64_t last = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t span;
    if (mulOverflows(sizes[i] - 1, strides[i], &span) || addOverflows(last, span, &last)) {
      return true;
    }
  }
  return addOverflows(last, int64_t(1), &last) || mulOverflows(last, itemsize, out);
}

} // namespace opdispatch
