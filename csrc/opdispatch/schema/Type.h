// Type: the type of a schema argument or return (`Tensor`, `int`, `T?`,
// `T[]`, `(int, str)`, `Dict(str, Tensor)`, ...). Types are interned: equal
// types are the same object, so a TypePtr compares by pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace opdispatch {

/// Every type PyTorch's schema parser accepts. Base types first (up to
/// AnyEnum), then the types built from others. PyTorch: c10::TypeKind.
enum class TypeKind : uint8_t {
  Tensor,
  Int,
  SymInt,
  Float,
  Complex,
  Bool,
  SymBool,
  Str,
  Scalar, ///< PyTorch's NumberType: int, float or complex (or bool, as a Python value)
  ScalarType,
  Device,
  Layout,
  MemoryFormat,
  QScheme,
  Generator,
  Storage,
  Stream,
  Quantizer,
  Capsule,
  NoneType,
  Any,
  AnyClass,
  AnyEnum,
  Optional, ///< elem()? — the element may be None
  List, ///< elem()[]
  Tuple, ///< (containedTypes()...)
  Dict, ///< Dict(key, value)
  Future, ///< Future(elem())
  Await, ///< Await(elem())
  RRef, ///< RRef(elem())
  Union, ///< Union(containedTypes()...), normalised as PyTorch does
  Var, ///< a type variable: a lower-case name that is no other type (`t`)
};
constexpr TypeKind kLastBaseTypeKind = TypeKind::AnyEnum;

class Type;
/// Interned types live for the whole process; compare by pointer.
using TypePtr = const Type*;

class Type final {
 public:
  /// The interned base type of `kind` (a kind up to kLastBaseTypeKind).
  static TypePtr get(TypeKind kind);
  /// `elem?`. As PyTorch, `T??` is `T?`.
  static TypePtr optionalOf(TypePtr elem);
  static TypePtr listOf(TypePtr elem);
  static TypePtr tupleOf(std::vector<TypePtr> elems);
  /// Throws ValueError unless `key` is one of PyTorch's dict key types (int,
  /// float, complex, str, Tensor, Device).
  static TypePtr dictOf(TypePtr key, TypePtr value);
  static TypePtr futureOf(TypePtr elem);
  static TypePtr awaitOf(TypePtr elem);
  static TypePtr rrefOf(TypePtr elem);
  /// The union of `members`, normalised as PyTorch normalises it: nested
  /// unions and optionals flattened, members that are subtypes of others
  /// dropped, sorted by kind; `T | None` is `T?`. Throws ValueError if fewer
  /// than two types remain. PyTorch: UnionType::create.
  static TypePtr unionOf(const std::vector<TypePtr>& members);
  /// The type variable `name`.
  static TypePtr var(const std::string& name);
  /// The base type spelled `name` in a schema ("Tensor", "int",
  /// "DeviceIndex", ...), or null.
  static TypePtr fromName(std::string_view name);

  static TypePtr tensor() { return get(TypeKind::Tensor); }
  static TypePtr int_() { return get(TypeKind::Int); }
  static TypePtr float_() { return get(TypeKind::Float); }
  static TypePtr bool_() { return get(TypeKind::Bool); }
  static TypePtr string() { return get(TypeKind::Str); }

  TypeKind kind() const { return kind_; }
  /// The element of an Optional, List, Future, Await or RRef; null otherwise.
  TypePtr elem() const { return elem_; }
  /// The types this one is built from: the element, a tuple's or union's
  /// members, a dict's key and value. Empty for base types and variables.
  const std::vector<TypePtr>& containedTypes() const { return contained_; }
  /// The name of a type variable; empty otherwise.
  const std::string& varName() const { return name_; }
  bool isOptional() const { return kind_ == TypeKind::Optional; }
  bool isList() const { return kind_ == TypeKind::List; }
  /// The type with one level of Optional removed.
  TypePtr unwrapOptional() const { return isOptional() ? elem_ : this; }
  /// Tensor, Tensor?, Tensor[], Tensor?[] (and optional lists of them): types whose values carry dispatch keys.
  bool isTensorLike() const;
  /// As printed in a schema (PyTorch's Type::str()): "Tensor", "int?",
  /// "Tensor?[]", "(int, str)", "Dict(str, Tensor)", "Future(int)".
  std::string toString() const;
  /// As a Python annotation (PyTorch's annotation_str, and str() of a type
  /// in Python): "Optional[Tensor]", "List[int]", "number" for Scalar, "int"
  /// for SymInt.
  std::string annotationStr() const;
  /// PyTorch's kind name: "TensorType", "IntType", "OptionalType", ...
  const char* kindName() const;
  /// The type as PyTorch's Argument::type() shows it: SymInt, ScalarType,
  /// Layout and MemoryFormat read as int, inside Optional and List.
  /// PyTorch: SchemaTypeParser::parseFakeAndRealType.
  TypePtr fakeType() const;
  /// Whether every value of this type is a value of `other`.
  /// PyTorch: Type::isSubtypeOf (without TorchScript classes).
  bool isSubtypeOf(TypePtr other) const;

  /// Whether a C++ kernel of type `inferred` can serve an argument of type
  /// `this`: equal types, with SymInt accepted as int (PyTorch's rule for
  /// non-symbolic kernels).
  bool acceptsInferred(TypePtr inferred) const;

 private:
  Type(TypeKind k, std::vector<TypePtr> contained, std::string name);
  static TypePtr intern(TypeKind kind, std::vector<TypePtr> contained, std::string name);
  /// `make()` (an interned type built from this one), remembered in `cache`.
  template <class Make>
  TypePtr cached(std::atomic<TypePtr>& cache, Make make) const;
  TypeKind kind_;
  TypePtr elem_;
  std::vector<TypePtr> contained_;
  std::string name_;
  /// optionalOf(this) and listOf(this) once made (Note [Derived type caches]).
  mutable std::atomic<TypePtr> optional_{nullptr};
  mutable std::atomic<TypePtr> list_{nullptr};
};

std::ostream& operator<<(std::ostream& os, TypePtr t);

} // namespace opdispatch
