// Dispatcher: registration under one mutex, lock-free boxed calls.
#include <opdispatch/dispatch/Dispatcher.h>

#include <algorithm>

#include <opdispatch/core/Exception.h>
#include <opdispatch/schema/InferSchema.h>

namespace opdispatch {

Dispatcher& Dispatcher::singleton() {
  // Never destroyed: static libraries deregister from destructors that may
  // run after this translation unit's statics are gone.
  static Dispatcher* dispatcher = new Dispatcher();
  return *dispatcher;
}

// --- handles -----------------------------------------------------------------

std::string OperatorHandle::dumpState() const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  return entry_->dumpState();
}
std::string OperatorHandle::dumpComputedTable() const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  return entry_->dumpComputedTable();
}
void OperatorHandle::checkInvariants() const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  entry_->checkInvariants();
}
bool OperatorHandle::hasKernelForDispatchKey(DispatchKey k) const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  return entry_->hasKernelForDispatchKey(k);
}
bool OperatorHandle::hasKernelForAnyDispatchKey(DispatchKeySet ks) const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  return entry_->hasKernelForAnyDispatchKey(ks);
}
bool OperatorHandle::hasComputedKernelForDispatchKey(DispatchKey k) const {
  return entry_->hasComputedKernelForDispatchKey(k);
}
bool OperatorHandle::isKernelFallthroughKernel(DispatchKey k) const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  return entry_->isKernelFallthroughKernel(k);
}

void OperatorHandle::checkTypedSignature(const CppSignature& sig, const FunctionSchema& inferred) const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  if (const AnnotatedSchema* s = entry_->schemaPtr()) {
    auto diff = findSchemaDifferences(s->schema, inferred);
    OPDISPATCH_CHECK(!diff, "Tried to call operator ", s->schema, " with the C++ signature ", sig.name(),
                     " (inferred schema ", inferred.signatureString(), "), which does not match its schema: ",
                     diff.value_or(""));
  }
  entry_->registerTypedCallSignature(sig);
}

// --- lookup ------------------------------------------------------------------

OperatorEntry& Dispatcher::lookupOrCreate(const OperatorName& name) {
  auto it = operatorLookupTable_.find(name);
  if (it != operatorLookupTable_.end()) {
    return *it->second;
  }
  OperatorEntry& e = operators_.emplace_back(name);
  // Pick up the backend fallbacks registered before the entry existed (PyTorch:
  // the OperatorEntry constructor). Only a kernel registration recomputes the
  // table otherwise, so a def-only operator would see every key as missing.
  e.updateDispatchTable(*this);
  operatorLookupTable_.emplace(name, &e);
  entriesByName_[name.name].push_back(&e);
  return e;
}

std::optional<OperatorHandle> Dispatcher::findSchema(const OperatorName& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = operatorLookupTable_.find(name);
  if (it == operatorLookupTable_.end() || !it->second->hasSchema()) {
    return std::nullopt;
  }
  return OperatorHandle(it->second);
}

OperatorHandle Dispatcher::findSchemaOrThrow(const std::string& name, const std::string& overload_name) {
  if (auto op = findSchema(OperatorName(name, overload_name))) {
    return *op;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  std::string full = OperatorName(name, overload_name).toString();
  auto it = operatorLookupTable_.find(OperatorName(name, overload_name));
  OPDISPATCH_CHECK(it == operatorLookupTable_.end() || !isListed(*it->second), "Could not find schema for ", full,
                   ": it has kernels registered but no schema; define it first");
  std::vector<std::string> overloads;
  for (const auto& e : operators_) {
    if (e.operator_name().name == name && e.hasSchema()) {
      const auto& o = e.operator_name().overload_name;
      overloads.push_back(o.empty() ? "default" : o);
    }
  }
  std::sort(overloads.begin(), overloads.end());
  std::string known;
  for (const auto& o : overloads) {
    known += (known.empty() ? "" : ", ") + o;
  }
  throw Error(detail::str("Could not find schema for ", full,
                          overloads.empty() ? std::string("; no operator of that name is defined")
                                            : "; the defined overloads of " + name + " are: " + known));
}

std::optional<OperatorHandle> Dispatcher::findOp(const OperatorName& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = operatorLookupTable_.find(name);
  if (it == operatorLookupTable_.end() || !isListed(*it->second)) {
    return std::nullopt;
  }
  return OperatorHandle(it->second);
}

OperatorHandle Dispatcher::findOrRegisterName(const OperatorName& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  return OperatorHandle(&lookupOrCreate(name));
}

std::vector<OperatorName> Dispatcher::getAllOpNames() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OperatorName> names;
  for (const auto& e : operators_) {
    if (isListed(e)) {
      names.push_back(e.operator_name());
    }
  }
  return names;
}

