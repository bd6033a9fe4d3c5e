// InlineVector: a fixed-size sequence with room for N elements inline, so
// the per-call argument buffers of a Python call need no heap allocation.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace opdispatch::python {

/// `size` elements (set once, by the constructor or resize()), inline up to
/// N, else on the heap: value-initialised, or left uninitialised by
/// resizeForOverwrite for a trivial T the caller fills (no memset call on a
/// hot path). Only the elements in use are constructed. Not copyable (it
/// points into itself).
template <class T, size_t N>
class InlineVector final {
 public:
  explicit InlineVector(size_t size = 0) { resize(size); }
  InlineVector(const InlineVector&) = delete;
  InlineVector& operator=(const InlineVector&) = delete;
  ~InlineVector() {
    std::destroy_n(data_, size_);
    if (data_ != inlineData()) {
      ::operator delete(data_);
    }
  }
  /// Sets the size; only before the elements are used (the first call, or after a resize(0)).
  void resize(size_t size) {
    std::destroy_n(data_, size_);
    if (data_ != inlineData()) {
      ::operator delete(data_);
      data_ = inlineData();
    }
    if (size > N) {
      data_ = static_cast<T*>(::operator new(size * sizeof(T)));
    }
    std::uninitialized_value_construct_n(data_, size);
    size_ = size;
  }
  /// resize() without initialising the elements (trivial types only).
  void resizeForOverwrite(size_t size) {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
    if (data_ != inlineData()) {
      ::operator delete(data_);
      data_ = inlineData();
    }
    if (size > N) {
      data_ = static_cast<T*>(::operator new(size * sizeof(T)));
    }
    size_ = size;
  }

  size_t size() const { return size_; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* inlineData() { return std::launder(reinterpret_cast<T*>(inline_)); }
  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inlineData();
  size_t size_ = 0;
};

} // namespace opdispatch::python
