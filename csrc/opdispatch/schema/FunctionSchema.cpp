// FunctionSchema, Argument, AliasInfo and OperatorName: equality and
// PyTorch's printing (c10 function_schema.cpp, alias_info.h).
#include <opdispatch/schema/FunctionSchema.h>

#include <algorithm>
#include <sstream>

namespace opdispatch {

namespace {

bool sameSet(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  return std::all_of(a.begin(), a.end(), [&](const std::string& s) { return contains(b, s); }) &&
         std::all_of(b.begin(), b.end(), [&](const std::string& s) { return contains(a, s); });
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
void printAnnotatedType(std::ostream& os, TypePtr type, const AliasInfo* alias,
                        std::optional<int32_t> N) {
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
      const AliasInfo* elemAlias =
          alias && !alias->contained_types.empty() ? &alias->contained_types[0] : nullptr;
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
// native_functions.yaml uses); everything else as IValue prints it.
// Three deliberate differences, each where PyTorch's text does not parse back
// to the same value:
//  - PyTorch also shortens lists of another length, or without N
//    (`int[] x=[1, 1]` -> `int[] x=1`); we print those in full.
//  - A double that prints like an integer (integral, >= 1e10) gets a
//    trailing '.' unless the type is `float`, where the parser converts ints.
//  - Device defaults are quoted (`Device d="cpu"`), as the parser reads them.
void printDefault(std::ostream& os, const Argument& arg) {
  const IValue& value = *arg.default_value();
  TypePtr type = arg.type();
  TypePtr unopt = type->unwrapOptional();
  if (value.isString() && unopt->kind() == TypeKind::Str) {
    printQuotedString(os, value.toStringRef());
    return;
  }
  if (value.isIntList() && type->isList() && type->elem()->kind() == TypeKind::Int) {
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
  std::ostringstream text;
  text << value;
  os << text.str();
  if (value.isDouble() && type->kind() != TypeKind::Float &&
      text.str().find_first_not_of("-0123456789") == std::string::npos) {
    os << ".";
  }
}

} // namespace

std::string OperatorName::getNamespace() const {
  auto sep = name.find("::");
  return sep == std::string::npos ? std::string() : name.substr(0, sep);
}

std::string OperatorName::toString() const {
  return overload_name.empty() ? name : name + "." + overload_name;
}

std::ostream& operator<<(std::ostream& os, const OperatorName& n) { return os << n.toString(); }

bool AliasInfo::operator==(const AliasInfo& o) const {
  return is_write == o.is_write && sameSet(before_set, o.before_set) &&
         sameSet(after_set, o.after_set) && contained_types == o.contained_types;
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

bool Argument::operator==(const Argument& o) const {
  bool sameDefault = default_value_.has_value() == o.default_value_.has_value() &&
                     (!default_value_ || default_value_->equals(*o.default_value_));
  return name_ == o.name_ && type_ == o.type_ && N_ == o.N_ && sameDefault &&
         kwarg_only_ == o.kwarg_only_ && alias_info_ == o.alias_info_;
}

std::ostream& operator<<(std::ostream& os, const Argument& a) {
  printAnnotatedType(os, a.type(), a.alias_info() ? &*a.alias_info() : nullptr, a.N());
  if (!a.name().empty()) {
    os << " " << a.name();
  }
  if (a.default_value()) {
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

FunctionSchema FunctionSchema::cloneWithName(OperatorName name) const {
  return FunctionSchema(std::move(name), arguments_, returns_);
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
  os << ") -> ";
  // PyTorch: one return prints bare unless its text starts with '(' (which
  // the parser would read as a return list).
  if (returns_.size() == 1) {
    std::ostringstream ret;
    ret << returns_[0];
    bool paren = !ret.str().empty() && ret.str()[0] == '(';
    os << (paren ? "(" : "") << ret.str() << (paren ? ")" : "");
  } else {
    os << "(";
    for (size_t i = 0; i < returns_.size(); ++i) {
      os << (i ? ", " : "") << returns_[i];
    }
    os << ")";
  }
  return os.str();
}

std::string FunctionSchema::toString() const { return name_.toString() + signatureString(); }

bool FunctionSchema::operator==(const FunctionSchema& o) const {
  return name_ == o.name_ && arguments_ == o.arguments_ && returns_ == o.returns_;
}

std::ostream& operator<<(std::ostream& os, const FunctionSchema& s) { return os << s.toString(); }

} // namespace opdispatch
