// Dispatcher: registration under one mutex, lock-free boxed calls.
#include <opdispatch/dispatch/Dispatcher.h>

#include <algorithm>
#include <string_view>

#include <opdispatch/core/EditDistance.h>
#include <opdispatch/core/Exception.h>
#include <opdispatch/core/PyInterpreter.h>
#include <opdispatch/dispatch/CallUnit.h>
#include <opdispatch/dispatch/Reclaimer.h>
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
std::vector<DispatchTableEntryInfo> OperatorHandle::dispatchTableEntries() const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  std::vector<DispatchTableEntryInfo> out;
  out.reserve(kDispatchTableSize);
  for (int i = 0; i < kDispatchTableSize; ++i) {
    auto key = static_cast<DispatchKey>(i);
    auto [kernel, reason] = entry_->computeDispatchTableEntryWithDebug(key);
    out.push_back({key, kernel->debug, reason, kernel->kernel.isFallthrough()});
  }
  return out;
}

namespace {

// Note [The fake impl of an operator defined in C++ lives in Python]
// A C++ library that calls set_python_module("mod") before defining an
// operator says its fake impl is registered by the Python module `mod`. A Meta
// call of such an operator with no Meta kernel means that registration has not
// happened: the error says which module to import (or, if it is imported, that
// the fake impl is missing), as PyTorch's Dispatcher::throwIfHasPythonModule.
// FakeTensorMode and opcheck reach it through their Meta calls. It runs before
// the missing-kernel report takes the registration lock (getPyStub takes it).
void throwIfHasPythonModule(const OperatorName& name) {
  auto stub = Dispatcher::singleton().getPyStub(name);
  if (!stub) {
    return;
  }
  const auto& [pymodule, context] = *stub;
  auto imported = pyInterpreterHooks().isModuleImported;
  if (imported != nullptr && imported(pymodule.c_str())) {
    throw NotImplementedError(detail::str(name, ": We could not find the fake impl for this operator. "));
  }
  throw NotImplementedError(detail::str(name,
                                        ": We could not find the fake impl for this operator. The operator "
                                        "specified that you may need to import the '",
                                        pymodule, "' Python module to load the fake impl. ", context));
}

} // namespace

void OperatorHandle::reportError(DispatchKey k) const {
  if (k == DispatchKey::Meta) {
    throwIfHasPythonModule(operator_name());
  }
  // The message reads the registrations (Note [Kernel lifetime]); the call
  // path stays lock-free, only a call that fails takes the lock.
  Dispatcher& dispatcher = Dispatcher::singleton();
  std::lock_guard<std::mutex> lock(dispatcher.mutex_);
  entry_->reportError(k, dispatcher.danglingNearMissHint(operator_name()));
}

void OperatorHandle::checkTypedSignature(const CppSignature& sig, const FunctionSchema& inferred) const {
  std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
  if (const AnnotatedSchema* s = entry_->schemaPtr()) {
    auto diff = findSchemaDifferences(s->schema, inferred);
    OPDISPATCH_CHECK(!diff, "Tried to call operator ", s->schema, " with the C++ signature ", sig.name(),
                     " (inferred schema ", inferred.signatureString(),
                     "), which does not match its schema: ", diff.value_or(""));
  }
  entry_->registerTypedCallSignature(sig);
}

// --- lookup ------------------------------------------------------------------

OperatorEntry& Dispatcher::lookupOrCreate(const OperatorName& name) {
  auto it = operatorLookupTable_.find(name);
  if (it != operatorLookupTable_.end()) {
    return *it->second;
  }
  if (!freshEntry_) {
    freshEntry_ = std::make_unique<OperatorEntry>(OperatorName("", ""), backendFallbacks_);
  }
  OperatorEntry& e = operators_.emplace_back(name, backendFallbacks_, &freshEntry_->table());
  // (Keyed by views of the entry's own name: Note [Indexes view the entries' names].)
  operatorLookupTable_.emplace(e.operator_name(), std::prev(operators_.end()));
  OperatorEntry*& first = entriesByName_.try_emplace(e.operator_name().name, nullptr).first->second;
  OperatorEntry** link = &first;
  while (*link != nullptr) {
    link = &(*link)->nextSameName_;
  }
  *link = &e;
  return e;
}

