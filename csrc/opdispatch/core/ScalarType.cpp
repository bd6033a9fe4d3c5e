// Sizes and names of ScalarType.
#include <opdispatch/core/ScalarType.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
struct ScalarTypeInfo {
  ScalarType type;
  size_t size;
  const char* cpp_name;
  const char* py_name;
};
constexpr ScalarTypeInfo kInfo[] = {
    {ScalarType::Byte, 1, "Byte", "uint8"},
    {ScalarType::Char, 1, "Char", "int8"},
    {ScalarType::Short, 2, "Short", "int16"},
    {ScalarType::Int, 4, "Int", "int32"},
    {ScalarType::Long, 8, "Long", "int64"},
    {ScalarType::Half, 2, "Half", "float16"},
    {ScalarType::Float, 4, "Float", "float32"},
    {ScalarType::Double, 8, "Double", "float64"},
    {ScalarType::ComplexFloat, 8, "ComplexFloat", "complex64"},
    {ScalarType::ComplexDouble, 16, "ComplexDouble", "complex128"},
    {ScalarType::Bool, 1, "Bool", "bool"},
};
const ScalarTypeInfo* find(ScalarType t) {
  for (const auto& i : kInfo) {
    if (i.type == t) {
      return &i;
    }
  }
  return nullptr;
}
} // namespace

size_t elementSize(ScalarType t) {
  auto* i = find(t);
  return i ? i->size : 0;
}
const char* toString(ScalarType t) {
  if (t == ScalarType::BFloat16) {
    return "BFloat16";
  }
  auto* i = find(t);
  return i ? i->cpp_name : "Undefined";
}
const char* toPythonName(ScalarType t) {
  if (t == ScalarType::BFloat16) {
    return "bfloat16";
  }
  auto* i = find(t);
  return i ? i->py_name : "undefined";
}
ScalarType parseScalarType(const std::string& name) {
  for (const auto& i : kInfo) {
    if (name == i.py_name || name == i.cpp_name) {
      return i.type;
    }
  }
  std::string valid;
  for (const auto& i : kInfo) {
    valid += valid.empty() ? "" : ", ";
    valid += i.py_name;
  }
  throw ValueError(detail::str("unknown dtype '", name, "'; valid dtypes are: ", valid));
}
bool isValidScalarType(int64_t v) { return v >= -128 && v < 128 && find(static_cast<ScalarType>(v)) != nullptr; }
bool isFloatingType(ScalarType t) {
  return t == ScalarType::Half || t == ScalarType::Float || t == ScalarType::Double || t == ScalarType::BFloat16;
}
bool isComplexType(ScalarType t) { return t == ScalarType::ComplexFloat || t == ScalarType::ComplexDouble; }
bool isIntegralType(ScalarType t, bool include_bool) {
  switch (t) {
    case ScalarType::Byte:
    case ScalarType::Char:
    case ScalarType::Short:
    case ScalarType::Int:
    case ScalarType::Long:
      return true;
    case ScalarType::Bool:
      return include_bool;
    default:
      return false;
  }
}
std::ostream& operator<<(std::ostream& os, ScalarType t) { return os << toString(t); }

} // namespace opdispatch