std::vector<std::string> Dispatcher::findOverloadNames(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> out;
  auto it = entriesByName_.find(name);
  if (it != entriesByName_.end()) {
    for (const OperatorEntry* e : it->second) {
      if (e->hasSchema()) {
        out.push_back(e->operator_name().overload_name);
      }
    }
  }
  return out;
}

std::vector<OperatorHandle> Dispatcher::findDanglingImpls() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<OperatorHandle> out;
  for (auto& e : operators_) {
    if (isListed(e) && !e.hasSchema()) {
      out.emplace_back(&e);
    }
  }
  return out;
}

void Dispatcher::checkInvariants() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& e : operators_) {
    e.checkInvariants();
  }
}

// --- registration --------------------------------------------------------------

void Dispatcher::retire(AnnotatedKernelContainer& from, AnnotatedKernelContainerIterator it) {
  retiredKernels_.splice(retiredKernels_.end(), from, it);
}

RegistrationHandleRAII Dispatcher::registerDef(FunctionSchema schema, std::string debug,
                                               std::vector<std::string> tags) {
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& e = lookupOrCreate(schema.operator_name());
  OPDISPATCH_CHECK(!e.hasSchema(), "Tried to register an operator (", schema,
                   ") with the same name and overload name multiple times. Each overload's schema should only be "
                   "registered with a single call to def(). Duplicate registration: ",
                   debug, ". Original registration: ", e.debug());
  e.registerSchema(std::move(schema), std::move(debug), std::move(tags));
  ++e.def_count_;
  ++e.def_and_impl_count_;
  generation_.fetch_add(1, std::memory_order_release);
  return RegistrationHandleRAII([this, &e] { deregisterDef(e); });
}

void Dispatcher::deregisterDef(OperatorEntry& e) {
  std::lock_guard<std::mutex> lock(mutex_);
  retiredSchemas_.push_back(e.deregisterSchema());
  --e.def_count_;
  --e.def_and_impl_count_;
  generation_.fetch_add(1, std::memory_order_release);
}

RegistrationHandleRAII Dispatcher::registerImpl(OperatorName name, std::optional<DispatchKey> key,
                                                KernelFunction kernel, std::optional<CppSignature> cpp_signature,
                                                std::unique_ptr<FunctionSchema> inferred_schema,
                                                std::string debug) {
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& e = lookupOrCreate(name);
  auto it = e.registerKernel(*this, key, std::move(kernel), cpp_signature, std::move(inferred_schema),
                             std::move(debug));
  ++e.def_and_impl_count_;
  kernelGeneration_.fetch_add(1, std::memory_order_release);
  DispatchKey k = key.value_or(DispatchKey::CompositeImplicitAutograd);
  return RegistrationHandleRAII([this, &e, k, it] { deregisterImpl(e, k, it); });
}

void Dispatcher::deregisterImpl(OperatorEntry& e, DispatchKey key, AnnotatedKernelContainerIterator it) {
  OperatorKernel* functor = it->kernel.functor();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    retire(e.kernelsFor(key), it);
    e.afterKernelRemoved(*this, key);
    --e.def_and_impl_count_;
    kernelGeneration_.fetch_add(1, std::memory_order_release);
  }
  if (functor) {
    functor->retire();
  }
}

RegistrationHandleRAII Dispatcher::registerFallback(DispatchKey key, KernelFunction kernel, std::string debug) {
  std::lock_guard<std::mutex> lock(mutex_);
  OPDISPATCH_CHECK_VALUE(isRuntimeDispatchKey(key), "a backend fallback needs a runtime dispatch key, got ", key,
                         " (", debug, ")");
  auto& slot = backendFallbackKernels_[static_cast<int>(key)];
  OPDISPATCH_CHECK(slot.empty(), "Tried to register multiple backend fallbacks for the same dispatch key ", key,
                   "; previous registration ", slot.empty() ? "" : slot.front().debug, ", new registration ",
                   debug, ". Remove the previous fallback first.");
  slot.emplace_front(std::move(kernel), std::nullopt, nullptr, std::move(debug));
  for (auto& e : operators_) {
    e.updateDispatchTableEntry(*this, key);
  }
  kernelGeneration_.fetch_add(1, std::memory_order_release);
  return RegistrationHandleRAII([this, key] { deregisterFallback(key); });
}

void Dispatcher::deregisterFallback(DispatchKey key) {
  OperatorKernel* functor = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slot = backendFallbackKernels_[static_cast<int>(key)];
    functor = slot.front().kernel.functor();
    retire(slot, slot.begin());
    for (auto& e : operators_) {
      e.updateDispatchTableEntry(*this, key);
    }
    kernelGeneration_.fetch_add(1, std::memory_order_release);
    // A fallback registered at an alias key is one functor in several slots
    // (Library::_fallback). Retire it with the last of them: a call that
    // reaches a slot still registered must find it working, not retired
    // (a retired kernel redispatches to the same slot, forever).
    for (const auto& other : backendFallbackKernels_) {
      if (functor != nullptr && !other.empty() && other.front().kernel.functor() == functor) {
        functor = nullptr;
      }
    }
  }
  if (functor) {
    functor->retire();
  }
}

