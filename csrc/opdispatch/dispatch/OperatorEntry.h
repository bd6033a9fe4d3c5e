// OperatorEntry: everything the dispatcher knows about one operator — its
// schema, the kernels registered per dispatch key (cold), and the computed
// dispatch table calls read (hot).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/dispatch/AliasAnalysisKind.h>
#include <opdispatch/dispatch/AnnotatedKernel.h>
#include <opdispatch/dispatch/AnnotatedSchema.h>
#include <opdispatch/dispatch/BackendFallbacks.h>
#include <opdispatch/dispatch/CppSignature.h>
#include <opdispatch/dispatch/DispatchTable.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {

// Note [Kernel lifetime]
// Calls never take the registration lock, so a call may be running a kernel
// at the moment another thread deregisters it. Deregistered kernels and
// schemas are unlinked and handed to the Reclaimer, which frees them once no
// call that could see them is running (Note [Reclaiming retired kernels]);
// OperatorKernel::retire() releases state such as Python callables at once.
// Table entries are published whole (Note [Hot dispatch table]), so a racing
// call sees the old or the new kernel, never a freed one. References that
// schema(), debug() and tags() return stay valid while the definition is
// registered, or for the rest of the current call (CallGuard).
//
// An OperatorEntry lives while it is listed (it has a definition or kernels)
// or an OperatorHandle refers to it: handles count themselves in
// handleCount_. When both end, the Dispatcher unlinks the entry from its
// indexes (under its lock) and retires it to the Reclaimer, so a process that
// defines and removes operators of new names for ever stays flat. A handle
// kept past the removal of its operator's definition keeps its entry: calling
// it raises, and defining the operator again makes it callable again (the
// name still finds that entry). A handle count reaching 0 outside the lock
// races a lookup that makes a new handle under it; the Dispatcher decides
// under the lock (Dispatcher::releaseEntry), and the entry's memory outlives
// that decision because the releasing thread holds a CallGuard.

class OperatorEntry final {
 public:
  /// `fallbacks`: the backend fallbacks the table uses (the Dispatcher's,
  /// which outlive every entry). `fresh`: if given, the table of an entry
  /// with no schema and no kernels under the same fallbacks, which this one
  /// copies instead of computing its own (Dispatcher::lookupOrCreate).
  OperatorEntry(OperatorName name, const BackendFallbacks& fallbacks, const DispatchTable* fresh = nullptr);
  OperatorEntry(const OperatorEntry&) = delete;
  OperatorEntry& operator=(const OperatorEntry&) = delete;

  // --- call path (lock-free) -------------------------------------------------

  /// The computed kernels (Note [Hot dispatch table]).
  const DispatchTable& table() const { return table_; }
  /// The keys whose table entry is not a fallthrough.
  DispatchKeySet nonFallthroughKeys() const { return table_.nonFallthroughKeys(); }
  /// The current schema, or null (valid for the current call; see Note [Kernel lifetime]).
  const AnnotatedSchema* schemaPtr() const { return schema_.load(std::memory_order_acquire); }
  /// The current schema's BoxedCallSummary, not valid() while there is none
  /// (Note [Boxed call summary]).
  BoxedCallSummary boxedCallSummary() const {
    return BoxedCallSummary(boxed_call_summary_.load(std::memory_order_relaxed));
  }

  // --- inspection --------------------------------------------------------------

  const OperatorName& operator_name() const { return name_; }
  bool hasSchema() const { return schemaPtr() != nullptr; }
  /// Throws Error if the operator has no schema (a dangling impl or a deleted def).
  const FunctionSchema& schema() const;
  const std::string& debug() const;
  const std::vector<std::string>& tags() const;
  /// Whether the table entry for runtime key `k` (or Undefined) is a real kernel (not missing). Lock-free.
  bool hasComputedKernelForDispatchKey(DispatchKey k) const;
  /// "[CPU, AutogradCPU]": the runtime keys with a kernel. Lock-free.
  std::string listAllDispatchKeys() const;

  // --- inspection of the registrations (Dispatcher mutex held: OperatorHandle's functions take it) ---

  /// Whether a kernel is registered directly at `k` (runtime or alias key).
  bool hasKernelForDispatchKey(DispatchKey k) const;
  /// Whether a kernel is registered directly at any runtime key of `ks`.
  bool hasKernelForAnyDispatchKey(DispatchKeySet ks) const { return runtimeKernelKeys_.has_any(ks); }
  /// Whether the kernel registered directly at `k` is a fallthrough.
  bool isKernelFallthroughKernel(DispatchKey k) const;
  /// The C++ signature the unboxed kernels share, if any has one.
  std::optional<CppSignature> cppSignature() const;

  /// The table entry for runtime key `k` (or Undefined) with the reason it
  /// was chosen (also for inspection: OperatorHandle::dispatchTableEntries).
  /// PyTorch: computeDispatchTableEntryWithDebug.
  std::pair<const AnnotatedKernel*, const char*> computeDispatchTableEntryWithDebug(DispatchKey k) const;
  /// Lines `name:`, `schema:`, `debug:`, `alias analysis kind:`, then one
  /// line per kernel `<Key>[alias]: <debug> :: <inferred schema> [ boxed unboxed ]`.
  /// PyTorch: OperatorEntry::dumpState.
  std::string dumpState() const;
  /// One line per table entry with a kernel: `<Key>: <debug> [<reason>]`.
  std::string dumpComputedTable() const;
  /// Recomputes every table entry and the fallthrough mask and checks they
  /// equal the stored ones; throws Error with both dumps otherwise.
  void checkInvariants() const;
  /// Raises NotImplementedError: no kernel for key `k`, with `hint` (a
  /// paragraph or "") before the table (OperatorHandle::reportError takes the lock).
  [[noreturn]] void reportError(DispatchKey k, const std::string& hint) const;

