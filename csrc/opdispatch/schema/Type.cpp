// Interned Type objects, their printing and subtyping.
#include <opdispatch/schema/Type.h>

#include <opdispatch/core/Exception.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>

namespace opdispatch {

namespace {
constexpr int kNumBaseKinds = static_cast<int>(kLastBaseTypeKind) + 1;

struct KindInfo {
  TypeKind kind;
  const char* schemaName; ///< as written in a schema; null for built types
  const char* annotation; ///< PyTorch's annotation_str of a base type
  const char* kindName; ///< PyTorch's Type.kind()
  int unionOrder; ///< position of PyTorch's TypeKind, which orders union members
};
// Indexed by TypeKind. unionOrder follows c10's C10_FORALL_TYPES.
constexpr KindInfo kKinds[] = {
    {TypeKind::Tensor, "Tensor", "Tensor", "TensorType", 3},
    {TypeKind::Int, "int", "int", "IntType", 14},
    {TypeKind::SymInt, "SymInt", "int", "SymIntType", 36},
    {TypeKind::Float, "float", "float", "FloatType", 9},
    {TypeKind::Complex, "complex", "complex", "ComplexType", 10},
    {TypeKind::Bool, "bool", "bool", "BoolType", 19},
    {TypeKind::SymBool, "SymBool", "bool", "SymBoolType", 38},
    {TypeKind::Str, "str", "str", "StringType", 16},
    {TypeKind::Scalar, "Scalar", "number", "NumberType", 8},
    {TypeKind::ScalarType, "ScalarType", "ScalarType", "ScalarTypeType", 30},
    {TypeKind::Device, "Device", "Device", "DeviceObjType", 22},
    {TypeKind::Layout, "Layout", "Layout", "LayoutType", 31},
    {TypeKind::MemoryFormat, "MemoryFormat", "MemoryFormat", "MemoryFormatType", 32},
    {TypeKind::QScheme, "QScheme", "QScheme", "QSchemeType", 29},
    {TypeKind::Generator, "Generator", "Generator", "GeneratorType", 17},
    {TypeKind::Storage, "Storage", "Storage", "StorageType", 4},
    {TypeKind::Stream, "Stream", "Stream", "StreamObjType", 23},
    {TypeKind::Quantizer, "Quantizer", "Quantizer", "QuantizerType", 18},
    {TypeKind::Capsule, "Capsule", "Capsule", "CapsuleType", 27},
    {TypeKind::NoneType, "NoneType", "NoneType", "NoneType", 15},
    {TypeKind::Any, "Any", "Any", "AnyType", 0},
    {TypeKind::AnyClass, "AnyClassType", "AnyClassType", "AnyClassType", 35},
    {TypeKind::AnyEnum, "AnyEnumType", "AnyEnumType", "AnyEnumType", 2},
    {TypeKind::Optional, nullptr, "Optional", "OptionalType", 20},
    {TypeKind::List, nullptr, "List", "ListType", 6},
    {TypeKind::Tuple, nullptr, "Tuple", "TupleType", 5},
    {TypeKind::Dict, "Dict", "Dict", "DictType", 7},
    {TypeKind::Future, "Future", "Future", "FutureType", 11},
    {TypeKind::Await, "Await", "Await", "AwaitType", 12},
    {TypeKind::RRef, "RRef", "RRef", "RRefType", 13},
    {TypeKind::Union, "Union", "Union", "UnionType", 39},
    {TypeKind::Var, nullptr, nullptr, "VarType", 21},
};
static_assert(sizeof(kKinds) / sizeof(kKinds[0]) == static_cast<size_t>(TypeKind::Var) + 1,
              "every TypeKind has an entry in kKinds");

const KindInfo& info(TypeKind k) { return kKinds[static_cast<int>(k)]; }

/// Names that mean another base type (PyTorch's parser maps them).
struct Alias {
  std::string_view name;
  TypeKind kind;
};
constexpr Alias kAliases[] = {
    {"DeviceIndex", TypeKind::Int}, {"ConstQuantizerPtr", TypeKind::Int}, {"None", TypeKind::NoneType}};

// The intern table is never destroyed: interned types live for the whole
// process, and a destroyed table would leave them unreachable (a leak to
// LeakSanitizer).
using InternKey = std::tuple<TypeKind, std::vector<TypePtr>, std::string>;

std::mutex& internMutex() {
  static std::mutex m;
  return m;
}
std::map<InternKey, const Type*>& internTable() {
  static auto* table = new std::map<InternKey, const Type*>();
  return *table;
}

/// Whether `a` and `b` have equal lengths and `pred` holds for each pair.
template <class Pred>
bool pairwise(const std::vector<TypePtr>& a, const std::vector<TypePtr>& b, Pred pred) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!pred(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

std::string join(const std::vector<TypePtr>& types, std::string (Type::*print)() const) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) {
    out += (i ? ", " : "") + (types[i]->*print)();
  }
  return out;
}
} // namespace