std::optional<OperatorHandle> Dispatcher::findSchema(const OperatorName& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = operatorLookupTable_.find(name);
  if (it == operatorLookupTable_.end() || !it->second->hasSchema()) {
    return std::nullopt;
  }
  return OperatorHandle(&*it->second);
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
  auto same_name = entriesByName_.find(name);
  for (const OperatorEntry* e = same_name == entriesByName_.end() ? nullptr : same_name->second; e != nullptr;
       e = e->nextSameName_) {
    if (e->hasSchema()) {
      const auto& o = e->operator_name().overload_name;
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
  return OperatorHandle(&*it->second);
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
    for (const OperatorEntry* e = it->second; e != nullptr; e = e->nextSameName_) {
      if (e->hasSchema()) {
        out.push_back(e->operator_name().overload_name);
      }
    }
  }
  return out;
}

std::optional<std::string> Dispatcher::kernelDebug(const OperatorName& name, DispatchKey k) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = operatorLookupTable_.find(name);
  if (it == operatorLookupTable_.end()) {
    return std::nullopt;
  }
  const AnnotatedKernel* kernel = it->second->getKernelForDispatchKey(k);
  return kernel == nullptr ? std::nullopt : std::optional<std::string>(kernel->debug.str());
}

std::string Dispatcher::danglingNearMissHint(const OperatorName& name) const {
  std::string ns = name.getNamespace();
  std::string_view op = std::string_view(name.name).substr(ns.empty() ? 0 : ns.size() + 2);
  std::string named;
  for (const auto& e : operators_) {
    const OperatorName& other = e.operator_name();
    if (!isListed(e) || e.hasSchema() || other.getNamespace() != ns) {
      continue;
    }
    if (isNearMiss(op, std::string_view(other.name).substr(ns.empty() ? 0 : ns.size() + 2))) {
      named += detail::str(named.empty() ? "" : ", ", "'", other.toString(), "'");
    }
  }
  if (named.empty()) {
    return named;
  }
  return detail::str(" Kernels were registered for ", named,
                     ", which no definition names: did you mean to "
                     "register them for '",
                     name.toString(),
                     "'? (python -m opdispatch table <name> shows where "
                     "they were registered.)");
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

void Dispatcher::retireEntryIfDead(OperatorEntry& e) {
  if (e.retired_ || isListed(e) || e.handleCount_.load(std::memory_order_acquire) != 0) {
    return;
  }
  // No handle and no registration refers to it (handles are only made under
  // the lock, from the indexes below, or copied from a live handle).
  auto found = operatorLookupTable_.find(e.operator_name());
  OPDISPATCH_INTERNAL_ASSERT(found != operatorLookupTable_.end() && &*found->second == &e, "entry of ",
                             e.operator_name(), " is not indexed");
  auto retired = std::make_unique<std::list<OperatorEntry>>();
  retired->splice(retired->end(), operators_, found->second);
  operatorLookupTable_.erase(found);
  auto same_name = entriesByName_.find(e.operator_name().name);
  OperatorEntry** link = &same_name->second;
  while (*link != &e) {
    link = &(*link)->nextSameName_;
  }
  *link = e.nextSameName_;
  e.nextSameName_ = nullptr;
  if (same_name->second == nullptr) {
    entriesByName_.erase(same_name);
  } else if (same_name->first.data() == e.operator_name().name.data()) {
    // The key viewed e's name: it views the next entry's from now on.
    auto node = entriesByName_.extract(same_name);
    node.key() = node.mapped()->operator_name().name;
    entriesByName_.insert(std::move(node));
  }
  e.retired_ = true;
  Reclaimer::singleton().retire(retired.release());
}

void Dispatcher::releaseEntry(OperatorEntry& e) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    retireEntryIfDead(e);
  }
  Reclaimer::singleton().reclaimIfDue();
}

void OperatorHandle::release(OperatorEntry* e) noexcept {
  // Keeps *e while the Dispatcher decides: another thread may take and drop
  // a handle of it, and retire it, meanwhile (Note [Kernel lifetime]).
  CallGuard guard;
  if (e->handleCount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    Dispatcher::singleton().releaseEntry(*e);
  }
}

RegistrationHandleRAII Dispatcher::registerDef(FunctionSchema schema, InternedString debug,
                                               std::vector<std::string> tags,
                                               std::optional<AliasAnalysisKind> alias_analysis) {
  RegistrationHandleRAII handle = registerDefLocked(std::move(schema), std::move(debug), std::move(tags),
                                                    alias_analysis);
  Reclaimer::singleton().reclaimIfDue();  // the dispatch tables it replaced
  return handle;
}

