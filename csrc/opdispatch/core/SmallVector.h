// SmallVector: a growable sequence that keeps its first N elements inline, so
// the few entries a call records need no heap allocation.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace opdispatch {

/// push_back and iteration only. Only the elements pushed are constructed.
template <class T, size_t N>
class SmallVector final {
 public:
  SmallVector() = default;
  SmallVector(const SmallVector&) = delete;
  SmallVector& operator=(const SmallVector&) = delete;
  ~SmallVector() {
    std::destroy_n(data_, size_);
    if (data_ != inlineData()) {
      ::operator delete(data_);
    }
  }

  void push_back(T value) {
    if (size_ == capacity_) {
      grow();
    }
    new (data_ + size_) T(std::move(value));
    ++size_;
  }
  size_t size() const { return size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  T* inlineData() { return std::launder(reinterpret_cast<T*>(inline_)); }
  void grow() {
    T* bigger = static_cast<T*>(::operator new(2 * capacity_ * sizeof(T)));
    std::uninitialized_move_n(data_, size_, bigger);
    std::destroy_n(data_, size_);
    if (data_ != inlineData()) {
      ::operator delete(data_);
    }
    data_ = bigger;
    capacity_ *= 2;
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = inlineData();
  size_t size_ = 0;
  size_t capacity_ = N;
};

} // namespace opdispatch