Type::Type(TypeKind k, std::vector<TypePtr> contained, std::string name)
    : kind_(k),
      elem_(nullptr),
      contained_(std::move(contained)),
      name_(std::move(name)) {
  switch (k) {
    case TypeKind::Optional:
    case TypeKind::List:
    case TypeKind::Future:
    case TypeKind::Await:
    case TypeKind::RRef:
      elem_ = contained_.at(0);
      break;
    default:
      break;
  }
}

TypePtr Type::intern(TypeKind kind, std::vector<TypePtr> contained, std::string name) {
  std::lock_guard<std::mutex> g(internMutex());
  auto& slot = internTable()[InternKey(kind, contained, name)];
  if (!slot) {
    slot = new Type(kind, std::move(contained), std::move(name));
  }
  return slot;
}

TypePtr Type::get(TypeKind kind) {
  static const Type* bases = [] {
    auto* arr = static_cast<Type*>(::operator new(sizeof(Type) * kNumBaseKinds));
    for (int k = 0; k < kNumBaseKinds; ++k) {
      new (&arr[k]) Type(static_cast<TypeKind>(k), {}, "");
    }
    return arr;
  }();
  OPDISPATCH_CHECK(static_cast<int>(kind) < kNumBaseKinds, "Type::get(", info(kind).kindName, "): not a base type");
  return &bases[static_cast<int>(kind)];
}

// Note [Derived type caches]
// Schemas write `T?` and `T[]` of a few types over and over (Tensor?,
// int[], Tensor?[], SymInt[]?); each is interned once, and the type it is
// built from remembers it, so that parsing one costs a load instead of a
// lock, a vector and a map lookup. Racing threads intern the same type and
// store the same pointer.
template <class Make>
TypePtr Type::cached(std::atomic<TypePtr>& cache, Make make) const {
  TypePtr t = cache.load(std::memory_order_acquire);
  if (!t) {
    t = make();
    cache.store(t, std::memory_order_release);
  }
  return t;
}

TypePtr Type::optionalOf(TypePtr elem) {
  if (elem->isOptional()) {
    return elem;
  }
  if (elem->kind() == TypeKind::NoneType) {
    throw ValueError("NoneType? is not a type: NoneType already admits only None");
  }
  return elem->cached(elem->optional_, [&] { return intern(TypeKind::Optional, {elem}, ""); });
}

TypePtr Type::listOf(TypePtr elem) {
  return elem->cached(elem->list_, [&] { return intern(TypeKind::List, {elem}, ""); });
}

TypePtr Type::tupleOf(std::vector<TypePtr> elems) { return intern(TypeKind::Tuple, std::move(elems), ""); }

TypePtr Type::dictOf(TypePtr key, TypePtr value) {
  switch (key->kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Complex:
    case TypeKind::Str:
    case TypeKind::Tensor:
    case TypeKind::Device:
      return intern(TypeKind::Dict, {key, value}, "");
    default:
      throw ValueError(detail::str("cannot create a dict with key type '", key->toString(),
                                   "': only int, float, complex, Tensor, Device and str keys are supported"));
  }
}

TypePtr Type::futureOf(TypePtr elem) { return intern(TypeKind::Future, {elem}, ""); }
TypePtr Type::awaitOf(TypePtr elem) { return intern(TypeKind::Await, {elem}, ""); }
TypePtr Type::rrefOf(TypePtr elem) { return intern(TypeKind::RRef, {elem}, ""); }

TypePtr Type::var(const std::string& name) { return intern(TypeKind::Var, {}, name); }

TypePtr Type::unionOf(const std::vector<TypePtr>& members) {
  // Note [Union normalisation]
  // As PyTorch (UnionType::create): members are flattened (a nested union's
  // members, an optional's element and NoneType), duplicates and members
  // that are subtypes of another member dropped, and the rest ordered by
  // PyTorch's TypeKind order, so that equal unions are one interned type.
  std::vector<TypePtr> flat;
  auto add = [&](auto& self, TypePtr t) -> void {
    if (t->kind() == TypeKind::Union) {
      for (TypePtr m : t->containedTypes()) {
        self(self, m);
      }
    } else if (t->isOptional()) {
      self(self, t->elem());
      self(self, get(TypeKind::NoneType));
    } else if (std::find(flat.begin(), flat.end(), t) == flat.end()) {
      flat.push_back(t);
    }
  };
  for (TypePtr m : members) {
    add(add, m);
  }
  std::vector<TypePtr> kept;
  for (size_t i = 0; i < flat.size(); ++i) {
    bool subsumed = false;
    for (size_t j = 0; j < flat.size() && !subsumed; ++j) {
      subsumed = i != j && flat[i]->isSubtypeOf(flat[j]);
    }
    if (!subsumed) {
      kept.push_back(flat[i]);
    }
  }
  std::stable_sort(kept.begin(), kept.end(),
                   [](TypePtr a, TypePtr b) { return info(a->kind()).unionOrder < info(b->kind()).unionOrder; });
  if (kept.size() < 2) {
    std::string written = join(members, &Type::toString);
    throw ValueError(detail::str("Union(", written, ") is ",
                                 kept.empty() ? "empty" : "a single type '" + kept[0]->toString() + "'",
                                 ": write the type itself, or a union of two or "
                                 "more distinct types"));
  }
  TypePtr none = get(TypeKind::NoneType);
  if (kept.size() == 2 && (kept[0] == none || kept[1] == none)) {
    return optionalOf(kept[0] == none ? kept[1] : kept[0]);
  }
  return intern(TypeKind::Union, std::move(kept), "");
}

