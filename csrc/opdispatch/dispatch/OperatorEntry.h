// OperatorEntry: everything the dispatcher knows about one operator — its
// schema, the kernels registered per dispatch key, and the computed dispatch
// table the call path reads.
#pragma once

#include <array>
#include <atomic>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/CppSignature.h>
#include <opdispatch/dispatch/KernelFunction.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {

class Dispatcher;

/// A registered kernel with what we know about where it came from.
struct AnnotatedKernel {
  AnnotatedKernel(KernelFunction k, std::optional<CppSignature> sig, std::unique_ptr<FunctionSchema> s,
                  std::string d)
      : kernel(std::move(k)),
        cpp_signature(sig),
        inferred_function_schema(std::move(s)),
        debug(std::move(d)) {}
  KernelFunction kernel;
  /// The C++ signature of an unboxed kernel.
  std::optional<CppSignature> cpp_signature;
  /// The schema inferred from a typed C++ kernel, checked against the declared one.
  std::unique_ptr<FunctionSchema> inferred_function_schema;
  /// Where it was registered ("registered at file:line") or a debug name.
  std::string debug;
};
/// Kernels of one key, newest first; std::list so iterators and addresses stay valid.
using AnnotatedKernelContainer = std::list<AnnotatedKernel>;
using AnnotatedKernelContainerIterator = AnnotatedKernelContainer::iterator;

/// The declared schema with its registration site, tags and the positions of
/// the arguments that carry dispatch keys.
struct AnnotatedSchema {
  AnnotatedSchema(FunctionSchema s, std::string d, std::vector<std::string> t);
  FunctionSchema schema;
  std::string debug;
  std::vector<std::string> tags;
  /// Indices of Tensor, Tensor?, Tensor[] and Tensor?[] arguments.
  std::vector<uint32_t> tensor_arg_indices;
  /// Indices of the arguments annotated as written to (`Tensor(a!)`); see
  /// Note [Version counters of mutated arguments].
  std::vector<uint32_t> mutable_arg_indices;
  uint32_t num_arguments;
};

// Note [Version counters of mutated arguments]
// Autograd checks that a tensor saved for backward was not modified in place
// since; every in-place write must therefore bump the tensor's version
// counter. PyTorch does it in the ADInplaceOrView kernels, which run for every
// tensor because ADInplaceOrView is always in its key sets. Here that key is
// only on tensors that require grad (Note [Tensor key sets]), so the
// dispatcher does it instead: when a kernel chosen for a backend key (or for
// Undefined) returns, the version counters of the tensors passed to the
// arguments the schema marks as written to are bumped. That is below every
// autograd kernel, as ADInplaceOrView is, so an autograd kernel saving a
// mutated tensor sees its new version. Kernels never bump versions themselves.
// The check costs one load and a branch on calls of operators without
// mutated arguments.

// Note [Kernel lifetime]
// Calls never take the registration lock, so a call may be running a kernel
// at the moment another thread deregisters it. Deregistered kernels and
// schemas are therefore never freed: their nodes move to the Dispatcher's
// retired lists (their addresses stay valid) and OperatorKernel::retire()
// releases state such as Python callables. Dispatch table entries are atomic
// pointers, so a racing call sees the old or the new kernel, never a freed
// one. OperatorEntry objects are never freed either; an OperatorHandle stays
// valid for the life of the process, and calling an operator whose schema
// was deregistered raises.

class OperatorEntry final {
 public:
  explicit OperatorEntry(OperatorName name);
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

  // --- call path (lock-free) -------------------------------------------------

  /// The key set a call dispatches on: (tensor keys | TLS included) - TLS
  /// excluded, masked to the keys that have a non-fallthrough kernel.
  DispatchKeySet computeDispatchKeySet(DispatchKeySet tensor_keys) const {
    LocalDispatchKeySet tls = tls_local_dispatch_key_set();
    return ((tensor_keys | tls.included_) - tls.excluded_) & nonFallthroughKeys();
  }
  /// The key set of a boxed call whose arguments are the top of `stack`.
  /// Precondition: the operator has a schema and the stack holds its arguments.
  DispatchKeySet computeDispatchKeySetBoxed(const AnnotatedSchema& schema, const Stack& stack) const;
  /// The kernel for a (masked) key set: the table entry of its highest key.
  const KernelFunction& lookup(DispatchKeySet ks) const {
    return dispatchTable_[ks.getDispatchTableIndex()].load(std::memory_order_acquire)->kernel;
  }
  DispatchKeySet nonFallthroughKeys() const {
    return DispatchKeySet(DispatchKeySet::RAW, nonFallthroughKeys_.load(std::memory_order_relaxed));
  }
  /// Whether a call that reaches the kernel of `ks` must bump the versions of
  /// mutated arguments (Note [Version counters of mutated arguments]).
  bool bumpsVersions(DispatchKeySet ks) const {
    if (OPDISPATCH_LIKELY(!hasMutableArguments_.load(std::memory_order_relaxed))) {
      return false;
    }
    // PythonDispatcher passes the call on to the key below it, where the bump happens.
    DispatchKey k = ks.remove(DispatchKey::PythonDispatcher).highestPriorityTypeId();
    return k == DispatchKey::Undefined || isBackendDispatchKey(k);
  }
  /// Calls the kernel of `ks` with the arguments on `stack`, bumping the
  /// versions of mutated arguments when bumpsVersions(ks).
  void callKernelBoxed(const OperatorHandle& op, const AnnotatedSchema& schema, DispatchKeySet ks, Stack* stack) const {
    if (OPDISPATCH_UNLIKELY(bumpsVersions(ks))) {
      callKernelBoxedBumpingVersions(op, schema, ks, stack);
      return;
    }
    lookup(ks).callBoxed(op, ks, stack);
  }
  /// The current schema, or null (never freed; see Note [Kernel lifetime]).
  const AnnotatedSchema* schemaPtr() const { return schema_.load(std::memory_order_acquire); }