RegistrationHandleRAII Dispatcher::registerDefLocked(FunctionSchema schema, InternedString debug,
                                                     std::vector<std::string> tags,
                                                     std::optional<AliasAnalysisKind> alias_analysis) {
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& e = lookupOrCreate(schema.operator_name());
  OPDISPATCH_CHECK(!e.hasSchema(), "Tried to register an operator (", schema,
                   ") with the same name and overload name multiple times. Each overload's schema should only be "
                   "registered with a single call to def(). Duplicate registration: ",
                   debug, ". Original registration: ", e.debug());
  e.registerSchema(std::move(schema), std::move(debug), std::move(tags), alias_analysis);
  ++e.def_count_;
  ++e.def_and_impl_count_;
  generation_.fetch_add(1, std::memory_order_release);
  return RegistrationHandleRAII([this, &e] { deregisterDef(e); });
}

void Dispatcher::setAliasAnalysis(const OperatorName& name, std::optional<AliasAnalysisKind> kind) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = operatorLookupTable_.find(name);
  OPDISPATCH_CHECK(it != operatorLookupTable_.end() && it->second->hasSchema(),
                   "cannot set the alias analysis kind of ", name, ": it is not defined");
  it->second->setAliasAnalysis(kind);
}

void Dispatcher::deregisterDef(OperatorEntry& e) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Reclaimer::singleton().retire(e.deregisterSchema());
    --e.def_count_;
    --e.def_and_impl_count_;
    generation_.fetch_add(1, std::memory_order_release);
    retireEntryIfDead(e);
  }
  Reclaimer::singleton().reclaimIfDue();
}

RegistrationHandleRAII Dispatcher::registerImpl(OperatorName name, std::optional<DispatchKey> key,
                                                KernelFunction kernel, std::optional<CppSignature> cpp_signature,
                                                std::unique_ptr<FunctionSchema> inferred_schema, InternedString debug) {
  RegistrationHandleRAII handle = registerImplLocked(std::move(name), key, std::move(kernel), std::move(cpp_signature),
                                                     std::move(inferred_schema), std::move(debug));
  Reclaimer::singleton().reclaimIfDue();  // the dispatch tables it replaced
  return handle;
}

RegistrationHandleRAII Dispatcher::registerImplLocked(OperatorName name, std::optional<DispatchKey> key,
                                                      KernelFunction kernel, std::optional<CppSignature> cpp_signature,
                                                      std::unique_ptr<FunctionSchema> inferred_schema,
                                                      InternedString debug) {
  std::lock_guard<std::mutex> lock(mutex_);
  OperatorEntry& e = lookupOrCreate(name);
  AnnotatedKernelContainerIterator it;
  try {
    it = e.registerKernel(key, std::move(kernel), cpp_signature, std::move(inferred_schema), std::move(debug));
  } catch (...) {
    retireEntryIfDead(e);  // an entry made for this registration goes with it
    throw;
  }
  ++e.def_and_impl_count_;
  kernelGeneration_.fetch_add(1, std::memory_order_release);
  // (Two words, which std::function keeps without a heap block of its own:
  // the key is found again from `it`, and the Dispatcher is the singleton.)
  return RegistrationHandleRAII([&e, it] { singleton().deregisterImpl(e, it); });
}

void Dispatcher::deregisterImpl(OperatorEntry& e, AnnotatedKernelContainerIterator it) {
  OperatorKernel* functor = it->kernel.functor();
  // Owned here until handed to the Reclaimer (after retire(): it may free it at once).
  auto retired = std::make_unique<AnnotatedKernelContainer>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    e.deregisterKernel(it, *retired);
    --e.def_and_impl_count_;
    kernelGeneration_.fetch_add(1, std::memory_order_release);
    retireEntryIfDead(e);
  }
  if (functor) {
    functor->retire();
  }
  Reclaimer::singleton().retire(retired.release());
  Reclaimer::singleton().reclaimIfDue();
}

RegistrationHandleRAII Dispatcher::registerFallback(DispatchKey key, KernelFunction kernel, std::string debug,
                                                    FallbackKind kind) {
  BackendFallbacks::Position position;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    position = backendFallbacks_.add(key, kind, std::move(kernel), std::move(debug));
    freshEntry_.reset();
    for (auto& e : operators_) {
      e.updateFallback(key);
    }
    kernelGeneration_.fetch_add(1, std::memory_order_release);
  }
  Reclaimer::singleton().reclaimIfDue();  // the dispatch tables it replaced
  return RegistrationHandleRAII([this, position] { deregisterFallback(position); });
}

