// Dispatcher: the process-wide registry of operators (def / impl / fallback /
// library registrations with RAII handles) and the call entry points;
// OperatorHandle and TypedOperatorHandle, the handles callers hold.
#pragma once

#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <opdispatch/dispatch/DispatchKeyExtractor.h>
#include <opdispatch/dispatch/OperatorEntry.h>
#include <opdispatch/dispatch/RegistrationHandleRAII.h>

namespace opdispatch {

template <class FuncType>
class TypedOperatorHandle;

/// A handle to one operator (valid for the whole process, see Note [Kernel lifetime]).
class OperatorHandle {
 public:
  explicit OperatorHandle(OperatorEntry* entry) : entry_(entry) {}

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

  /// A typed handle for calls with C++ signature `FuncType` (e.g.
  /// `Tensor(const Tensor&, double)`). Throws Error if the signature does not
  /// match the registered kernels or the schema.
  template <class FuncType>
  TypedOperatorHandle<FuncType> typed() const {
    checkTypedSignature(CppSignature::make<FuncType>(), *inferFunctionSchema<FuncType>());
    return TypedOperatorHandle<FuncType>(entry_);
  }

  /// Calls with the arguments on top of `stack`; leaves the results there.
  /// Throws Error if the operator has no schema, NotImplementedError if no kernel serves the keys.
  void callBoxed(Stack* stack) const;
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
  /// Bypasses the dispatcher, so it does not bump the versions of mutated
  /// arguments (Note [Version counters of mutated arguments]).
  void callBoxedForDispatchKey(DispatchKey k, Stack* stack) const;

  OperatorEntry& entry() const { return *entry_; }
  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }
  bool operator!=(const OperatorHandle& o) const { return entry_ != o.entry_; }

 protected:
  void checkTypedSignature(const CppSignature& sig, const FunctionSchema& inferred) const;
  OperatorEntry* entry_;
};

/// An OperatorHandle whose calls are typed: no boxing when the kernel has an
/// unboxed entry. PyTorch: TypedOperatorHandle.
template <class Return, class... Args>
class TypedOperatorHandle<Return(Args...)> final : public OperatorHandle {
 public:
  /// Dispatches on the tensor arguments and TLS, then calls the kernel.
  Return call(Args... args) const {
    const OperatorEntry& e = *entry_;
    DispatchKeySet ks = e.computeDispatchKeySet(detail::multiDispatchKeySet(args...));
    return callKernel(e, ks, std::forward<Args>(args)...);
  }
  /// Calls the kernel for `ks` (the caller restricted it, e.g. with FULL_AFTER).
  Return redispatch(DispatchKeySet ks, Args... args) const {
    const OperatorEntry& e = *entry_;
    return callKernel(e, ks & e.nonFallthroughKeys(), std::forward<Args>(args)...);
  }

 private:
  friend class OperatorHandle;
  explicit TypedOperatorHandle(OperatorEntry* e) : OperatorHandle(e) {}

  Return callKernel(const OperatorEntry& e, DispatchKeySet ks, Args... args) const {
    if (OPDISPATCH_UNLIKELY(e.bumpsVersions(ks))) {
      // Bumps when the kernel returns.
      const AnnotatedSchema* schema = e.schemaPtr();
      detail::MutatedTensors mutated(schema ? &schema->mutable_arg_indices : nullptr, args...);
      return e.lookup(ks).template call<Return, Args...>(*this, ks, std::forward<Args>(args)...);
    }
    return e.lookup(ks).template call<Return, Args...>(*this, ks, std::forward<Args>(args)...);
  }
};

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
  /// The operator entry for `name`, created if needed (never freed). For
  /// callers that cache a handle before the operator is registered.
  OperatorHandle findOrRegisterName(const OperatorName& name);
  /// Names of all operators with any registration.
  std::vector<OperatorName> getAllOpNames();
  /// The overload names ("" for the default) of the operators called `name`
  /// ("ns::op") that have a schema, in the order their entries were created.
  /// Costs the number of overloads of `name`, not of operators.
  std::vector<std::string> findOverloadNames(const std::string& name);
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
  /// Defines an operator. Throws Error if it is already defined (naming both
  /// registration sites) or if a kernel already registered for it does not
  /// match the schema. Nothing changes when it throws.
  RegistrationHandleRAII registerDef(FunctionSchema schema, std::string debug,
                                     std::vector<std::string> tags = {});
  /// Registers a kernel at `key` (no key: CompositeImplicitAutograd).
  /// Throws Error on a schema or C++ signature mismatch; nothing changes then.
  RegistrationHandleRAII registerImpl(OperatorName name, std::optional<DispatchKey> key, KernelFunction kernel,
                                      std::optional<CppSignature> cpp_signature,
                                      std::unique_ptr<FunctionSchema> inferred_schema, std::string debug);
  /// Registers the backend fallback of runtime key `key` (used by every
  /// operator without a kernel for it). Throws Error if `key` already has one
  /// or is not a runtime key.
  RegistrationHandleRAII registerFallback(DispatchKey key, KernelFunction kernel, std::string debug);
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
  void callBoxed(const OperatorHandle& op, Stack* stack) const;
  void redispatchBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const;

  // --- fallbacks -----------------------------------------------------------------
  bool hasBackendFallbackForDispatchKey(DispatchKey k) const;
  /// The fallback registered for `k`, or null. (Dispatcher mutex held, or no concurrent registration.)
  const AnnotatedKernel* backendFallbackKernel(DispatchKey k) const {
    if (!isRuntimeDispatchKey(k)) {
      return nullptr;
    }
    const auto& slot = backendFallbackKernels_[static_cast<int>(k)];
    return slot.empty() ? nullptr : &slot.front();
  }

 private:
  Dispatcher() = default;
  OperatorEntry& lookupOrCreate(const OperatorName& name);
  bool isListed(const OperatorEntry& e) const { return e.def_and_impl_count_ > 0; }
  void deregisterDef(OperatorEntry& entry);
  void deregisterImpl(OperatorEntry& entry, DispatchKey key, AnnotatedKernelContainerIterator it);
  void deregisterFallback(DispatchKey key);
  void retire(AnnotatedKernelContainer& from, AnnotatedKernelContainerIterator it);

  mutable std::mutex mutex_;
  std::list<OperatorEntry> operators_;
  std::unordered_map<OperatorName, OperatorEntry*> operatorLookupTable_;
  /// Every entry by its name without overload, in creation order (entries are never freed).
  std::unordered_map<std::string, std::vector<OperatorEntry*>> entriesByName_;
  std::array<AnnotatedKernelContainer, kDispatchTableSize> backendFallbackKernels_;
  std::unordered_map<std::string, std::string> libraries_;
  /// Per operator, the (pymodule, context) records of registerPythonModule, newest last.
  std::unordered_map<OperatorName, std::list<std::pair<std::string, std::string>>> pythonModules_;
  /// Deregistered kernels, kept alive (Note [Kernel lifetime]).
  AnnotatedKernelContainer retiredKernels_;
  std::vector<const AnnotatedSchema*> retiredSchemas_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<uint64_t> kernelGeneration_{0};
};

inline void OperatorHandle::callBoxed(Stack* stack) const { Dispatcher::singleton().callBoxed(*this, stack); }
inline void OperatorHandle::redispatchBoxed(DispatchKeySet ks, Stack* stack) const {
  Dispatcher::singleton().redispatchBoxed(*this, ks, stack);
}

} // namespace opdispatch
