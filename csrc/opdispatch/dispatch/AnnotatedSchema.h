// AnnotatedSchema: an operator's declared schema with its registration site,
// tags, and the argument positions calls need, computed once per definition.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <opdispatch/core/InternedString.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {

/// What a call needs to know about one argument, packed: binding a call
/// reads these instead of the (large) Argument objects.
struct ArgumentInfo {
  /// The kind of the argument's type, one Optional unwrapped.
  TypeKind kind;
  /// Whether the type is `T?`.
  bool optional;
  bool has_default;
};

/// Immutable once published (calls read it without locking); freed only
/// once no call can see it (Note [Kernel lifetime]).
struct AnnotatedSchema {
  AnnotatedSchema(FunctionSchema s, InternedString d, std::vector<std::string> t);
  FunctionSchema schema;
  /// Where it was defined (one copy per text: Note [Interned debug strings]).
  InternedString debug;
  std::vector<std::string> tags;
  /// Indices of Tensor, Tensor?, Tensor[] and Tensor?[] arguments (the
  /// arguments whose tensors choose the kernel).
  std::vector<uint32_t> tensor_arg_indices;
  /// Indices of the arguments annotated as written to (`Tensor(a!)`); see
  /// Note [Post-kernel effects].
  std::vector<uint32_t> mutable_arg_indices;
  /// One per argument.
  std::vector<ArgumentInfo> argument_info;
  uint32_t num_arguments;
  /// The number of arguments before the keyword-only ones.
  uint32_t num_positional;
  /// schema.returns().size(), read on every call that checks its results.
  uint32_t num_returns;
  /// Whether some argument has a default (else a Python kernel receives
  /// every positional argument, and every keyword-only one as a keyword).
  bool has_defaults;
};

} // namespace opdispatch
