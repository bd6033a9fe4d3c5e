// Interned Type objects.
#include <opdispatch/schema/Type.h>

#include <map>
#include <mutex>

namespace opdispatch {

namespace {
struct BaseTypeName {
  TypeKind kind;
  const char* name;
};
constexpr BaseTypeName kBaseNames[] = {
    {TypeKind::Tensor, "Tensor"},     {TypeKind::Int, "int"},
    {TypeKind::SymInt, "SymInt"},     {TypeKind::Float, "float"},
    {TypeKind::Bool, "bool"},         {TypeKind::SymBool, "SymBool"},
    {TypeKind::Str, "str"},
    {TypeKind::Scalar, "Scalar"},     {TypeKind::ScalarType, "ScalarType"},
    {TypeKind::Device, "Device"},     {TypeKind::Layout, "Layout"},
    {TypeKind::MemoryFormat, "MemoryFormat"}, {TypeKind::QScheme, "QScheme"},
    {TypeKind::Generator, "Generator"},
    {TypeKind::Any, "Any"},
};

// The caches are never destroyed: interned types live for the whole process,
// and a destroyed cache would leave them unreachable (a leak to LeakSanitizer).
using InternCache = std::map<TypePtr, const Type*>;

std::mutex& internMutex() {
  static std::mutex m;
  return m;
}
} // namespace

TypePtr Type::get(TypeKind kind) {
  static const Type* bases = [] {
    auto* arr = static_cast<Type*>(::operator new(sizeof(Type) * (static_cast<int>(TypeKind::Any) + 1)));
    for (int k = 0; k <= static_cast<int>(TypeKind::Any); ++k) {
      new (&arr[k]) Type(static_cast<TypeKind>(k), nullptr);
    }
    return arr;
  }();
  return &bases[static_cast<int>(kind)];
}

TypePtr Type::optionalOf(TypePtr elem) {
  static auto* cache = new InternCache();
  std::lock_guard<std::mutex> g(internMutex());
  auto& slot = (*cache)[elem];
  if (!slot) {
    slot = new Type(TypeKind::Optional, elem);
  }
  return slot;
}

TypePtr Type::listOf(TypePtr elem) {
  static auto* cache = new InternCache();
  std::lock_guard<std::mutex> g(internMutex());
  auto& slot = (*cache)[elem];
  if (!slot) {
    slot = new Type(TypeKind::List, elem);
  }
  return slot;
}

TypePtr Type::fromName(const std::string& name) {
  for (const auto& b : kBaseNames) {
    if (name == b.name) {
      return get(b.kind);
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
    default:
      for (const auto& b : kBaseNames) {
        if (b.kind == kind_) {
          return b.name;
        }
      }
      return "?";
  }
}

bool Type::acceptsInferred(TypePtr inferred) const {
  if (this == inferred) {
    return true;
  }
  if (kind_ != inferred->kind_) {
    return kind_ == TypeKind::SymInt && inferred->kind_ == TypeKind::Int;
  }
  return elem_ && inferred->elem_ && elem_->acceptsInferred(inferred->elem_);
}

std::ostream& operator<<(std::ostream& os, TypePtr t) { return os << t->toString(); }

} // namespace opdispatch
