// SmallVector: a sequence that keeps its first N elements inline, so the few
// entries a call records (post-kernel effects) or binds (a Python call's
// arguments) need no heap allocation.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace opdispatch {

/// Inline up to N elements, else on the heap. Grows by push_back, or is
/// sized once by resize (value-initialised) or resizeForOverwrite (left
/// uninitialised, for a trivial T the caller fills: no memset on a hot path).
/// Only the elements in use are constructed. Not copyable (it points into
/// itself).
template <class T, size_t N>
class SmallVector final {
 public:
  SmallVector() = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  ~SmallVector() { release(); }

  void push_back(T value) {
    if (size_ == capacity_) {
      grow();
    }
    new (data_ + size_) T(std::move(value));
    ++size_;
  }
  /// Makes it `size` value-initialised elements; only while it is empty.
  void resize(size_t size) {
    reserveEmpty(size);
    std::uninitialized_value_construct_n(data_, size);
    size_ = size;
  }
  /// resize() without initialising the elements (trivial types only).
  void resizeForOverwrite(size_t size) {
    static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>);
    reserveEmpty(size);
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
  void release() {
    std::destroy_n(data_, size_);
    if (data_ != inlineData()) {
      ::operator delete(data_);
    }
  }
  /// Room for `size` elements in an empty vector.
  void reserveEmpty(size_t size) {
    if (size > capacity_) {
      release();
      data_ = static_cast<T*>(::operator new(size * sizeof(T)));
      capacity_ = size;
    }
  }
  void grow() {
    T* bigger = static_cast<T*>(::operator new(2 * capacity_ * sizeof(T)));
    std::uninitialized_move_n(data_, size_, bigger);
    release();
    data_ = bigger;
    capacity_ *= 2;
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inlineData();
  size_t size_ = 0;
  size_t capacity_ = N;
};

} // namespace opdispatch
