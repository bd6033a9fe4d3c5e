// InlineVector: a fixed-size sequence with room for N elements inline, so
// the per-call argument buffers of a Python call need no heap allocation.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace opdispatch::python {

/// Default-constructed elements, inline up to N, else on the heap. Not
/// copyable (it points into itself).
template <class T, size_t N>
class InlineVector final {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> has no data(); use uint8_t");

 public:
  explicit InlineVector(size_t size = 0) { resize(size); }
  /// Sets the size, once, before the elements are used.
  void resize(size_t size) {
    size_ = size;
    if (size > N) {
      heap_.resize(size);
      data_ = heap_.data();
    }
  }
  InlineVector(const InlineVector&) = delete;
  InlineVector& operator=(const InlineVector&) = delete;

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
  std::array<T, N> inline_{};
  std::vector<T> heap_;
  T* data_ = inline_.data();
  size_t size_ = 0;
};

} // namespace opdispatch::python
