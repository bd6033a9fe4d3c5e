// Scalar: a number argument of schema type `Scalar` (an int, a float or a
// bool). In an IValue it is stored as that int, double or bool.
#pragma once

#include <cstdint>
#include <ostream>
#include <type_traits>

namespace opdispatch {

class Scalar {
 public:
  enum class Tag : uint8_t { Int, Double, Bool };

  Scalar() : Scalar(int64_t(0)) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(Tag::Int) {
    v_.i = static_cast<int64_t>(v);
  }
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : tag_(Tag::Double) {
    v_.d = static_cast<double>(v);
  }
  Scalar(bool v) : tag_(Tag::Bool) { v_.b = v; }

  Tag tag() const { return tag_; }
  bool isIntegral(bool include_bool) const {
    return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool);
  }
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isBoolean() const { return tag_ == Tag::Bool; }

  int64_t toLong() const {
    return tag_ == Tag::Int ? v_.i : tag_ == Tag::Double ? static_cast<int64_t>(v_.d) : int64_t(v_.b);
  }
  double toDouble() const {
    return tag_ == Tag::Double ? v_.d : tag_ == Tag::Int ? static_cast<double>(v_.i) : double(v_.b);
  }
  bool toBool() const { return tag_ == Tag::Bool ? v_.b : tag_ == Tag::Int ? v_.i != 0 : v_.d != 0.0; }
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return toBool();
    } else if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(toDouble());
    } else {
      return static_cast<T>(toLong());
    }
  }
  bool operator==(const Scalar& o) const {
    return tag_ == o.tag_ && (tag_ == Tag::Int ? v_.i == o.v_.i : tag_ == Tag::Double ? v_.d == o.v_.d : v_.b == o.v_.b);
  }

 private:
  Tag tag_;
  union {
    int64_t i;
    double d;
    bool b;
  } v_;
};

inline std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  switch (s.tag()) {
    case Scalar::Tag::Int:
      return os << s.toLong();
    case Scalar::Tag::Double:
      return os << s.toDouble();
    case Scalar::Tag::Bool:
      return os << (s.toBool() ? "True" : "False");
  }
  return os;
}

} // namespace opdispatch
