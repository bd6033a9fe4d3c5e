// Dispatcher: the process-wide registry of operators (def / impl / fallback /
// library registrations with RAII handles) and the boxed call entry points.
// The handles callers hold are OperatorHandle and TypedOperatorHandle.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <opdispatch/dispatch/AliasAnalysisKind.h>
#include <opdispatch/dispatch/BackendFallbacks.h>
#include <opdispatch/dispatch/OperatorEntry.h>
#include <opdispatch/dispatch/OperatorHandle.h>
#include <opdispatch/dispatch/RegistrationHandleRAII.h>
#include <opdispatch/dispatch/TypedOperatorHandle.h>

namespace opdispatch {

class Dispatcher final {
 public:
  friend class OperatorHandle;

  /// The one dispatcher of the process (in libopdispatch, shared by every extension).
  static Dispatcher& singleton();

  // --- lookup ---------------------------------------------------------------
  /// The operator if it has a schema.
  std::optional<OperatorHandle> findSchema(const OperatorName& name);
  /// Like findSchema; throws Error naming the operator (and its known overloads) if absent.
  OperatorHandle findSchemaOrThrow(const std::string& name, const std::string& overload_name);
  /// The operator if it has any registration (schema or kernels).
  std::optional<OperatorHandle> findOp(const OperatorName& name);
  /// The operator entry for `name`, created if needed (kept while a handle
  /// or a registration refers to it). For callers that cache a handle
  /// before the operator is registered.
  OperatorHandle findOrRegisterName(const OperatorName& name);
  /// Names of all operators with any registration.
  std::vector<OperatorName> getAllOpNames();
  /// The overload names ("" for the default) of the operators called `name`
  /// ("ns::op") that have a schema, in the order their entries were created.
  /// Costs the number of overloads of `name`, not of operators.
  std::vector<std::string> findOverloadNames(const std::string& name);
  /// Where the newest kernel registered directly at `k` (runtime or alias
  /// key) for operator `name` was registered (its debug text, "registered at
  /// file:line"), or nullopt if there is none.
  std::optional<std::string> kernelDebug(const OperatorName& name, DispatchKey k);
  /// Operators that have kernels but no schema.
  std::vector<OperatorHandle> findDanglingImpls();
  /// Checks every operator's invariants.
  void checkInvariants();
  /// Increases with every def and undef: lets callers cache name lookups.
  uint64_t registrationGeneration() const { return generation_.load(std::memory_order_acquire); }
  /// Increases with every kernel or backend fallback (de)registration: lets
  /// callers cache dispatch decisions (the Python dispatcher's per-op caches).
  uint64_t kernelGeneration() const { return kernelGeneration_.load(std::memory_order_acquire); }

  // --- registration ----------------------------------------------------------
  /// Defines an operator whose alias annotations are read as `alias_analysis`
  /// says (nullopt: not specified; see AliasAnalysisKind). Throws Error if it
  /// is already defined (naming both registration sites) or if a kernel
  /// already registered for it does not match the schema. Nothing changes
  /// when it throws.
  RegistrationHandleRAII registerDef(FunctionSchema schema, InternedString debug, std::vector<std::string> tags = {},
                                     std::optional<AliasAnalysisKind> alias_analysis = AliasAnalysisKind::FROM_SCHEMA);
  /// Replaces the alias analysis kind of the current definition of `name`
  /// (for bindings that define through Library, whose def takes no kind).
  /// Throws Error if `name` is not defined.
  void setAliasAnalysis(const OperatorName& name, std::optional<AliasAnalysisKind> kind);
  /// Registers a kernel at `key` (no key: CompositeImplicitAutograd).
  /// Throws Error on a schema or C++ signature mismatch; nothing changes then.
  RegistrationHandleRAII registerImpl(OperatorName name, std::optional<DispatchKey> key, KernelFunction kernel,
                                      std::optional<CppSignature> cpp_signature,
                                      std::unique_ptr<FunctionSchema> inferred_schema, InternedString debug);
  /// Registers a backend fallback for runtime key `key` (used by every
  /// operator without a kernel for it); `kind` says who installs it (Note
  /// [Default fallbacks]). Throws Error if `key` is not a runtime key or
  /// already has a user fallback (ValueError for the former); nothing changes then.
  RegistrationHandleRAII registerFallback(DispatchKey key, KernelFunction kernel, std::string debug,
                                          FallbackKind kind = FallbackKind::User);
  /// Claims namespace `ns` for a DEF library. Throws Error naming both sites
  /// if another DEF library has it.
  RegistrationHandleRAII registerLibrary(std::string ns, std::string debug);
  /// Records that the fake (meta) kernel of operator `name` is registered
  /// from Python module `pymodule` (Library::set_python_module; `context` is
  /// help text). The newest record wins; undoing it restores the previous one.
  /// PyTorch: Dispatcher::registerPythonModule (the "pystub").
  RegistrationHandleRAII registerPythonModule(const OperatorName& name, std::string pymodule, std::string context);
  /// The newest (pymodule, context) recorded for `name`, if any. PyTorch: Dispatcher::getPyStub.
  std::optional<std::pair<std::string, std::string>> getPyStub(const OperatorName& name) const;

