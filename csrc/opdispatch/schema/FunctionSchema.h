// FunctionSchema: an operator's name, arguments and returns as written in a
// schema string `ns::name.overload(Type name=default, *, ...) -> Returns`,
// with PyTorch's printing so that print(parse(s)) == s for PyTorch-printed s.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

/// An alias annotation: `(a)`, `(a!)`, `(a -> *)`, `(b|a)`, and `!` (a fresh
/// set `$<k>`, written to, with an empty after_set). Sets keep the order they
/// were written in (for printing) and compare as sets. PyTorch: c10::AliasInfo.
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

// Note [Compact arguments]
// Every operator keeps its schema's Arguments for its lifetime, and most
// arguments carry no alias annotation: an inline std::optional<AliasInfo>
// (88 bytes) made each Argument 184 bytes, so the one-argument, one-return
// schema of a small custom operator took two 192-byte blocks. The
// annotation lives out of line (immutable, shared by copies), which brings
// an Argument to 120 bytes.

/// One argument or return of a schema. PyTorch: c10::Argument.
class Argument {
 public:
  /// The default `T[N] x=v` of a fixed-size list: v repeated N times, kept
  /// as (v, N) until first used. See Note [Broadcast defaults].
  struct BroadcastDefault {
    IValue element; ///< an int, double, bool or string
    int32_t n;
  };

  Argument(std::string name, TypePtr type, std::optional<int32_t> N = std::nullopt,
           std::optional<IValue> default_value = std::nullopt, bool kwarg_only = false,
           std::optional<AliasInfo> alias_info = std::nullopt)
      : name_(std::move(name)),
        type_(type),
        N_(N),
        default_value_(std::move(default_value)),
        kwarg_only_(kwarg_only),
        alias_info_(shareAliasInfo(std::move(alias_info))) {}
  Argument(std::string name, TypePtr type, std::optional<int32_t> N, BroadcastDefault default_value, bool kwarg_only,
           std::optional<AliasInfo> alias_info);

  const std::string& name() const { return name_; }
  TypePtr type() const { return type_; }
  /// The fixed length of a list type written `T[N]`.
  std::optional<int32_t> N() const { return N_; }
  bool has_default_value() const { return default_value_.has_value() || broadcast_; }
  /// The default value; a broadcast default is materialised here, once.
  const std::optional<IValue>& default_value() const { return broadcast_ ? materializeBroadcast() : default_value_; }
  /// The default as written `T[N] x=v`, if it is one (without materialising it).
  const BroadcastDefault* broadcastDefault() const;
  bool kwarg_only() const { return kwarg_only_; }
  /// The alias annotation (`Tensor(a!)`), or null.
  const AliasInfo* alias_info() const { return alias_info_.get(); }
  /// Whether the argument is annotated as written to (`Tensor(a!)`).
  bool is_write() const { return alias_info_ && alias_info_->is_write; }

  bool operator==(const Argument& o) const;
  bool operator!=(const Argument& o) const { return !(*this == o); }

 private:
  struct LazyBroadcast;
  const std::optional<IValue>& materializeBroadcast() const;
  static std::shared_ptr<const AliasInfo> shareAliasInfo(std::optional<AliasInfo> info) {
    return info ? std::make_shared<const AliasInfo>(std::move(*info)) : nullptr;
  }

  std::string name_;
  TypePtr type_;
  std::optional<int32_t> N_;
  std::optional<IValue> default_value_; ///< empty when broadcast_ is set
  /// A broadcast default; shared (immutable once materialised) by copies.
  std::shared_ptr<LazyBroadcast> broadcast_;
  bool kwarg_only_;
  /// Null for an argument without annotation (most): kept out of line,
  /// shared by copies (Note [Compact arguments]).
  std::shared_ptr<const AliasInfo> alias_info_;
};
/// Prints as PyTorch: `Tensor(a!) out`, `int[2] stride=1`, `str mode="linear"`.
std::ostream& operator<<(std::ostream& os, const Argument& a);

class FunctionSchema {
 public:
  /// `is_vararg` / `is_varret`: the arguments / returns end with `...`
  /// (any number of further values).
  FunctionSchema(OperatorName name, std::vector<Argument> arguments, std::vector<Argument> returns,
                 bool is_vararg = false, bool is_varret = false)
      : name_(std::move(name)),
        arguments_(std::move(arguments)),
        returns_(std::move(returns)),
        is_vararg_(is_vararg),
        is_varret_(is_varret) {}

  const OperatorName& operator_name() const { return name_; }
  const std::string& name() const { return name_.name; }
  const std::string& overload_name() const { return name_.overload_name; }
  std::string getNamespace() const { return name_.getNamespace(); }
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::vector<Argument>& returns() const { return returns_; }
  bool is_vararg() const { return is_vararg_; }
  bool is_varret() const { return is_varret_; }
  /// Index of the argument called `name`, if any.
  std::optional<size_t> argumentIndexWithName(const std::string& name) const;
  /// Whether any argument is annotated as written to.
  bool isMutable() const;
  /// The same schema under another name.
  FunctionSchema cloneWithName(OperatorName name) const&;
  /// The same schema under another name, taking this one's arguments and returns.
  FunctionSchema cloneWithName(OperatorName name) &&;

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
  bool is_vararg_;
  bool is_varret_;
};
std::ostream& operator<<(std::ostream& os, const FunctionSchema& s);

} // namespace opdispatch

template <>
struct std::hash<opdispatch::OperatorName> {
  size_t operator()(const opdispatch::OperatorName& n) const {
    return std::hash<std::string>()(n.name) ^ (std::hash<std::string>()(n.overload_name) * 31);
  }
};
