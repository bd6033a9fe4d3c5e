// ArrayRef<T>: a non-owning view of contiguous elements (pointer + length),
// the C++ type of list arguments such as `int[] size` (IntArrayRef).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace opdispatch {

template <class T>
class ArrayRef final {
 public:
  using value_type = T;
  using iterator = const T*;
  using const_iterator = const T*;

  constexpr ArrayRef() = default;
  constexpr ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  /// A one-element view of `one` (which must outlive the view).
  constexpr ArrayRef(const T& one) : data_(&one), size_(1) {}
  template <class A>
  ArrayRef(const std::vector<T, A>& v) : data_(v.data()),
                                         size_(v.size()) {}
  // The list outlives the view when it is a call argument (`empty({2, 3})`),
  // which is the intended use; the view must not be stored.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  constexpr ArrayRef(const std::initializer_list<T>& l)
      : data_(l.begin() == l.end() ? nullptr : l.begin()),
        size_(l.size()) {}
#pragma GCC diagnostic pop

  constexpr const T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T* begin() const { return data_; }
  constexpr const T* end() const { return data_ + size_; }
  constexpr const T& operator[](size_t i) const { return data_[i]; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  bool equals(ArrayRef o) const {
    if (size_ != o.size_) {
      return false;
    }
    for (size_t i = 0; i < size_; ++i) {
      if (!(data_[i] == o.data_[i])) {
        return false;
      }
    }
    return true;
  }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

/// Element-wise equality, as PyTorch's c10::ArrayRef operator== (`a.sizes() == b.sizes()`).
template <class T>
bool operator==(ArrayRef<T> a, ArrayRef<T> b) {
  return a.equals(b);
}
template <class T>
bool operator!=(ArrayRef<T> a, ArrayRef<T> b) {
  return !a.equals(b);
}

/// "[2, 3]", as PyTorch prints an ArrayRef (`"got size ", t.sizes()` in messages).
template <class T>
std::ostream& operator<<(std::ostream& os, ArrayRef<T> a) {
  os << "[";
  for (size_t i = 0; i < a.size(); ++i) {
    os << (i ? ", " : "") << a[i];
  }
  return os << "]";
}

using IntArrayRef = ArrayRef<int64_t>;

} // namespace opdispatch
