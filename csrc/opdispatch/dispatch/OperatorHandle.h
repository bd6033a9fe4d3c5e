// OperatorHandle: what callers hold to call and inspect one operator (it
// keeps the operator's entry alive, see Note [Kernel lifetime]). Typed calls
// go through TypedOperatorHandle (OperatorHandle::typed).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/CppSignature.h>
#include <opdispatch/dispatch/OperatorEntry.h>
#include <opdispatch/schema/InferSchema.h>

namespace opdispatch {

template <class FuncType>
class TypedOperatorHandle;

/// What the dispatch table computation chose for one table index, copied out
/// (OperatorHandle::dispatchTableEntries).
struct DispatchTableEntryInfo {
  /// Undefined (index 0) or a runtime key.
  DispatchKey key;
  /// The chosen kernel's registration debug ("missing" where no kernel serves the key).
  std::string debug;
  /// The rule that chose it (a static string, see OperatorEntry::computeDispatchTableEntryWithDebug).
  const char* reason;
  bool fallthrough;
};

class OperatorHandle {
 public:
  /// A handle keeps its entry alive (Note [Kernel lifetime]).
  explicit OperatorHandle(OperatorEntry* entry) : entry_(entry) { retain(); }
  OperatorHandle(const OperatorHandle& o) : entry_(o.entry_) { retain(); }
  OperatorHandle(OperatorHandle&& o) noexcept : entry_(o.entry_) { o.entry_ = nullptr; }
  OperatorHandle& operator=(const OperatorHandle& o) {
    OperatorHandle copy(o);
    std::swap(entry_, copy.entry_);
    return *this;
  }
  OperatorHandle& operator=(OperatorHandle&& o) noexcept {
    std::swap(entry_, o.entry_);
    return *this;
  }
  ~OperatorHandle() {
    if (entry_ != nullptr) {
      release(entry_);
    }
  }

  const OperatorName& operator_name() const { return entry_->operator_name(); }
  bool hasSchema() const { return entry_->hasSchema(); }
  /// Throws Error if the operator has no schema.
  const FunctionSchema& schema() const { return entry_->schema(); }
  const std::string& debug() const { return entry_->debug(); }
  const std::vector<std::string>& tags() const { return entry_->tags(); }
  std::string dumpState() const;
  std::string dumpComputedTable() const;
  void checkInvariants() const;
  bool hasKernelForDispatchKey(DispatchKey k) const;
  bool hasKernelForAnyDispatchKey(DispatchKeySet ks) const;
  bool hasComputedKernelForDispatchKey(DispatchKey k) const;
  bool isKernelFallthroughKernel(DispatchKey k) const;
  /// One entry per table index (Undefined, then every runtime key by
  /// priority), computed by the rules the table uses. PyTorch:
  /// computeDispatchTableEntryWithDebug.
  std::vector<DispatchTableEntryInfo> dispatchTableEntries() const;
  /// Raises NotImplementedError naming the operator and `k`, which no kernel
  /// serves, with the keys that have one and the computed table (what a call
  /// that finds no kernel raises).
  [[noreturn]] void reportError(DispatchKey k) const;

  /// A typed handle for calls with C++ signature `FuncType` (e.g.
  /// `Tensor(const Tensor&, double)`). Throws Error if the signature does not
  /// match the registered kernels or the schema.
  template <class FuncType>
  TypedOperatorHandle<FuncType> typed() const {
    checkTypedSignature(CppSignature::make<FuncType>(), *inferFunctionSchema<FuncType>());
    return TypedOperatorHandle<FuncType>(entry_);
  }

  /// Calls with the arguments on top of `stack`; leaves the results there
  /// (Note [One call path]). Throws Error if the operator has no schema or
  /// the stack holds fewer values than it has arguments, NotImplementedError
  /// if no kernel serves the keys. Inline, defined in CallUnit.h (included
  /// at the end of this header): Note [The boxed call is inline].
  inline void callBoxed(Stack* stack) const;
  void callBoxed(Stack& stack) const { callBoxed(&stack); }
  /// Calls the kernel for `ks` (already restricted by the caller, typically
  /// `ks & DispatchKeySet(FULL_AFTER, current_key)`).
  void redispatchBoxed(DispatchKeySet ks, Stack* stack) const;
  /// Calls the kernel registered directly at `k` (a runtime or alias key,
  /// e.g. CompositeImplicitAutograd to run a decomposition), or, for a runtime
  /// key with no kernel of its own, the dispatch table's entry for `k`. The
  /// arguments choose nothing; the kernel receives their key set as usual.
  /// Throws Error if the operator has no schema, if `k` is an alias key with
  /// no kernel, or if the kernel is a fallthrough. PyTorch:
  /// OperatorHandle::callBoxedForDispatchKey (behind OpOverload.decompose).
  /// It bypasses the dispatcher, post-kernel effects included (Note
  /// [Post-kernel effects]): the kernel it runs dispatches its own calls.
  void callBoxedForDispatchKey(DispatchKey k, Stack* stack) const;

  OperatorEntry& entry() const { return *entry_; }
  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }
  bool operator!=(const OperatorHandle& o) const { return entry_ != o.entry_; }

 protected:
  void checkTypedSignature(const CppSignature& sig, const FunctionSchema& inferred) const;
  OperatorEntry* entry_;

 private:
  void retain() { entry_->handleCount_.fetch_add(1, std::memory_order_relaxed); }
  /// Uncounts a handle of `e`; the last one may let the Dispatcher reclaim `e`.
  static void release(OperatorEntry* e) noexcept;
};

} // namespace opdispatch

// The boxed call's inline definition, so that every caller of callBoxed has
// it (Note [The boxed call is inline]).
#include <opdispatch/dispatch/CallUnit.h>