RegistrationHandleRAII Dispatcher::registerLibrary(std::string ns, std::string debug) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = libraries_.find(ns);
  OPDISPATCH_CHECK(found == libraries_.end(), "Only a single OPDISPATCH_LIBRARY (a library of kind DEF) can be used "
                   "to register the namespace ", ns,
                   "; please put all of your definitions in a single OPDISPATCH_LIBRARY block. If you were trying "
                   "to specify implementations, consider using OPDISPATCH_LIBRARY_IMPL (kind IMPL, which can be "
                   "duplicated). If you really intended to define operators for a single namespace in a "
                   "distributed way, you can use OPDISPATCH_LIBRARY_FRAGMENT (kind FRAGMENT). Previous "
                   "registration of the library was ",
                   found == libraries_.end() ? "" : found->second, "; latest registration was ", debug);
  libraries_.emplace(ns, std::move(debug));
  return RegistrationHandleRAII([this, ns] {
    std::lock_guard<std::mutex> lock(mutex_);
    libraries_.erase(ns);
  });
}

RegistrationHandleRAII Dispatcher::registerPythonModule(const OperatorName& name, std::string pymodule,
                                                        std::string context) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& records = pythonModules_[name];
  auto it = records.emplace(records.end(), std::move(pymodule), std::move(context));
  return RegistrationHandleRAII([this, name, it] {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = pythonModules_.find(name);
    found->second.erase(it);
    if (found->second.empty()) {
      pythonModules_.erase(found);
    }
  });
}

std::optional<std::pair<std::string, std::string>> Dispatcher::getPyStub(const OperatorName& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = pythonModules_.find(name);
  if (found == pythonModules_.end()) {
    return std::nullopt;
  }
  return found->second.back();
}

// --- calls -------------------------------------------------------------------------

void Dispatcher::callBoxed(const OperatorHandle& op, Stack* stack) const {
  const OperatorEntry& e = op.entry();
  const AnnotatedSchema* s = e.schemaPtr();
  if (OPDISPATCH_UNLIKELY(s == nullptr)) {
    e.schema();
  }
  OPDISPATCH_CHECK(stack->size() >= s->num_arguments, "boxed call of ", e.operator_name(), " needs ",
                   s->num_arguments, " arguments on the stack but it holds ", stack->size());
  DispatchKeySet ks = e.computeDispatchKeySetBoxed(*s, *stack);
  e.callKernelBoxed(op, *s, ks, stack);
}

void Dispatcher::redispatchBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
  const OperatorEntry& e = op.entry();
  DispatchKeySet masked = ks & e.nonFallthroughKeys();
  if (OPDISPATCH_UNLIKELY(e.bumpsVersions(masked))) {
    if (const AnnotatedSchema* s = e.schemaPtr()) {
      e.callKernelBoxed(op, *s, masked, stack);
      return;
    }
  }
  e.lookup(masked).callBoxed(op, masked, stack);
}

void OperatorHandle::callBoxedForDispatchKey(DispatchKey k, Stack* stack) const {
  const OperatorEntry& e = *entry_;
  const AnnotatedSchema* s = e.schemaPtr();
  if (OPDISPATCH_UNLIKELY(s == nullptr)) {
    e.schema();
  }
  OPDISPATCH_CHECK(stack->size() >= s->num_arguments, "boxed call of ", e.operator_name(), " needs ",
                   s->num_arguments, " arguments on the stack but it holds ", stack->size());
  const AnnotatedKernel* chosen = nullptr;
  {
    std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
    chosen = e.getKernelForDispatchKey(k);
  }
  // The kernel node outlives the lock: deregistered kernels are never freed (Note [Kernel lifetime]).
  if (chosen == nullptr) {
    OPDISPATCH_CHECK(!isAliasDispatchKey(k), "operator ", e.operator_name(), " has no kernel registered at ", k,
                     "; register one there (e.g. Library.impl(name, fn, \"", k,
                     "\")) or call the operator normally");
    chosen = e.dispatchTable_[static_cast<int>(k)].load(std::memory_order_acquire);
  }
  OPDISPATCH_CHECK(!chosen->kernel.isFallthrough(), "the kernel of ", e.operator_name(), " for ", k,
                   " is a fallthrough, which cannot be called directly; call the operator normally");
  DispatchKeySet ks = e.computeDispatchKeySetBoxed(*s, *stack);
  chosen->kernel.callBoxed(*this, ks, stack);
}

bool Dispatcher::hasBackendFallbackForDispatchKey(DispatchKey k) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return backendFallbackKernel(k) != nullptr;
}

} // namespace opdispatch