 private:
  friend class Dispatcher;
  friend class OperatorHandle;

  // --- registration (Dispatcher mutex held) ----------------------------------

  void registerSchema(FunctionSchema schema, InternedString debug, std::vector<std::string> tags,
                      std::optional<AliasAnalysisKind> alias_analysis);
  /// Returns the retired schema node.
  const AnnotatedSchema* deregisterSchema();
  /// Replaces the alias analysis kind of the current definition (nullopt: CONSERVATIVE, not specified).
  void setAliasAnalysis(std::optional<AliasAnalysisKind> kind) { aliasAnalysis_ = kind; }
  AnnotatedKernelContainerIterator registerKernel(std::optional<DispatchKey> key, KernelFunction kernel,
                                                  std::optional<CppSignature> sig,
                                                  std::unique_ptr<FunctionSchema> inferred, InternedString debug);
  /// Unlinks the registered kernel `it`, moving its node to the end of `retired`.
  void deregisterKernel(AnnotatedKernelContainerIterator it, AnnotatedKernelContainer& retired);
  /// Recomputes the entry of runtime key `k` (its backend fallback changed).
  void updateFallback(DispatchKey k);
  /// Records the signature a typed handle calls with.
  void registerTypedCallSignature(const CppSignature& sig);

  /// Recomputes the entries of `keys`, and of Undefined if `undefined`, and publishes them.
  void updateDispatchTable(DispatchKeySet keys, bool undefined);
  /// Sets the recomputed entries of `keys` (and of Undefined if `undefined`) in `update`.
  void fillDispatchTable(DispatchTable::Update& update, DispatchKeySet keys, bool undefined) const;
  /// Recomputes the entries whose effects depend on schema `s` (being registered or removed).
  void updateSchemaEffects(const AnnotatedSchema& s);
  /// What the table holds at `k` for `chosen`: its KernelRef with the effects a call there has.
  KernelRef tableEntry(DispatchKey k, const AnnotatedKernel& chosen) const;
  const AnnotatedKernel* getKernelForDispatchKey(DispatchKey k) const;
  /// Sets or clears the bit of `key` in runtimeKernelKeys_ / aliasKernelKeys_: whether kernels_ holds a kernel at it.
  void updateKernelKey(DispatchKey key);
  void checkKernelSchema(const AnnotatedKernel& k, const FunctionSchema& declared, const std::string& declared_debug,
                         std::optional<DispatchKey> key) const;

  // Hot data first. Invariant: table_ entry k ==
  // tableEntry(k, *computeDispatchTableEntryWithDebug(k).first), and the
  // table's fallthrough bit of k is clear iff that entry is a fallthrough.
  DispatchTable table_;
  std::atomic<const AnnotatedSchema*> schema_{nullptr};
  /// schema_->boxed_call_summary, 0 while schema_ is null (Note [Boxed call summary]).
  std::atomic<uint64_t> boxed_call_summary_{0};

  // Cold data (Dispatcher mutex held to read or write).
  OperatorName name_;
  const BackendFallbacks& fallbacks_;
  /// The registered kernels of every key (runtime or alias; AnnotatedKernel::key),
  /// newest first: those of one key, in this order, are that key's
  /// registrations, the first the active one. One list node per kernel, no
  /// list per key: most operators have one or two kernels.
  AnnotatedKernelContainer kernels_;
  /// The runtime keys that have a kernel in kernels_ (so the table
  /// computation tests bits instead of scanning).
  DispatchKeySet runtimeKernelKeys_;
  /// Bit (k - kFirstAliasKey) is set iff kernels_ has a kernel at alias key k.
  uint8_t aliasKernelKeys_ = 0;
  static_assert(static_cast<int>(kLastAliasKey) - static_cast<int>(kFirstAliasKey) < 8,
                "aliasKernelKeys_ has one bit per alias key");
  /// How the current definition reads its alias annotations (nullopt: not
  /// specified, CONSERVATIVE). Meaningless without a schema.
  std::optional<AliasAnalysisKind> aliasAnalysis_;
  /// The signature typed handles call with (checked on later registrations).
  std::optional<CppSignature> typedCallSignature_;
  /// Number of live def and impl registrations (the op is listed while > 0).
  int def_count_ = 0;
  int def_and_impl_count_ = 0;
  /// Live OperatorHandles of this entry (changed without the lock; see Note [Kernel lifetime]).
  std::atomic<int64_t> handleCount_{0};
  /// Set (under the lock) when the entry left the Dispatcher's indexes for the Reclaimer.
  bool retired_ = false;
  /// The next live entry of the same name without overload, in creation
  /// order (Dispatcher::entriesByName_ holds the first). Under the lock.
  OperatorEntry* nextSameName_ = nullptr;
};

} // namespace opdispatch
