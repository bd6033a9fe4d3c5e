// Scalar: a number argument of schema type `Scalar` (an int, a float or a
// bool). In an IValue it is stored as that int, double or bool.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include <opdispatch/core/Exception.h>

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
  bool isIntegral(bool include_bool) const { return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool); }
  bool isFloatingPoint() const { return tag_ == Tag::Double; }
  bool isBoolean() const { return tag_ == Tag::Bool; }

  /// The value as int64 (a float truncates toward zero). Throws
  /// OverflowError for a float that is NaN, infinite or out of int64's range
  /// (PyTorch: checked_convert, "value cannot be converted ... without overflow").
  int64_t toLong() const {
    if (tag_ == Tag::Double) {
      // [-2**63, 2**63) written as doubles, which represent both bounds exactly.
      OPDISPATCH_CHECK_OVERFLOW(v_.d >= -9223372036854775808.0 && v_.d < 9223372036854775808.0, "value ", v_.d,
                                " cannot be converted to type int64 without overflow");
      return static_cast<int64_t>(v_.d);
    }
    return tag_ == Tag::Int ? v_.i : int64_t(v_.b);
  }
  double toDouble() const {
    return tag_ == Tag::Double ? v_.d : tag_ == Tag::Int ? static_cast<double>(v_.i) : double(v_.b);
  }
  bool toBool() const { return tag_ == Tag::Bool ? v_.b : tag_ == Tag::Int ? v_.i != 0 : v_.d != 0.0; }
  /// The value as T (bool, a floating-point or an integral type). Throws
  /// OverflowError if it does not fit T: an integer outside T's range, or a
  /// finite float beyond T's largest value (infinities and NaN convert to a
  /// floating T). PyTorch: Scalar::to, checked_convert.
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) {
      return toBool();
    } else if constexpr (std::is_floating_point_v<T>) {
      double d = toDouble();
      OPDISPATCH_CHECK_OVERFLOW(!std::isfinite(d) || std::fabs(d) <= static_cast<double>(std::numeric_limits<T>::max()),
                                "value ", d, " cannot be converted to a ", sizeof(T) * 8,
                                "-bit float without overflow");
      return static_cast<T>(d);
    } else {
      int64_t v = toLong();
      if constexpr (std::is_signed_v<T>) {
        OPDISPATCH_CHECK_OVERFLOW(v >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                      v <= static_cast<int64_t>(std::numeric_limits<T>::max()),
                                  "value ", v, " cannot be converted to a ", sizeof(T) * 8,
                                  "-bit signed integer without overflow");
      } else {
        OPDISPATCH_CHECK_OVERFLOW(v >= 0 && static_cast<uint64_t>(v) <= std::numeric_limits<T>::max(), "value ", v,
                                  " cannot be converted to a ", sizeof(T) * 8,
                                  "-bit unsigned integer without overflow");
      }
      return static_cast<T>(v);
    }
  }
  bool operator==(const Scalar& o) const {
    return tag_ == o.tag_ && (tag_ == Tag::Int      ? v_.i == o.v_.i
                              : tag_ == Tag::Double ? v_.d == o.v_.d
                                                    : v_.b == o.v_.b);
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