  // --- inspection --------------------------------------------------------------

  const OperatorName& operator_name() const { return name_; }
  bool hasSchema() const { return schemaPtr() != nullptr; }
  /// Throws Error if the operator has no schema (a dangling impl or a deleted def).
  const FunctionSchema& schema() const;
  const std::string& debug() const;
  const std::vector<std::string>& tags() const;
  /// Whether a kernel is registered directly at `k` (runtime or alias key).
  bool hasKernelForDispatchKey(DispatchKey k) const;
  /// Whether a kernel is registered directly at any runtime key of `ks`.
  bool hasKernelForAnyDispatchKey(DispatchKeySet ks) const;
  /// Whether the kernel registered directly at `k` is a fallthrough.
  bool isKernelFallthroughKernel(DispatchKey k) const;
  /// Whether the table entry for runtime key `k` (or Undefined) is a real kernel (not missing).
  bool hasComputedKernelForDispatchKey(DispatchKey k) const;
  /// The C++ signature the unboxed kernels share, if any has one.
  std::optional<CppSignature> cppSignature() const;

  /// The table entry for runtime key `k` (or Undefined) with the reason it
  /// was chosen (also for inspection: opdispatch._C._dispatch_table_entries). PyTorch: computeDispatchTableEntryWithDebug.
  std::pair<const AnnotatedKernel*, const char*> computeDispatchTableEntryWithDebug(const Dispatcher& dispatcher,
                                                                                    DispatchKey k) const;
  /// Lines `name:`, `schema:`, `debug:`, `alias analysis kind:`, then one
  /// line per kernel `<Key>[alias]: <debug> :: <inferred schema> [ boxed unboxed ]`.
  /// PyTorch: OperatorEntry::dumpState.
  std::string dumpState() const;
  /// One line per table entry with a kernel: `<Key>: <debug> [<reason>]`.
  std::string dumpComputedTable() const;
  /// Recomputes every table entry and the fallthrough mask and checks they
  /// equal the stored ones; throws Error with both dumps otherwise.
  void checkInvariants() const;
  /// "[CPU, AutogradCPU]": the runtime keys with a kernel.
  std::string listAllDispatchKeys() const;
  /// Raises NotImplementedError: no kernel for key `k`.
  [[noreturn]] void reportError(DispatchKey k) const;
  void callKernelBoxedBumpingVersions(const OperatorHandle& op, const AnnotatedSchema& schema, DispatchKeySet ks,
                                      Stack* stack) const;

 private:
  friend class Dispatcher;
  friend class OperatorHandle;

  // --- registration (Dispatcher mutex held) ----------------------------------

  void registerSchema(FunctionSchema schema, std::string debug, std::vector<std::string> tags);
  /// Returns the retired schema node.
  const AnnotatedSchema* deregisterSchema();
  AnnotatedKernelContainerIterator registerKernel(const Dispatcher& dispatcher, std::optional<DispatchKey> key,
                                                  KernelFunction kernel, std::optional<CppSignature> sig,
                                                  std::unique_ptr<FunctionSchema> inferred, std::string debug);
  /// Unlinks the kernel; the caller moves it to the retired list (splice).
  AnnotatedKernelContainer& kernelsFor(DispatchKey key);
  void afterKernelRemoved(const Dispatcher& dispatcher, DispatchKey key);
  /// Recomputes the whole table and the fallthrough mask.
  void updateDispatchTable(const Dispatcher& dispatcher);
  /// Recomputes the entry of runtime key `k` and its fallthrough bit (what a
  /// backend fallback change of `k` can affect).
  void updateDispatchTableEntry(const Dispatcher& dispatcher, DispatchKey k);
  /// Records the signature a typed handle calls with.
  void registerTypedCallSignature(const CppSignature& sig);

  const AnnotatedKernel* getKernelForDispatchKey(DispatchKey k) const;
  void checkKernelSchema(const AnnotatedKernel& k, const FunctionSchema& declared, const std::string& declared_debug,
                         std::optional<DispatchKey> key) const;

  // Hot data first. Invariant: dispatchTable_[k] ==
  // computeDispatchTableEntryWithDebug(k).first, and bit k of
  // nonFallthroughKeys_ is set iff that entry is not a fallthrough.
  std::array<std::atomic<const AnnotatedKernel*>, kDispatchTableSize> dispatchTable_;
  std::atomic<uint64_t> nonFallthroughKeys_;
  std::atomic<const AnnotatedSchema*> schema_{nullptr};
  /// Whether the current schema has mutated arguments.
  std::atomic<bool> hasMutableArguments_{false};

  // Cold data (Dispatcher mutex held to read or write).
  OperatorName name_;
  /// Kernels per key (runtime or alias), newest first; only non-empty lists are kept.
  std::vector<std::pair<DispatchKey, AnnotatedKernelContainer>> kernels_;
  /// Bit `1 << k` is set iff kernels_ has a list for key k (so the table
  /// computation tests bits instead of scanning).
  uint64_t kernelKeys_ = 0;
  static_assert(kNumDispatchKeys <= 64, "kernelKeys_ has one bit per dispatch key");
  /// The signature typed handles call with (checked on later registrations).
  std::optional<CppSignature> typedCallSignature_;
  /// Number of live def and impl registrations (the op is listed while > 0).
  int def_count_ = 0;
  int def_and_impl_count_ = 0;
};

} // namespace opdispatch
