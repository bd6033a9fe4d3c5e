// Half: the C++ type of a float16 element (ScalarType::Half), as kernels see
// it through data_ptr<Half>() and the dtype dispatch macros' scalar_t. It
// holds IEEE 754 binary16 bits and computes in float: reading converts to
// float, assigning a float rounds to the nearest half (ties to even).
// PyTorch: c10::Half (c10/util/Half.h), whose arithmetic also goes through float.
#pragma once

#include <cstdint>
#include <cstring>

namespace opdispatch {

namespace detail {
/// The binary16 bits nearest `value` (ties to even); overflow gives inf, NaN a quiet NaN.
inline uint16_t floatToHalfBits(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {
    return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  }
  if (magnitude >= 0x47800000u) {
    return static_cast<uint16_t>(sign | 0x7c00u);  // 65536 and above (and inf): inf
  }
  uint32_t kept = 0;
  uint32_t dropped = 0;
  uint32_t halfway = 0;
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent (127 -> 15), keep 10 mantissa bits
    const uint32_t rebiased = magnitude - (112u << 23);
    kept = rebiased >> 13;
    dropped = rebiased & 0x1fffu;
    halfway = 0x1000u;
  } else if (magnitude > 0x33000000u) {  // a subnormal half: a multiple of 2^-24
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - (magnitude >> 23);
    kept = mantissa >> shift;
    dropped = mantissa & ((1u << shift) - 1u);
    halfway = 1u << (shift - 1u);
  } else {
    return static_cast<uint16_t>(sign);  // 2^-25 and below round to zero
  }
  if (dropped > halfway || (dropped == halfway && (kept & 1u))) {
    ++kept;  // a carry moves into the exponent, as rounding should
  }
  return static_cast<uint16_t>(sign | kept);
}

/// The float a binary16 value stands for (exactly).
inline float halfBitsToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  uint32_t bits = 0;
  if (exponent == 0x1fu) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {
    const float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);  // mantissa * 2^-24
    return sign ? -magnitude : magnitude;
  } else {
    bits = sign;
  }
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
} // namespace detail

struct alignas(2) Half {
  uint16_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  /* implicit */ Half(float value) : x(detail::floatToHalfBits(value)) {}  // NOLINT: as c10::Half
  /* implicit */ operator float() const { return detail::halfBitsToFloat(x); }  // NOLINT

  Half& operator+=(const Half& other) { return *this = float(*this) + float(other); }
  Half& operator-=(const Half& other) { return *this = float(*this) - float(other); }
  Half& operator*=(const Half& other) { return *this = float(*this) * float(other); }
  Half& operator/=(const Half& other) { return *this = float(*this) / float(other); }
};

static_assert(sizeof(Half) == 2, "Half must be two bytes, as a float16 element");

} // namespace opdispatch
