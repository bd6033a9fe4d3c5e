// Type: the type of a schema argument or return (`Tensor`, `int`, `T?`,
// `T[]`, ...). Types are interned: equal types are the same object, so a
// TypePtr compares by pointer.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace opdispatch {

enum class TypeKind : uint8_t {
  Tensor,
  Int,
  SymInt,
  Float,
  Bool,
  SymBool,
  Str,
  Scalar,
  ScalarType,
  Device,
  Layout,
  MemoryFormat,
  QScheme,
  Generator,
  Any,
  Optional, ///< elem()? — the element may be None
  List, ///< elem()[]
};

class Type;
/// Interned types live for the whole process; compare by pointer.
using TypePtr = const Type*;

class Type final {
 public:
  /// The interned base type of `kind` (not Optional or List).
  static TypePtr get(TypeKind kind);
  static TypePtr optionalOf(TypePtr elem);
  static TypePtr listOf(TypePtr elem);
  /// The base type spelled `name` in a schema ("Tensor", "int", ...), or null.
  static TypePtr fromName(const std::string& name);

  static TypePtr tensor() { return get(TypeKind::Tensor); }
  static TypePtr int_() { return get(TypeKind::Int); }
  static TypePtr float_() { return get(TypeKind::Float); }
  static TypePtr bool_() { return get(TypeKind::Bool); }
  static TypePtr string() { return get(TypeKind::Str); }

  TypeKind kind() const { return kind_; }
  /// Element of an Optional or List; null otherwise.
  TypePtr elem() const { return elem_; }
  bool isOptional() const { return kind_ == TypeKind::Optional; }
  bool isList() const { return kind_ == TypeKind::List; }
  /// The type with one level of Optional removed.
  TypePtr unwrapOptional() const { return isOptional() ? elem_ : this; }
  /// Tensor, Tensor?, Tensor[], Tensor?[] (and optional lists of them): types whose values carry dispatch keys.
  bool isTensorLike() const;
  /// As printed in a schema: "Tensor", "int?", "Tensor?[]", "str[][]".
  std::string toString() const;

  /// Whether a C++ kernel of type `inferred` can serve an argument of type
  /// `this`: equal types, with SymInt accepted as int (PyTorch's rule for
  /// non-symbolic kernels).
  bool acceptsInferred(TypePtr inferred) const;

 private:
  Type(TypeKind k, TypePtr e) : kind_(k), elem_(e) {}
  TypeKind kind_;
  TypePtr elem_;
};

std::ostream& operator<<(std::ostream& os, TypePtr t);

} // namespace opdispatch
