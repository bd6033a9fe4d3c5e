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

/// A schema's number of arguments and tensor-like argument positions, packed
/// in one word: Note [Boxed call summary]. Not valid() when they do not fit.
class BoxedCallSummary {
 public:
  /// The most tensor positions a summary holds.
  static constexpr uint32_t kCapacity = 6;
  BoxedCallSummary() = default;
  explicit BoxedCallSummary(uint64_t bits) : bits_(bits) {}
  /// The summary of a schema with `num_arguments` arguments and tensor-like
  /// arguments at `positions` (ascending); not valid() if there are more than
  /// kCapacity positions or num_arguments > 255.
  static BoxedCallSummary of(uint32_t num_arguments, const std::vector<uint32_t>& positions);

  bool valid() const { return (bits_ & kValid) != 0; }
  uint32_t numArguments() const { return static_cast<uint32_t>((bits_ >> 8) & 0xff); }
  uint32_t numPositions() const { return static_cast<uint32_t>(bits_ & 0x7); }
  /// The positions, the first in the low byte (numPositions() of them).
  uint64_t packedPositions() const { return bits_ >> 16; }
  uint64_t bits() const { return bits_; }

 private:
  static constexpr uint64_t kValid = 0x80;
  /// Byte 0: kValid | the number of positions; byte 1: the number of
  /// arguments; bytes 2-7: the positions. 0: not valid.
  uint64_t bits_ = 0;
};

// Note [Boxed call summary]
// A boxed call finds its key set from the tensors at the schema's tensor
// positions among the top num_arguments values of the stack. Read through
// the schema, that is two dependent loads before the first argument
// (entry -> schema -> num_arguments and positions) and, through
// tensor_arg_indices, a std::vector, three. So each definition packs
// num_arguments and up to six positions into one word (BoxedCallSummary),
// which the OperatorEntry holds in place beside the schema pointer and
// replaces with it: the call reads it with the table from the entry it has
// in hand, one load before the arguments. The word is its own snapshot (one
// atomic load), so it needs no publication with the schema; a call that
// races a redefinition uses it only if its argument count is the count of
// the schema it read (BoxedCallFrame), else the schema alone. Schemas that
// do not fit, and tensor positions holding lists or None, read
// tensor_arg_indices out of line (detail::keySetOfIndexedOutOfLine).
// Measured (benchmarks/cpp/bench_dispatch.cpp, thread CPU time, Release
// builds of the library before and after, alternating runs): the positions
// in the schema itself, an earlier step, took boxed_8 from ~45.4 to ~43.4 ns
// on a loaded host; the summary in the entry then took it from ~30.25 to
// ~30.0 ns on a quiet one (boxed_8 - stack_8 ~8.0 -> ~7.6 ns; 5 of 6 pairs).
// The summary holds fewer positions than the schema did (six, not 14):
// schemas with 7-14 tensor arguments now read the vector.

/// Immutable once published (calls read it without locking); freed only
/// once no call can see it (Note [Kernel lifetime]).
struct AnnotatedSchema {
  AnnotatedSchema(FunctionSchema s, InternedString d, std::vector<std::string> t);
  uint32_t num_arguments;
  /// num_arguments and tensor_arg_indices packed (Note [Boxed call summary]).
  BoxedCallSummary boxed_call_summary;
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
