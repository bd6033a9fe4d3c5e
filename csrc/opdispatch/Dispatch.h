// Dtype dispatch for kernels: OPDISPATCH_DISPATCH_FLOATING_TYPES(dtype, "name",
// [&] { ... scalar_t ... }) runs the lambda with `scalar_t` the C++ type of
// `dtype`, or throws NotImplementedError "\"name\" not implemented for 'Int'".
// PyTorch: AT_DISPATCH_FLOATING_TYPES and its kin (ATen/Dispatch.h,
// Dispatch_v2.h's predecessors); the name map takes AT_ to OPDISPATCH_. The
// _AND forms add the listed ScalarTypes (kHalf's scalar_t is opdispatch::Half,
// kBFloat16's opdispatch::BFloat16, a case no opdispatch tensor reaches).
#pragma once

#include <cstdint>

#include <opdispatch/core/BFloat16.h>
#include <opdispatch/core/Exception.h>
#include <opdispatch/core/Half.h>
#include <opdispatch/core/ScalarType.h>

namespace opdispatch::impl {
/// The C++ element type of a ScalarType (the complex types have none here:
/// no dispatch macro offers them). PyTorch: c10::impl::ScalarTypeToCPPType.
template <ScalarType T>
struct ScalarTypeToCPPType;
#define OPDISPATCH_SCALAR_TYPE_TO_CPP(enum_type, cpp_type) \
  template <>                                              \
  struct ScalarTypeToCPPType<ScalarType::enum_type> {      \
    using type = cpp_type;                                 \
  };
OPDISPATCH_SCALAR_TYPE_TO_CPP(Byte, uint8_t)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Char, int8_t)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Short, int16_t)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Int, int32_t)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Long, int64_t)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Half, Half)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Float, float)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Double, double)
OPDISPATCH_SCALAR_TYPE_TO_CPP(Bool, bool)
OPDISPATCH_SCALAR_TYPE_TO_CPP(BFloat16, BFloat16)
#undef OPDISPATCH_SCALAR_TYPE_TO_CPP
template <ScalarType T>
using ScalarTypeToCPPTypeT = typename ScalarTypeToCPPType<T>::type;
} // namespace opdispatch::impl

/// One case of OPDISPATCH_DISPATCH_SWITCH: the ScalarType `enum_type`
/// (`opdispatch::kHalf`, `opdispatch::ScalarType::Half`) runs the lambda with
/// its scalar_t. PyTorch: AT_DISPATCH_CASE.
#define OPDISPATCH_DISPATCH_CASE(enum_type, ...)                                           \
  case enum_type: {                                                                        \
    using scalar_t [[maybe_unused]] = ::opdispatch::impl::ScalarTypeToCPPTypeT<enum_type>; \
    return __VA_ARGS__();                                                                  \
  }

/// The older spelling: OPDISPATCH_PRIVATE_CASE_TYPE(Float, float, lambda). PyTorch: AT_PRIVATE_CASE_TYPE.
#define OPDISPATCH_PRIVATE_CASE_TYPE(enum_type, type, ...) \
  case ::opdispatch::ScalarType::enum_type: {              \
    using scalar_t [[maybe_unused]] = type;                \
    return __VA_ARGS__();                                  \
  }

/// Runs the case of `TYPE` among the OPDISPATCH_DISPATCH_CASE(...) cases
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

// The case lists. PyTorch: AT_DISPATCH_CASE_FLOATING_TYPES and its kin.
#define OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES(...)           \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kDouble, __VA_ARGS__) \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kFloat, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_INTEGRAL_TYPES(...)         \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kByte, __VA_ARGS__) \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kChar, __VA_ARGS__) \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kInt, __VA_ARGS__)  \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kLong, __VA_ARGS__) \
  OPDISPATCH_DISPATCH_CASE(::opdispatch::kShort, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_ALL_TYPES(...)        \
  OPDISPATCH_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) \
  OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND(S1, ...) \
  OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S1, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND2(S1, S2, ...) \
  OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND(S1, __VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S2, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND3(S1, S2, S3, ...) \
  OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND2(S1, S2, __VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S3, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_INTEGRAL_TYPES_AND(S1, ...) \
  OPDISPATCH_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S1, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND(S1, ...) \
  OPDISPATCH_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S1, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND2(S1, S2, ...) \
  OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND(S1, __VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S2, __VA_ARGS__)
#define OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND3(S1, S2, S3, ...) \
  OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND2(S1, S2, __VA_ARGS__) OPDISPATCH_DISPATCH_CASE(S3, __VA_ARGS__)

/// float and double. PyTorch: AT_DISPATCH_FLOATING_TYPES.
#define OPDISPATCH_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES(__VA_ARGS__))
/// float, double and Half. PyTorch: AT_DISPATCH_FLOATING_TYPES_AND_HALF.
#define OPDISPATCH_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND(::opdispatch::kHalf, __VA_ARGS__))
/// uint8, int8, int32, int64, int16. PyTorch: AT_DISPATCH_INTEGRAL_TYPES.
#define OPDISPATCH_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_INTEGRAL_TYPES(__VA_ARGS__))
/// The floating and the integral types. PyTorch: AT_DISPATCH_ALL_TYPES.
#define OPDISPATCH_DISPATCH_ALL_TYPES(TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_ALL_TYPES(__VA_ARGS__))
// The same with one, two or three more ScalarTypes, given first:
// OPDISPATCH_DISPATCH_ALL_TYPES_AND2(kHalf, kBool, t.scalar_type(), "name", lambda).
// PyTorch: AT_DISPATCH_FLOATING_TYPES_AND, AT_DISPATCH_ALL_TYPES_AND2, ...
#define OPDISPATCH_DISPATCH_FLOATING_TYPES_AND(S1, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND(S1, __VA_ARGS__))
#define OPDISPATCH_DISPATCH_FLOATING_TYPES_AND2(S1, S2, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND2(S1, S2, __VA_ARGS__))
#define OPDISPATCH_DISPATCH_FLOATING_TYPES_AND3(S1, S2, S3, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_FLOATING_TYPES_AND3(S1, S2, S3, __VA_ARGS__))
#define OPDISPATCH_DISPATCH_INTEGRAL_TYPES_AND(S1, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_INTEGRAL_TYPES_AND(S1, __VA_ARGS__))
#define OPDISPATCH_DISPATCH_ALL_TYPES_AND(S1, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND(S1, __VA_ARGS__))
#define OPDISPATCH_DISPATCH_ALL_TYPES_AND2(S1, S2, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND2(S1, S2, __VA_ARGS__))
#define OPDISPATCH_DISPATCH_ALL_TYPES_AND3(S1, S2, S3, TYPE, NAME, ...) \
  OPDISPATCH_DISPATCH_SWITCH(TYPE, NAME, OPDISPATCH_DISPATCH_CASE_ALL_TYPES_AND3(S1, S2, S3, __VA_ARGS__))
