// Dtype dispatch for kernels: OPDISPATCH_DISPATCH_FLOATING_TYPES(dtype, "name",
// [&] { ... scalar_t ... }) runs the lambda with `scalar_t` the C++ type of
// `dtype`, or throws NotImplementedError "\"name\" not implemented for 'Int'".
// PyTorch: AT_DISPATCH_FLOATING_TYPES and its kin (ATen/Dispatch.h); the name
// map takes AT_ to OPDISPATCH_. The _AND_HALF forms are missing: opdispatch
// has no C++ half type.
#pragma once

#include <cstdint>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/ScalarType.h>

#define OPDISPATCH_PRIVATE_CASE_TYPE(enum_type, type, ...) \
  case ::opdispatch::ScalarType::enum_type: {              \
    using scalar_t [[maybe_unused]] = type;                \
    return __VA_ARGS__();                                  \
  }

/// Runs the case of `TYPE` among the OPDISPATCH_PRIVATE_CASE_TYPE(...) cases
/// given, else throws NotImplementedError naming `NAME` and the dtype.
/// PyTorch: AT_DISPATCH_SWITCH.
#define OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, ...)                                                         \
  [&] {                                                                                                     \
    const ::opdispatch::ScalarType opdispatch_dispatch_type = (TYPE);                                       \
    switch (opdispatch_dispatch_type) {                                                                     \
      __VA_ARGS__                                                                                           \
      default:                                                                                              \
        throw ::opdispatch::NotImplementedError(::opdispatch::detail::str(                                  \
            '"', NAME, "\" not implemented for '", ::opdispatch::toString(opdispatch_dispatch_type), "'")); \
    }                                                                                                       \
  }()

#define OPDISPATCH_PRIVATE_CASES_FLOATING(...)              \
  OPDISPATCH_PRIVATE_CASE_TYPE(Double, double, __VA_ARGS__) \
  OPDISPATCH_PRIVATE_CASE_TYPE(Float, float, __VA_ARGS__)
#define OPDISPATCH_PRIVATE_CASES_INTEGRAL(...)             \
  OPDISPATCH_PRIVATE_CASE_TYPE(Byte, uint8_t, __VA_ARGS__) \
  OPDISPATCH_PRIVATE_CASE_TYPE(Char, int8_t, __VA_ARGS__)  \
  OPDISPATCH_PRIVATE_CASE_TYPE(Int, int32_t, __VA_ARGS__)  \
  OPDISPATCH_PRIVATE_CASE_TYPE(Long, int64_t, __VA_ARGS__) \
  OPDISPATCH_PRIVATE_CASE_TYPE(Short, int16_t, __VA_ARGS__)

/// float and double. PyTorch: AT_DISPATCH_FLOATING_TYPES.
#define OPDISPATCH_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_PRIVATE_CASES_FLOATING(__VA_ARGS__))
/// uint8, int8, int32, int64, int16. PyTorch: AT_DISPATCH_INTEGRAL_TYPES.
#define OPDISPATCH_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_PRIVATE_CASES_INTEGRAL(__VA_ARGS__))
/// The floating and the integral types. PyTorch: AT_DISPATCH_ALL_TYPES.
#define OPDISPATCH_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(                          \
      TYPE, NAME, OPDISPATCH_PRIVATE_CASES_INTEGRAL(__VA_ARGS__) OPDISPATCH_PRIVATE_CASES_FLOATING(__VA_ARGS__))