void Dispatcher::deregisterFallback(const BackendFallbacks::Position& position) {
  OperatorKernel* functor = position.it->kernel.functor();
  // The functor is shared with the fallback's other slots and kept alive by
  // `retired` until it goes to the Reclaimer.
  auto retired = std::make_unique<AnnotatedKernelContainer>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    backendFallbacks_.remove(position, *retired);
    freshEntry_.reset();
    for (auto& e : operators_) {
      e.updateFallback(position.key);
    }
    kernelGeneration_.fetch_add(1, std::memory_order_release);
    // A fallback registered at an alias key is one functor in several slots
    // (Library::_fallback). Retire it with the last of them: a call that
    // reaches a slot still registered must find it working, not retired
    // (a retired Python kernel redispatches to the same slot, forever).
    if (functor != nullptr && backendFallbacks_.uses(functor)) {
      functor = nullptr;
    }
  }
  if (functor) {
    functor->retire();
  }
  Reclaimer::singleton().retire(retired.release());
  Reclaimer::singleton().reclaimIfDue();
}

RegistrationHandleRAII Dispatcher::registerLibrary(std::string ns, std::string debug) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = libraries_.find(ns);
  OPDISPATCH_CHECK(found == libraries_.end(), "Only a single OPDISPATCH_LIBRARY can be used to register the namespace ",
                   ns, ": one library of kind DEF holds its definitions (Python: Library(\"", ns,
                   "\", \"DEF\"); C++: OPDISPATCH_LIBRARY(", ns,
                   ", m)). To add kernels from elsewhere, use kind IMPL (Library(\"", ns,
                   "\", \"IMPL\", key); OPDISPATCH_LIBRARY_IMPL), which can be repeated; to define more operators "
                   "of the namespace elsewhere, use kind FRAGMENT (Library(\"",
                   ns,
                   "\", \"FRAGMENT\"); OPDISPATCH_LIBRARY_FRAGMENT). If the code that made the first one ran "
                   "again (a re-run notebook cell, say), destroy the first: drop its Library object or call its "
                   "_destroy(). Previous registration of the library was ",
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

void detail::throwBadBoxedCall(const OperatorEntry& e, const AnnotatedSchema* s, size_t stack_size) {
  if (s == nullptr) {
    e.schema();  // throws, naming the operator
  }
  throw Error(detail::str("boxed call of ", e.operator_name(), " needs ", s->num_arguments,
                          " arguments on the stack but it holds ", stack_size));
}

void detail::throwBadBoxedResultCount(const AnnotatedSchema& schema, int64_t left) {
  throw Error(detail::str("the boxed kernel of ", schema.schema.operator_name(), " left ", left,
                          " value(s) on the stack in place of its arguments, but the schema declares ",
                          schema.num_returns,
                          " return(s); a boxed kernel pops its arguments and pushes exactly its results"));
}

void OperatorHandle::redispatchBoxed(DispatchKeySet ks, Stack* stack) const {
  CallGuard guard;
  BoxedCallFrame frame(entry_->schemaPtr(), stack);
  detail::redispatchInCall(*this, ks, frame);
}

void OperatorHandle::callBoxedForDispatchKey(DispatchKey k, Stack* stack) const {
  CallGuard guard;
  const OperatorEntry& e = *entry_;
  const AnnotatedSchema* s = detail::boxedCallSchema(e, stack);
  std::optional<KernelRef> chosen;
  {
    std::lock_guard<std::mutex> lock(Dispatcher::singleton().mutex_);
    if (const AnnotatedKernel* direct = e.getKernelForDispatchKey(k)) {
      chosen = direct->kernel.ref();
    }
  }
  // The kernel's functor outlives the lock: `guard` keeps it (Note [Reclaiming retired kernels]).
  if (!chosen) {
    OPDISPATCH_CHECK(!isAliasDispatchKey(k), "operator ", e.operator_name(), " has no kernel registered at ", k,
                     "; register one there (e.g. Library.impl(name, fn, \"", k, "\")) or call the operator normally");
    chosen = e.table().entry(static_cast<int>(k));
  }
  OPDISPATCH_CHECK(!chosen->isFallthrough(), "the kernel of ", e.operator_name(), " for ", k,
                   " is a fallthrough, which cannot be called directly; call the operator normally");
  BoxedCallFrame frame(s, stack);
  DispatchKeySet ks = applyLocalDispatchKeySet(frame.argumentKeySet()) & e.nonFallthroughKeys();
  chosen->callBoxed(*this, ks, stack);
}

bool Dispatcher::hasBackendFallbackForDispatchKey(DispatchKey k) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return backendFallbacks_.lookup(k) != nullptr;
}

} // namespace opdispatch