  // --- calls -------------------------------------------------------------------
  /// OperatorHandle::callBoxed. PyTorch: Dispatcher::callBoxed.
  void callBoxed(const OperatorHandle& op, Stack* stack) const { op.callBoxed(stack); }
  /// OperatorHandle::redispatchBoxed. PyTorch: Dispatcher::redispatchBoxed.
  void redispatchBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
    op.redispatchBoxed(ks, stack);
  }

  // --- fallbacks -----------------------------------------------------------------
  bool hasBackendFallbackForDispatchKey(DispatchKey k) const;

 private:
  Dispatcher() = default;
  OperatorEntry& lookupOrCreate(const OperatorName& name);
  bool isListed(const OperatorEntry& e) const { return e.def_and_impl_count_ > 0; }
  /// A paragraph naming the operators of `name`'s namespace that have kernels
  /// but no definition and whose names are near misses of `name`'s (a kernel
  /// registered for a misspelled operator), or "". Lock held.
  std::string danglingNearMissHint(const OperatorName& name) const;
  /// registerDef / registerImpl under the lock; the callers reclaim what they retired after it.
  RegistrationHandleRAII registerDefLocked(FunctionSchema schema, InternedString debug, std::vector<std::string> tags,
                                           std::optional<AliasAnalysisKind> alias_analysis);
  RegistrationHandleRAII registerImplLocked(OperatorName name, std::optional<DispatchKey> key, KernelFunction kernel,
                                            std::optional<CppSignature> cpp_signature,
                                            std::unique_ptr<FunctionSchema> inferred_schema, InternedString debug);
  void deregisterDef(OperatorEntry& entry);
  /// Unindexes `e` and retires it to the Reclaimer if nothing refers to it
  /// any more (Note [Kernel lifetime]). Lock held.
  void retireEntryIfDead(OperatorEntry& e);
  /// The last handle of `e` went (OperatorHandle::release): retires `e` if it is dead.
  void releaseEntry(OperatorEntry& e);
  void deregisterImpl(OperatorEntry& entry, AnnotatedKernelContainerIterator it);
  void deregisterFallback(const BackendFallbacks::Position& position);

  // Note [Indexes view the entries' names]
  // The two indexes below are keyed by views of the indexed entries' own
  // names (an entry never changes its name and leaves both indexes before
  // it is freed) rather than by copies: per operator that is one heap block
  // for the name and a larger hash node fewer in each. entriesByName_'s key
  // views the name of the first entry of its chain, and moves to the next
  // when that one leaves (retireEntryIfDead). The chain runs through the
  // entries (OperatorEntry::nextSameName_), not a vector per name: a heap
  // block fewer per operator (most names have one overload).

  /// An OperatorName as a pair of views (a lookup key, or an index's key).
  struct NameView {
    NameView(const OperatorName& n) : name(n.name), overload_name(n.overload_name) {}  // NOLINT: implicit for find()
    bool operator==(const NameView& o) const { return name == o.name && overload_name == o.overload_name; }
    std::string_view name;
    std::string_view overload_name;
  };
  struct NameViewHash {
    size_t operator()(const NameView& n) const {
      return std::hash<std::string_view>()(n.name) ^ (std::hash<std::string_view>()(n.overload_name) * 31);
    }
  };

  mutable std::mutex mutex_;
  /// The live entries (see Note [Kernel lifetime] for when one goes).
  std::list<OperatorEntry> operators_;
  std::unordered_map<NameView, std::list<OperatorEntry>::iterator, NameViewHash> operatorLookupTable_;
  /// Every live entry by its name without overload: the first of the chain
  /// of them in creation order (OperatorEntry::nextSameName_).
  std::unordered_map<std::string_view, OperatorEntry*> entriesByName_;
  BackendFallbacks backendFallbacks_;
  /// An entry of no operator, with no schema and no kernels: its table is
  /// what every new entry starts with (copied, not recomputed key by key).
  /// Made on demand, dropped when the backend fallbacks change; never seen by calls.
  std::unique_ptr<OperatorEntry> freshEntry_;
  std::unordered_map<std::string, std::string> libraries_;
  /// Per operator, the (pymodule, context) records of registerPythonModule, newest last.
  std::unordered_map<OperatorName, std::list<std::pair<std::string, std::string>>> pythonModules_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> kernelGeneration_{0};
};

} // namespace opdispatch