TypePtr Type::fromName(std::string_view name) {
  // (Lengths computed once: most names differ in length, so a lookup is a few compares.)
  static constexpr auto kBaseNames = [] {
    std::array<std::string_view, kNumBaseKinds> names{};
    for (int k = 0; k < kNumBaseKinds; ++k) {
      names[k] = kKinds[k].schemaName;
    }
    return names;
  }();
  for (int k = 0; k < kNumBaseKinds; ++k) {
    if (name == kBaseNames[k]) {
      return get(static_cast<TypeKind>(k));
    }
  }
  for (const auto& a : kAliases) {
    if (name == a.name) {
      return get(a.kind);
    }
  }
  return nullptr;
}

bool Type::isTensorLike() const {
  switch (kind_) {
    case TypeKind::Tensor:
      return true;
    case TypeKind::Optional:
    case TypeKind::List:
      return elem_->isTensorLike();
    default:
      return false;
  }
}

std::string Type::toString() const {
  switch (kind_) {
    case TypeKind::Optional:
      return elem_->toString() + "?";
    case TypeKind::List:
      return elem_->toString() + "[]";
    case TypeKind::Tuple:
      return "(" + join(contained_, &Type::toString) + ")";
    case TypeKind::Var:
      return name_;
    default:
      if (contained_.empty()) {
        return info(kind_).schemaName;
      }
      return std::string(info(kind_).schemaName) + "(" + join(contained_, &Type::toString) + ")";
  }
}

std::string Type::annotationStr() const {
  switch (kind_) {
    case TypeKind::Tuple:
      return "Tuple[" + (contained_.empty() ? std::string("()") : join(contained_, &Type::annotationStr)) + "]";
    case TypeKind::Var:
      return name_;
    default:
      if (contained_.empty()) {
        return info(kind_).annotation;
      }
      return std::string(info(kind_).annotation) + "[" + join(contained_, &Type::annotationStr) + "]";
  }
}

const char* Type::kindName() const { return info(kind_).kindName; }

TypePtr Type::fakeType() const {
  switch (kind_) {
    case TypeKind::SymInt:
    case TypeKind::ScalarType:
    case TypeKind::Layout:
    case TypeKind::MemoryFormat:
      return int_();
    case TypeKind::Optional:
      return optionalOf(elem_->fakeType());
    case TypeKind::List:
      return listOf(elem_->fakeType());
    default:
      return this;
  }
}

bool Type::isSubtypeOf(TypePtr other) const {
  if (this == other || other->kind_ == TypeKind::Any) {
    return true;
  }
  switch (other->kind_) {
    case TypeKind::Optional:
      if (kind_ == TypeKind::NoneType) {
        return true;
      }
      return (isOptional() ? elem_ : this)->isSubtypeOf(other->elem_);
    case TypeKind::Union:
      if (kind_ == TypeKind::Union) {
        return std::all_of(contained_.begin(), contained_.end(), [&](TypePtr m) { return m->isSubtypeOf(other); });
      }
      if (isOptional()) {
        return get(TypeKind::NoneType)->isSubtypeOf(other) && elem_->isSubtypeOf(other);
      }
      return std::any_of(other->contained_.begin(), other->contained_.end(), [&](TypePtr m) { return isSubtypeOf(m); });
    case TypeKind::Scalar:
      return kind_ == TypeKind::Int || kind_ == TypeKind::Float || kind_ == TypeKind::Complex;
    case TypeKind::Tuple:
    case TypeKind::Future:
    case TypeKind::Await:
      // Covariant in their elements (PyTorch: TupleType, FutureType, AwaitType).
      return kind_ == other->kind_ &&
             pairwise(contained_, other->contained_, [](TypePtr a, TypePtr b) { return a->isSubtypeOf(b); });
    default:
      return false;
  }
}

bool Type::acceptsInferred(TypePtr inferred) const {
  if (this == inferred) {
    return true;
  }
  if (kind_ != inferred->kind_) {
    return kind_ == TypeKind::SymInt && inferred->kind_ == TypeKind::Int;
  }
  return name_ == inferred->name_ &&
         pairwise(contained_, inferred->contained_, [](TypePtr a, TypePtr b) { return a->acceptsInferred(b); });
}

std::ostream& operator<<(std::ostream& os, TypePtr t) { return os << t->toString(); }

} // namespace opdispatch
