// FunctionSchema, Argument, AliasInfo and OperatorName: equality and
// PyTorch's printing (c10 function_schema.cpp, alias_info.h).
#include <opdispatch/schema/FunctionSchema.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <sstream>
#include <string_view>
#include <unordered_set>

namespace opdispatch {

namespace {

// Sets hold no duplicates (the parser drops them), so equal sizes and one
// inclusion make them equal. Linear through a hash set: alias sets can be
// as long as the schema text (Note [Parser resource bounds]).
bool sameSet(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  if (a == b) {
    return true;
  }
  std::unordered_set<std::string_view> inA(a.begin(), a.end());
  return std::all_of(b.begin(), b.end(), [&](const std::string& s) { return inA.count(s) != 0; });
}

void printSet(std::ostream& os, const std::vector<std::string>& set) {
  for (size_t i = 0; i < set.size(); ++i) {
    os << (i ? "|" : "") << set[i];
  }
}

// Note [Printing alias annotations of lists]
// The parser attaches an annotation to the base type and to every list level
// (`Tensor(a)[](b)`); an annotation on a list's elements becomes the list's
// AliasInfo with the element annotation in contained_types[0] and an empty
// before_set if the list itself had none. PyTorch prints the top level only:
// `<elem type><contained_types[0]>[N]<alias if before_set>?`. We print every
// level in the order it was written, which gives PyTorch's text for every
// schema PyTorch can parse back, and readable text where PyTorch's is not
// (`Tensor(a)?[]`, which PyTorch prints as `Tensor?(a)[]`; nested lists).
void printAnnotatedType(std::ostream& os, TypePtr type, const AliasInfo* alias, std::optional<int32_t> N) {
  auto printOwnAlias = [&] {
    if (alias && !alias->before_set.empty()) {
      os << *alias;
    }
  };
  switch (type->kind()) {
    case TypeKind::Optional:
      printAnnotatedType(os, type->elem(), alias, N);
      os << "?";
      return;
    case TypeKind::List: {
      const AliasInfo* elemAlias = alias && !alias->contained_types.empty() ? &alias->contained_types[0] : nullptr;
      printAnnotatedType(os, type->elem(), elemAlias, std::nullopt);
      os << "[";
      if (N) {
        os << *N;
      }
      os << "]";
      printOwnAlias();
      return;
    }
    default:
      os << type->toString();
      printOwnAlias();
  }
}

// Note [Printing default values]
// As PyTorch (operator<<(Argument)): strings quoted; an `int[N]` default of N
// equal elements (N > 1) as the single number (`int[2] stride=1`, the form
// native_functions.yaml uses; only for int, not SymInt or enum lists);
// doubles as PyTorch 2.13 prints them: integral values that fit an int64 as
// `<int>.` (`1e16` is `10000000000000000.`, `-0.` is `0.`), others with 17
// significant digits; everything else as IValue prints it. Deliberate
// differences, each where PyTorch's text does not parse back to the same
// value:
//  - PyTorch also shortens lists of another length, or without N
//    (`int[] x=[1, 1]` -> `int[] x=1`); we print those in full.
//  - Device defaults are quoted (`Device d="cpu"`), as the parser reads them.
//  - inf and nan (which we accept) print as `inf`, `-inf`, `nan`.
void printDouble(std::ostream& os, double d) {
  if (std::isnan(d)) {
    os << "nan";
  } else if (std::isinf(d)) {
    os << (d < 0 ? "-inf" : "inf");
  } else if (d == std::trunc(d) && std::abs(d) < 9.2e18) {
    os << static_cast<int64_t>(d) << ".";
  } else {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", d);
    os << buf;
  }
}

void printElement(std::ostream& os, const IValue& v) {
  if (v.isDouble()) {
    printDouble(os, v.toDouble());
  } else if (v.isString()) {
    printQuotedString(os, v.toStringRef());
  } else {
    os << v;
  }
}

void printDefault(std::ostream& os, const Argument& arg) {
  TypePtr type = arg.type();
  TypePtr list = type->unwrapOptional();
  bool intList = list->isList() && list->elem()->kind() == TypeKind::Int;
  if (const auto* b = arg.broadcastDefault()) {
    // As the materialised list would print, without materialising it.
    if (intList && b->n > 1) {
      printElement(os, b->element);
      return;
    }
    os << "[";
    for (int32_t i = 0; i < b->n; ++i) {
      os << (i ? ", " : "");
      printElement(os, b->element);
    }
    os << "]";
    return;
  }
  const IValue& value = *arg.default_value();
  if (value.isIntList() && intList) {
    const auto& elems = value.toIntList();
    bool allSame = std::all_of(elems.begin(), elems.end(), [&](int64_t e) { return e == elems[0]; });
    if (elems.size() > 1 && allSame && arg.N() && static_cast<size_t>(*arg.N()) == elems.size()) {
      os << elems[0];
      return;
    }
  }
  if (value.isDevice()) {
    printQuotedString(os, value.toDevice().str());
    return;
  }
  if (value.isList()) {
    const auto elems = value.toListOfIValues();
    os << "[";
    for (size_t i = 0; i < elems.size(); ++i) {
      os << (i ? ", " : "");
      printElement(os, elems[i]);
    }
    os << "]";
    return;
  }
  printElement(os, value);
}

} // namespace

std::string OperatorName::getNamespace() const {
  auto sep = name.find("::");
  return sep == std::string::npos ? std::string() : name.substr(0, sep);
}

std::string OperatorName::toString() const { return overload_name.empty() ? name : name + "." + overload_name; }

std::ostream& operator<<(std::ostream& os, const OperatorName& n) { return os << n.toString(); }

bool AliasInfo::operator==(const AliasInfo& o) const {
  return is_write == o.is_write && sameSet(before_set, o.before_set) && sameSet(after_set, o.after_set) &&
         contained_types == o.contained_types;
}

std::ostream& operator<<(std::ostream& os, const AliasInfo& a) {
  os << "(";
  printSet(os, a.before_set);
  if (a.is_write) {
    os << "!";
  }
  if (!sameSet(a.before_set, a.after_set)) {
    os << " -> ";
    printSet(os, a.after_set);
  }
  return os << ")";
}

// Note [Broadcast defaults]
// `int[N] x=v` means N copies of v. A schema keeps (v, N), so that parsing
// holds memory proportional to the text (1,000 schemas with
// `int[65536] x=1` would otherwise hold ~480 MiB); the list is built on the
// first call of default_value() (under std::call_once, so concurrent calls
// see one list) and shared by every copy of the Argument. Printing and
// equality use (v, N) and never build it.
struct Argument::LazyBroadcast {
  BroadcastDefault compact;
  std::once_flag once;
  std::optional<IValue> value;
};

Argument::Argument(std::string name, TypePtr type, std::optional<int32_t> N, BroadcastDefault default_value,
                   bool kwarg_only, std::optional<AliasInfo> alias_info)
    : name_(std::move(name)),
      type_(type),
      N_(N),
      broadcast_(std::make_shared<LazyBroadcast>()),
      kwarg_only_(kwarg_only),
      alias_info_(shareAliasInfo(std::move(alias_info))) {
  OPDISPATCH_CHECK(default_value.n >= 0, "broadcast default of argument '", name_, "' has negative length");
  broadcast_->compact = std::move(default_value);
}

const Argument::BroadcastDefault* Argument::broadcastDefault() const {
  return broadcast_ ? &broadcast_->compact : nullptr;
}

const std::optional<IValue>& Argument::materializeBroadcast() const {
  LazyBroadcast& b = *broadcast_;
  std::call_once(b.once, [&b] {
    const IValue& e = b.compact.element;
    auto n = static_cast<size_t>(b.compact.n);
    if (e.isInt()) {
      b.value = IValue(std::vector<int64_t>(n, e.toInt()));
    } else if (e.isDouble()) {
      b.value = IValue(std::vector<double>(n, e.toDouble()));
    } else if (e.isBool()) {
      b.value = IValue(std::vector<bool>(n, e.toBool()));
    } else {
      b.value = IValue::genericList(std::vector<IValue>(n, e));
    }
  });
  return b.value;
}

namespace {
/// Whether the list `value` is `b.n` copies of `b.element`.
bool equalsBroadcast(const IValue& value, const Argument::BroadcastDefault& b) {
  if (!value.isList() || value.listSize() != static_cast<size_t>(b.n)) {
    return false;
  }
  const auto elems = value.toListOfIValues();
  return std::all_of(elems.begin(), elems.end(), [&](const IValue& e) { return e.equals(b.element); });
}

bool sameDefault(const Argument& a, const Argument& b) {
  if (a.has_default_value() != b.has_default_value()) {
    return false;
  }
  if (!a.has_default_value()) {
    return true;
  }
  const auto* ba = a.broadcastDefault();
  const auto* bb = b.broadcastDefault();
  if (ba && bb) {
    return ba->n == bb->n && ba->element.equals(bb->element);
  }
  if (ba || bb) {
    return ba ? equalsBroadcast(*b.default_value(), *ba) : equalsBroadcast(*a.default_value(), *bb);
  }
  return a.default_value()->equals(*b.default_value());
}
} // namespace

bool Argument::operator==(const Argument& o) const {
  return name_ == o.name_ && type_ == o.type_ && N_ == o.N_ && sameDefault(*this, o) && kwarg_only_ == o.kwarg_only_ &&
         (alias_info_ == nullptr ? o.alias_info_ == nullptr
                                 : o.alias_info_ != nullptr && *alias_info_ == *o.alias_info_);
}

std::ostream& operator<<(std::ostream& os, const Argument& a) {
  printAnnotatedType(os, a.type(), a.alias_info(), a.N());
  if (!a.name().empty()) {
    os << " " << a.name();
  }
  if (a.has_default_value()) {
    os << "=";
    printDefault(os, a);
  }
  return os;
}

std::optional<size_t> FunctionSchema::argumentIndexWithName(const std::string& name) const {
  for (size_t i = 0; i < arguments_.size(); ++i) {
    if (arguments_[i].name() == name) {
      return i;
    }
  }
  return std::nullopt;
}

bool FunctionSchema::isMutable() const {
  return std::any_of(arguments_.begin(), arguments_.end(), [](const Argument& a) { return a.is_write(); });
}

FunctionSchema FunctionSchema::cloneWithName(OperatorName name) const& {
  return FunctionSchema(std::move(name), arguments_, returns_, is_vararg_, is_varret_);
}

FunctionSchema FunctionSchema::cloneWithName(OperatorName name) && {
  return FunctionSchema(std::move(name), std::move(arguments_), std::move(returns_), is_vararg_, is_varret_);
}

std::string FunctionSchema::signatureString() const {
  std::ostringstream os;
  os << "(";
  bool seenKwargOnly = false;
  for (size_t i = 0; i < arguments_.size(); ++i) {
    os << (i ? ", " : "");
    if (arguments_[i].kwarg_only() && !seenKwargOnly) {
      os << "*, ";
      seenKwargOnly = true;
    }
    os << arguments_[i];
  }
  if (is_vararg_) {
    os << (arguments_.empty() ? "..." : ", ...");
  }
  os << ") -> ";
  // PyTorch: one return prints bare unless its text starts with '(' (which
  // the parser would read as a return list); varrets print as `...` alone or
  // last in the list.
  if (is_varret_ && returns_.empty()) {
    os << "...";
  } else if (returns_.size() == 1 && !is_varret_) {
    std::ostringstream ret;
    ret << returns_[0];
    bool paren = !ret.str().empty() && ret.str()[0] == '(';
    os << (paren ? "(" : "") << ret.str() << (paren ? ")" : "");
  } else {
    os << "(";
    for (size_t i = 0; i < returns_.size(); ++i) {
      os << (i ? ", " : "") << returns_[i];
    }
    os << (is_varret_ ? ", ...)" : ")");
  }
  return os.str();
}

std::string FunctionSchema::toString() const { return name_.toString() + signatureString(); }

bool FunctionSchema::operator==(const FunctionSchema& o) const {
  return name_ == o.name_ && arguments_ == o.arguments_ && returns_ == o.returns_ && is_vararg_ == o.is_vararg_ &&
         is_varret_ == o.is_varret_;
}

std::ostream& operator<<(std::ostream& os, const FunctionSchema& s) { return os << s.toString(); }

} // namespace opdispatch
