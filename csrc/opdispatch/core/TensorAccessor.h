// TensorAccessor: indexed access to a CPU tensor's elements with its strides,
// `auto a = t.accessor<float, 2>(); a[i][j] = 1;`, as ATen kernels write loops.
// PyTorch: ATen/core/TensorAccessor.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace opdispatch {

/// A view of `N` dimensions of elements of type T: `a[i]` is a view of N-1
/// dimensions, and of one dimension `a[i]` is the element. Indices are not
/// checked (as ATen's): the tensor's sizes() say what is valid.
template <class T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data),
        sizes_(sizes),
        strides_(strides) {}
  TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  int64_t size(size_t d) const { return sizes_[d]; }
  int64_t stride(size_t d) const { return strides_[d]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

template <class T>
class TensorAccessor<T, 1> {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data),
        sizes_(sizes),
        strides_(strides) {}
  T& operator[](int64_t i) const { return data_[strides_[0] * i]; }
  int64_t size(size_t d) const { return sizes_[d]; }
  int64_t stride(size_t d) const { return strides_[d]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

} // namespace opdispatch
