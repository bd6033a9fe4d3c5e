// ScalarType: the element types of a tensor, numbered as PyTorch numbers them
// (so that integer dtype defaults in schemas, e.g. `ScalarType? dtype=4`, mean
// the same thing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace opdispatch {

enum class ScalarType : int8_t {
  Byte = 0, ///< uint8
  Char = 1, ///< int8
  Short = 2, ///< int16
  Int = 3, ///< int32
  Long = 4, ///< int64
  Half = 5, ///< float16
  Float = 6, ///< float32
  Double = 7, ///< float64
  ComplexFloat = 9, ///< complex64
  ComplexDouble = 10, ///< complex128
  Bool = 11, ///< bool
  /// bfloat16: a name only, as PyTorch numbers it. opdispatch has no bfloat16
  /// tensors (NumPy has no bfloat16): making one raises (kNoBFloat16Tensors).
  BFloat16 = 15,
  Undefined = -1,
};

// kFloat, kLong, ...: PyTorch's short names (c10/core/ScalarType.h), so kernels
// written against ATen (`t.scalar_type() == at::kFloat`) read the same.
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;
constexpr ScalarType kBool = ScalarType::Bool;
/// For kernels written for ATen that name it (`AT_DISPATCH_..._AND2(kHalf, kBFloat16, ...)`); not a dtype of
/// any opdispatch tensor, and not in kAllScalarTypes. PyTorch: c10::kBFloat16.
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
/// What an error meeting kBFloat16 where a tensor's dtype is needed says.
constexpr const char* kNoBFloat16Tensors =
    "opdispatch has no bfloat16 tensors (NumPy has no bfloat16); kBFloat16 exists so that kernels written for ATen "
    "compile";

/// Every scalar type of a tensor, in enum order (not BFloat16).
constexpr ScalarType kAllScalarTypes[] = {ScalarType::Byte,          ScalarType::Char,   ScalarType::Short,
                                          ScalarType::Int,           ScalarType::Long,   ScalarType::Half,
                                          ScalarType::Float,         ScalarType::Double, ScalarType::ComplexFloat,
                                          ScalarType::ComplexDouble, ScalarType::Bool};

/// Bytes per element; 0 for Undefined.
size_t elementSize(ScalarType t);
/// PyTorch's C++ name: "Float", "Long", ...
const char* toString(ScalarType t);
/// NumPy/Python name: "float32", "int64", ...
const char* toPythonName(ScalarType t);
/// Parses a Python name ("float32") or a C++ name ("Float").
/// Throws ValueError listing the valid names.
ScalarType parseScalarType(const std::string& name);
/// Whether `v` is the number of a defined ScalarType.
bool isValidScalarType(int64_t v);
bool isFloatingType(ScalarType t);
bool isComplexType(ScalarType t);
bool isIntegralType(ScalarType t, bool include_bool);
std::ostream& operator<<(std::ostream& os, ScalarType t);

} // namespace opdispatch
