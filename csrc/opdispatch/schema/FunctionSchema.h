// FunctionSchema: an operator's name, arguments and returns as written in a
// schema string `ns::name.overload(Type name=default, *, ...) -> Returns`,
// with PyTorch's printing so that print(parse(s)) == s for PyTorch-printed s.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <opdispatch/core/IValue.h>
#include <opdispatch/schema/Type.h>

namespace opdispatch {

/// "ns::name" plus an overload name ("" for the default overload).
struct OperatorName {
  std::string name;
  std::string overload_name;

  OperatorName() = default;
  OperatorName(std::string n, std::string o) : name(std::move(n)), overload_name(std::move(o)) {}
  /// The namespace: the part of `name` before "::" ("" if none).
  std::string getNamespace() const;
  /// "ns::name" or "ns::name.overload".
  std::string toString() const;
  bool operator==(const OperatorName& o) const { return name == o.name && overload_name == o.overload_name; }
  bool operator!=(const OperatorName& o) const { return !(*this == o); }
};
std::ostream& operator<<(std::ostream& os, const OperatorName& n);

/// An alias annotation: `(a)`, `(a!)`, `(a -> *)`, `(b|a)`. Sets keep the
/// order they were written in (for printing) and compare as sets.
/// PyTorch: c10::AliasInfo.
struct AliasInfo {
  std::vector<std::string> before_set; ///< alias set names; "*" is the wildcard
  std::vector<std::string> after_set;
  bool is_write = false;
  /// For a list argument `Tensor(a)[]`: the annotation of its elements.
  std::vector<AliasInfo> contained_types;

  bool operator==(const AliasInfo& o) const;
  bool operator!=(const AliasInfo& o) const { return !(*this == o); }
};
/// Prints "(a)", "(a!)", "(a -> *)", "(b|a)".
std::ostream& operator<<(std::ostream& os, const AliasInfo& a);

/// One argument or return of a schema. PyTorch: c10::Argument.
class Argument {
 public:
  Argument(std::string name, TypePtr type, std::optional<int32_t> N = std::nullopt,
           std::optional<IValue> default_value = std::nullopt, bool kwarg_only = false,
           std::optional<AliasInfo> alias_info = std::nullopt)
      : name_(std::move(name)),
        type_(type),
        N_(N),
        default_value_(std::move(default_value)),
        kwarg_only_(kwarg_only),
        alias_info_(std::move(alias_info)) {}

  const std::string& name() const { return name_; }
  TypePtr type() const { return type_; }
  /// The fixed length of a list type written `T[N]`.
  std::optional<int32_t> N() const { return N_; }
  const std::optional<IValue>& default_value() const { return default_value_; }
  bool kwarg_only() const { return kwarg_only_; }
  const std::optional<AliasInfo>& alias_info() const { return alias_info_; }
  /// Whether the argument is annotated as written to (`Tensor(a!)`).
  bool is_write() const { return alias_info_ && alias_info_->is_write; }

  bool operator==(const Argument& o) const;
  bool operator!=(const Argument& o) const { return !(*this == o); }

 private:
  std::string name_;
  TypePtr type_;
  std::optional<int32_t> N_;
  std::optional<IValue> default_value_;
  bool kwarg_only_;
  std::optional<AliasInfo> alias_info_;
};
/// Prints as PyTorch: `Tensor(a!) out`, `int[2] stride=1`, `str mode="linear"`.
std::ostream& operator<<(std::ostream& os, const Argument& a);

class FunctionSchema {
 public:
  FunctionSchema(OperatorName name, std::vector<Argument> arguments, std::vector<Argument> returns)
      : name_(std::move(name)), arguments_(std::move(arguments)), returns_(std::move(returns)) {}

  const OperatorName& operator_name() const { return name_; }
  const std::string& name() const { return name_.name; }
  const std::string& overload_name() const { return name_.overload_name; }
  std::string getNamespace() const { return name_.getNamespace(); }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  /// Index of the argument called `name`, if any.
  std::optional<size_t> argumentIndexWithName(const std::string& name) const;
  /// Whether any argument is annotated as written to.
  bool isMutable() const;
  /// The same schema under another name.
  FunctionSchema cloneWithName(OperatorName name) const;

  /// The canonical text: `ns::name.overload(args) -> returns`.
  std::string toString() const;
  /// The text without the name: `(Tensor _0) -> Tensor _0` (how inferred
  /// schemas of C++ kernels are shown).
  std::string signatureString() const;

  bool operator==(const FunctionSchema& o) const;
  bool operator!=(const FunctionSchema& o) const { return !(*this == o); }

 private:
  OperatorName name_;
  std::vector<Argument> arguments_;
  std::vector<Argument> returns_;
};
std::ostream& operator<<(std::ostream& os, const FunctionSchema& s);

} // namespace opdispatch

template <>
struct std::hash<opdispatch::OperatorName> {
  size_t operator()(const opdispatch::OperatorName& n) const {
    return std::hash<std::string>()(n.name) ^ (std::hash<std::string>()(n.overload_name) * 31);
  }
};
