// BFloat16: the C++ type of a bfloat16 element (ScalarType::BFloat16), for
// kernels written for ATen that name it (the dtype dispatch macros' _AND forms
// with kBFloat16). opdispatch has no bfloat16 tensors (NumPy has no bfloat16),
// so no kernel receives one; the type keeps such kernels compiling and
// computes as ATen's does: the upper 16 bits of a float, reading converts to
// float, assigning a float rounds to the nearest bfloat16 (ties to even).
// PyTorch: c10::BFloat16 (c10/util/BFloat16.h).
#pragma once

#include <cstdint>
#include <cstring>

namespace opdispatch {

struct alignas(2) BFloat16 {
  uint16_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  /* implicit */ BFloat16(float value) : x(roundToBits(value)) {}  // NOLINT: as c10::BFloat16
  /* implicit */ operator float() const {                          // NOLINT
    const uint32_t bits = static_cast<uint32_t>(x) << 16;
    float value = 0;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }

  BFloat16& operator+=(const BFloat16& other) { return *this = float(*this) + float(other); }
  BFloat16& operator-=(const BFloat16& other) { return *this = float(*this) - float(other); }
  BFloat16& operator*=(const BFloat16& other) { return *this = float(*this) * float(other); }
  BFloat16& operator/=(const BFloat16& other) { return *this = float(*this) / float(other); }

 private:
  /// The bfloat16 bits nearest `value` (ties to even); NaN gives a quiet NaN.
  static uint16_t roundToBits(float value) {
    uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
      return 0x7fc0u;
    }
    const uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>((bits + rounding) >> 16);
  }
};

static_assert(sizeof(BFloat16) == 2, "BFloat16 must be two bytes, as a bfloat16 element");

} // namespace opdispatch
