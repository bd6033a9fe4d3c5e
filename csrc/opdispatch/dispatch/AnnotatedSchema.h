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

/// The positions of a schema's tensor-like arguments, held in the schema
/// itself: Note [Tensor positions inline].
struct InlineTensorPositions {
  static constexpr uint32_t kCapacity = 14;
  /// All the positions, if `complete`; else none (`size` 0).
  uint8_t positions[kCapacity] = {};
  uint8_t size = 0;
  /// False when there are more than kCapacity positions or one above 255:
  /// then only AnnotatedSchema::tensor_arg_indices lists them.
  bool complete = false;
};

// Note [Tensor positions inline]
// A boxed call finds its key set from the tensors at the schema's tensor
// positions. Read from tensor_arg_indices, a std::vector, that is one more
// dependent load on the call's chain (schema -> the vector's heap block ->
// the argument -> its tensor -> its key set); AnnotatedSchema holds a copy
// of them in place, beside num_arguments, which the call reads from the same
// object anyway. The schema is immutable once published, so the copy needs
// no publication of its own. A schema whose positions do not fit has the
// call read the vector, out of line (detail::keySetOfIndexed).
// Measured (benchmarks/cpp/bench_dispatch.cpp, Release builds against the
// old and new library): callgrind counts 145 -> 148 instructions per boxed_1
// and 417 -> 422 per boxed_8 (the byte loop and the `complete` test), but
// boxed_8 takes ~45.4 -> ~43.4 ns of thread CPU time and boxed_8 minus its
// floor stack_8 ~15.0 -> ~13.8 ns (medians of 16 alternating pairs on a
// loaded host, each the minimum of 41 rounds).

/// Immutable once published (calls read it without locking); freed only
/// once no call can see it (Note [Kernel lifetime]).
struct AnnotatedSchema {
  AnnotatedSchema(FunctionSchema s, InternedString d, std::vector<std::string> t);
  /// (First, with tensor_positions: what every boxed call reads.)
  uint32_t num_arguments;
  /// tensor_arg_indices, in place (Note [Tensor positions inline]).
  InlineTensorPositions tensor_positions;
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
  /// The number of arguments before the keyword-only ones.
  uint32_t num_positional;
  /// schema.returns().size(), read on every call that checks its results.
  uint32_t num_returns;
  /// Whether some argument has a default (else a Python kernel receives
  /// every positional argument, and every keyword-only one as a keyword).
  bool has_defaults;
};

} // namespace opdispatch
