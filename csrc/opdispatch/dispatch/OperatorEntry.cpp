// OperatorEntry: kernel registration per key and the computation of the
// dispatch table from it (the precedence rules of docs/architecture.rst).
#include <opdispatch/dispatch/OperatorEntry.h>

#include <sstream>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/OperatorHandle.h>
#include <opdispatch/schema/InferSchema.h>

namespace opdispatch {

namespace {

void missingKernel(const OperatorHandle& op, DispatchKeySet ks, Stack*) { op.reportError(ks.highestPriorityTypeId()); }

const AnnotatedKernel& missingKernelEntry() {
  static const AnnotatedKernel k(KernelFunction::makeFromBoxedFunctionWithKeyset<&missingKernel>(), std::nullopt,
                                 nullptr, "missing");
  return k;
}

bool isMissing(KernelRef k) { return k.boxedFunction() == missingKernelEntry().kernel.ref().boxedFunction(); }

const AnnotatedKernel& ambiguousAutogradOtherEntry() {
  static const AnnotatedKernel k(KernelFunction::makeAmbiguousAutogradOther(), std::nullopt, nullptr,
                                 "ambiguous_autogradother");
  return k;
}

// Every table index: Undefined, then each runtime key.
DispatchKey tableKey(int index) { return static_cast<DispatchKey>(index); }

uint8_t aliasBit(DispatchKey k) {
  return static_cast<uint8_t>(1u << (static_cast<int>(k) - static_cast<int>(kFirstAliasKey)));
}

/// The table entries a kernel registered at `k` can change (PyTorch:
/// OperatorEntry::updateDispatchTable): the runtime keys `k` stands for;
/// for a backend key also its autograd key, whose CompositeImplicitAutograd
/// choice depends on the backend's kernels (precedence 2.3); Undefined for
/// the Composite aliases; and for CompositeExplicitAutograd every autograd
/// key (2.3 again).
std::pair<DispatchKeySet, bool> affectedEntries(DispatchKey k) {
  DispatchKeySet keys = getRuntimeDispatchKeySet(k);
  if (isBackendDispatchKey(k)) {
    keys = keys.add(getAutogradKeyFromBackend(k));
  }
  if (k == DispatchKey::CompositeExplicitAutograd) {
    keys = keys | autograd_dispatch_keyset;
  }
  bool undefined = k == DispatchKey::CompositeImplicitAutograd || k == DispatchKey::CompositeExplicitAutograd ||
                   k == DispatchKey::CompositeExplicitAutogradNonFunctional;
  if (k == DispatchKey::ADInplaceOrView) {
    // Whether the entries that bump versions do depends on this key's kernel (Note [Post-kernel effects]).
    keys = keys | backend_dispatch_keyset.add(DispatchKey::Python);
    undefined = true;
  }
  return {keys, undefined};
}

} // namespace

OperatorEntry::OperatorEntry(OperatorName name, const BackendFallbacks& fallbacks, const DispatchTable* fresh)
    : table_(missingKernelEntry().kernel.ref(), fresh),
      name_(std::move(name)),
      fallbacks_(fallbacks) {
  if (fresh != nullptr) {
    return;
  }
  // Pick up the backend fallbacks registered before the entry existed
  // (PyTorch: the OperatorEntry constructor). No call can reach the entry
  // yet, so the all-missing table it replaces is freed at once.
  DispatchTable::Update update(table_);
  fillDispatchTable(update, DispatchKeySet(DispatchKeySet::FULL), true);
  update.publishUnseen();
}

const FunctionSchema& OperatorEntry::schema() const {
  const AnnotatedSchema* s = schemaPtr();
  OPDISPATCH_CHECK(s != nullptr, "operator ", name_,
                   " has no schema: it has kernels but was never defined (or its definition was removed). "
                   "Define it with Library::def / opdispatch.library.define before using it.");
  return s->schema;
}

const std::string& OperatorEntry::debug() const {
  static const std::string none = "(no schema)";
  const AnnotatedSchema* s = schemaPtr();
  return s ? s->debug.str() : none;
}

const std::vector<std::string>& OperatorEntry::tags() const {
  static const std::vector<std::string> none;
  const AnnotatedSchema* s = schemaPtr();
  return s ? s->tags : none;
}

bool OperatorEntry::hasKernelForDispatchKey(DispatchKey k) const {
  return isAliasDispatchKey(k) ? (aliasKernelKeys_ & aliasBit(k)) != 0 : runtimeKernelKeys_.has(k);
}

const AnnotatedKernel* OperatorEntry::getKernelForDispatchKey(DispatchKey k) const {
  if (!hasKernelForDispatchKey(k)) {
    return nullptr;
  }
  for (const AnnotatedKernel& kernel : kernels_) {
    if (kernel.key == k) {
      return &kernel;
    }
  }
  return nullptr;
}

bool OperatorEntry::isKernelFallthroughKernel(DispatchKey k) const {
  const AnnotatedKernel* a = getKernelForDispatchKey(k);
  return a != nullptr && a->kernel.isFallthrough();
}

bool OperatorEntry::hasComputedKernelForDispatchKey(DispatchKey k) const {
  OPDISPATCH_CHECK_VALUE(k == DispatchKey::Undefined || isRuntimeDispatchKey(k),
                         "hasComputedKernelForDispatchKey needs a runtime key, got alias key ", k);
  return !isMissing(table_.entry(static_cast<int>(k)));
}

std::optional<CppSignature> OperatorEntry::cppSignature() const {
  for (const AnnotatedKernel& k : kernels_) {
    if (k.cpp_signature) {
      return k.cpp_signature;
    }
  }
  return std::nullopt;
}

void OperatorEntry::checkKernelSchema(const AnnotatedKernel& k, const FunctionSchema& declared,
                                      const std::string& declared_debug, std::optional<DispatchKey> key) const {
  if (!k.inferred_function_schema) {
    return;
  }
  auto diff = findSchemaDifferences(declared, *k.inferred_function_schema);
  OPDISPATCH_CHECK(!diff.has_value(),
                   "Inferred operator schema for a C++ kernel function doesn't match the expected function "
                   "schema.\n  operator: ",
                   name_, "\n  expected schema: ", declared, "\n    ", declared_debug,
                   "\n  inferred schema: ", k.inferred_function_schema->signatureString(), "\n    ", k.debug,
                   "\n  dispatch key: ", key ? toString(*key) : "(none: CompositeImplicitAutograd)",
                   "\n  reason: ", diff.value_or(""),
                   "\nFix the C++ kernel's signature or the schema so that they agree.");
}

void OperatorEntry::registerSchema(FunctionSchema schema, InternedString debug, std::vector<std::string> tags,
                                   std::optional<AliasAnalysisKind> alias_analysis) {
  OPDISPATCH_INTERNAL_ASSERT(!hasSchema(), "registerSchema on ", name_, " which already has a schema");
  OPDISPATCH_INTERNAL_ASSERT(schema.operator_name() == name_, "schema ", schema, " registered for ", name_);
  for (const AnnotatedKernel& k : kernels_) {
    checkKernelSchema(k, schema, debug, k.key);
  }
  const auto* annotated = new AnnotatedSchema(std::move(schema), std::move(debug), std::move(tags));
  schema_.store(annotated, std::memory_order_release);
  boxed_call_summary_.store(annotated->boxed_call_summary.bits(), std::memory_order_relaxed);
  aliasAnalysis_ = alias_analysis;
  updateSchemaEffects(*annotated);
}

void OperatorEntry::updateSchemaEffects(const AnnotatedSchema& s) {
  // Only the entries that bump versions depend on the schema (tableEntry):
  // those of the Python key, the backend keys and Undefined, for a schema that mutates.
  if (!s.mutable_arg_indices.empty()) {
    updateDispatchTable(backend_dispatch_keyset.add(DispatchKey::Python), true);
  }
}

const AnnotatedSchema* OperatorEntry::deregisterSchema() {
  const AnnotatedSchema* old = schemaPtr();
  OPDISPATCH_INTERNAL_ASSERT(old != nullptr, "deregisterSchema on ", name_, " which has no schema");
  boxed_call_summary_.store(0, std::memory_order_relaxed);
  schema_.store(nullptr, std::memory_order_release);
  updateSchemaEffects(*old);
  return old;
}

void OperatorEntry::registerTypedCallSignature(const CppSignature& sig) {
  if (auto existing = cppSignature()) {
    OPDISPATCH_CHECK(*existing == sig, "Tried to access or call operator ", name_,
                     " with a wrong C++ signature.\n  correct signature:  ", existing->name(),
                     "\n  accessed/called as: ", sig.name(),
                     "\nMake sure the function type in OperatorHandle::typed<...>() matches the registered "
                     "kernels' signature.");
  }
  if (typedCallSignature_) {
    OPDISPATCH_CHECK(*typedCallSignature_ == sig, "Tried to access or call operator ", name_, " with C++ signature ",
                     sig.name(), " but it is already called as ", typedCallSignature_->name(),
                     "; use one signature for all typed handles of an operator.");
  }
  typedCallSignature_ = sig;
}

void OperatorEntry::updateKernelKey(DispatchKey key) {
  bool held = false;
  for (const AnnotatedKernel& k : kernels_) {
    if (k.key == key) {
      held = true;
      break;
    }
  }
  if (isAliasDispatchKey(key)) {
    aliasKernelKeys_ = held ? (aliasKernelKeys_ | aliasBit(key))
                            : (aliasKernelKeys_ & static_cast<uint8_t>(~aliasBit(key)));
  } else {
    runtimeKernelKeys_ = held ? runtimeKernelKeys_.add(key) : runtimeKernelKeys_.remove(key);
  }
}

AnnotatedKernelContainerIterator OperatorEntry::registerKernel(std::optional<DispatchKey> key, KernelFunction kernel,
                                                               std::optional<CppSignature> sig,
                                                               std::unique_ptr<FunctionSchema> inferred,
                                                               InternedString debug) {
  DispatchKey k = key.value_or(DispatchKey::CompositeImplicitAutograd);
  OPDISPATCH_CHECK_VALUE(k != DispatchKey::Undefined, "cannot register a kernel for ", name_,
                         " at dispatch key Undefined; register it with no key (CompositeImplicitAutograd) or "
                         "at CompositeExplicitAutograd instead");
  if (sig) {
    auto existing = cppSignature();
    if (!existing) {
      existing = typedCallSignature_;
    }
    OPDISPATCH_CHECK(!existing || *existing == *sig, "\nMismatch in kernel C++ signatures\n  operator: ", name_,
                     "\n  existing kernels and typed handles use: ", existing ? existing->name() : "",
                     "\n  new kernel: ", sig->name(), "\n    ", debug, "\n    dispatch key: ", k,
                     "\nEvery unboxed C++ kernel of an operator must have the same C++ signature.");
  }
  AnnotatedKernel candidate(std::move(kernel), sig, std::move(inferred), std::move(debug));
  if (const AnnotatedSchema* s = schemaPtr()) {
    checkKernelSchema(candidate, s->schema, s->debug, k);
  }
  candidate.key = k;
  kernels_.emplace_front(std::move(candidate));
  updateKernelKey(k);
  auto [keys, undefined] = affectedEntries(k);
  updateDispatchTable(keys, undefined);
  return kernels_.begin();
}

namespace {
/// Whether `it` is an element of `list`.
bool holds(const AnnotatedKernelContainer& list, AnnotatedKernelContainerIterator it) {
  for (auto i = list.begin(); i != list.end(); ++i) {
    if (i == AnnotatedKernelContainer::const_iterator(it)) {
      return true;
    }
  }
  return false;
}
} // namespace

void OperatorEntry::deregisterKernel(AnnotatedKernelContainerIterator it, AnnotatedKernelContainer& retired) {
  OPDISPATCH_INTERNAL_ASSERT(holds(kernels_, it), "deregisterKernel on ", name_, ": the kernel is not registered");
  const DispatchKey key = it->key;
  retired.splice(retired.end(), kernels_, it);
  updateKernelKey(key);
  auto [keys, undefined] = affectedEntries(key);
  updateDispatchTable(keys, undefined);
}

void OperatorEntry::updateFallback(DispatchKey k) { updateDispatchTable(DispatchKeySet(k), false); }

std::pair<const AnnotatedKernel*, const char*> OperatorEntry::computeDispatchTableEntryWithDebug(DispatchKey k) const {
  // Precedence for runtime key k (PyTorch: computeDispatchTableEntryWithDebug):
  // 1. a kernel registered directly at k;
  // 2.1 CompositeExplicitAutogradNonFunctional, 2.2 CompositeExplicitAutograd,
  //     if k is one of their keys (or Undefined);
  // 2.3 CompositeImplicitAutograd, if k is one of its keys (or Undefined) and
  //     no kernel exists for k's backends nor at CompositeExplicitAutograd;
  //     for AutogradOther with a kernel at one of its backends, the
  //     ambiguous-autogradother kernel instead;
  // 2.4 Autograd, for autograd keys;
  // 2.5 FuncTorchBatchedDecomposition, for FuncTorchBatched;
  // 3. the backend fallback registered for k;
  // 4. missing.
  const bool undefined = k == DispatchKey::Undefined;

  // Without a kernel at k or at any alias key, only 3. and 4. can apply.
  if (!runtimeKernelKeys_.has(k) && aliasKernelKeys_ == 0) {
    if (const AnnotatedKernel* fallback = fallbacks_.lookup(k)) {
      return {fallback, "backend fallback"};
    }
    return {&missingKernelEntry(), "missing"};
  }

  // 1.
  if (const AnnotatedKernel* direct = getKernelForDispatchKey(k)) {
    return {direct, "kernel"};
  }
  // 2.1, 2.2
  for (DispatchKey alias :
       {DispatchKey::CompositeExplicitAutogradNonFunctional, DispatchKey::CompositeExplicitAutograd}) {
    if (undefined || isIncludedInAlias(k, alias)) {
      if (const AnnotatedKernel* a = getKernelForDispatchKey(alias)) {
        return {a, "default backend kernel"};
      }
    }
  }
  // 2.3
  if (undefined || isIncludedInAlias(k, DispatchKey::CompositeImplicitAutograd)) {
    if (const AnnotatedKernel* math = getKernelForDispatchKey(DispatchKey::CompositeImplicitAutograd)) {
      bool has_backend_kernel = hasKernelForAnyDispatchKey(getBackendKeySetFromAutograd(k)) ||
                                hasKernelForDispatchKey(DispatchKey::CompositeExplicitAutograd);
      if (k == DispatchKey::AutogradOther && hasKernelForAnyDispatchKey(autogradother_backends)) {
        return {&ambiguousAutogradOtherEntry(), "ambiguous autogradother"};
      }
      if (!has_backend_kernel) {
        return {math, "math kernel"};
      }
    }
  }
  // 2.4
  if (isIncludedInAlias(k, DispatchKey::Autograd)) {
    if (const AnnotatedKernel* a = getKernelForDispatchKey(DispatchKey::Autograd)) {
      return {a, "autograd kernel"};
    }
  }
  // 2.5
  if (isIncludedInAlias(k, DispatchKey::FuncTorchBatchedDecomposition)) {
    if (const AnnotatedKernel* a = getKernelForDispatchKey(DispatchKey::FuncTorchBatchedDecomposition)) {
      return {a, "batched kernel"};
    }
  }
  // 3.
  if (const AnnotatedKernel* fallback = fallbacks_.lookup(k)) {
    return {fallback, "backend fallback"};
  }
  // 4.
  return {&missingKernelEntry(), "missing"};
}

KernelRef OperatorEntry::tableEntry(DispatchKey k, const AnnotatedKernel& chosen) const {
  // Note [Post-kernel effects]: versions are bumped below autograd, for the
  // kernels of the Python key and of backend keys (and Undefined), unless the
  // operator's ADInplaceOrView kernel is a fallthrough; the alias check is the kernel's.
  if (chosen.kernel.isFallthrough()) {
    return chosen.kernel.ref();  // never run: no effects (Note [Hot dispatch table])
  }
  uint32_t effects = KernelRef::kNoEffects;
  const AnnotatedSchema* s = schemaPtr();
  if (s != nullptr && !s->mutable_arg_indices.empty() &&
      (k == DispatchKey::Undefined || k == DispatchKey::Python || isBackendDispatchKey(k)) &&
      !isKernelFallthroughKernel(DispatchKey::ADInplaceOrView)) {
    effects |= KernelRef::kBumpsVersions;
  }
  if (chosen.kernel.checksOutputAliasing()) {
    effects |= KernelRef::kChecksOutputAliasing;
  }
  return chosen.kernel.ref(effects);
}

void OperatorEntry::updateDispatchTable(DispatchKeySet keys, bool undefined) {
  DispatchTable::Update update(table_);
  fillDispatchTable(update, keys, undefined);
  update.publish();
}

void OperatorEntry::fillDispatchTable(DispatchTable::Update& update, DispatchKeySet keys, bool undefined) const {
  if (undefined) {
    update.set(0,
               tableEntry(DispatchKey::Undefined, *computeDispatchTableEntryWithDebug(DispatchKey::Undefined).first));
  }
  for (DispatchKey k : keys) {
    update.set(static_cast<int>(k), tableEntry(k, *computeDispatchTableEntryWithDebug(k).first));
  }
}

std::string OperatorEntry::dumpState() const {
  std::ostringstream oss;
  oss << "name: " << name_ << "\n";
  if (const AnnotatedSchema* s = schemaPtr()) {
    oss << "schema: " << s->schema << "\n";
    oss << "debug: " << s->debug << "\n";
    oss << "alias analysis kind: " << (aliasAnalysis_ ? toString(*aliasAnalysis_) : "CONSERVATIVE (default)") << "\n";
  } else {
    oss << "schema: (none)\n";
  }
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto key = static_cast<DispatchKey>(i);
    int n = 0;
    for (const AnnotatedKernel& ak : kernels_) {
      if (ak.key != key) {
        continue;
      }
      oss << toString(key) << (isAliasDispatchKey(key) ? "[alias]" : "") << (n > 0 ? " (inactive)" : "") << ": "
          << ak.debug
          << " :: " << (ak.inferred_function_schema ? ak.inferred_function_schema->signatureString() : "(none)")
          << " [ " << ak.kernel.dumpState() << "]\n";
      ++n;
    }
  }
  return oss.str();
}

std::string OperatorEntry::dumpComputedTable() const {
  std::ostringstream oss;
  for (int i = 0; i < kDispatchTableSize; ++i) {
    auto [kernel, reason] = computeDispatchTableEntryWithDebug(tableKey(i));
    if (kernel == &missingKernelEntry()) {
      continue;
    }
    oss << toString(tableKey(i)) << ": " << (kernel->kernel.isFallthrough() ? "fallthrough " : "") << kernel->debug
        << " [" << reason << "]\n";
  }
  return oss.str();
}

void OperatorEntry::checkInvariants() const {
  if (const AnnotatedSchema* s = schemaPtr()) {
    OPDISPATCH_INTERNAL_ASSERT(s->schema.operator_name() == name_, dumpState());
  }
  for (const AnnotatedKernel& k : kernels_) {
    OPDISPATCH_INTERNAL_ASSERT(k.key != DispatchKey::Undefined, dumpState());
    OPDISPATCH_INTERNAL_ASSERT(hasKernelForDispatchKey(k.key), "kernel key ", k.key, " not recorded\n", dumpState());
  }
  uint64_t non_fallthrough = 0;
  for (int i = 0; i < kDispatchTableSize; ++i) {
    KernelRef expected = tableEntry(tableKey(i), *computeDispatchTableEntryWithDebug(tableKey(i)).first);
    OPDISPATCH_INTERNAL_ASSERT(table_.entry(i) == expected, "stale dispatch table entry for ", tableKey(i),
                               "\nCanonical state\n~~~~~~~~~~~\n", dumpState(), "\nComputed table:\n~~~~~~~~~~~\n",
                               dumpComputedTable());
    if (i > 0 && !expected.isFallthrough()) {
      non_fallthrough |= DispatchKeySet(tableKey(i)).raw_repr();
    }
  }
  OPDISPATCH_INTERNAL_ASSERT(non_fallthrough == nonFallthroughKeys().raw_repr(), "stale fallthrough mask for ", name_,
                             ": stored ", nonFallthroughKeys(), ", expected ",
                             DispatchKeySet(DispatchKeySet::RAW, non_fallthrough));
}

std::string OperatorEntry::listAllDispatchKeys() const {
  std::string out = "[";
  bool first = true;
  for (int i = 1; i < kDispatchTableSize; ++i) {
    if (isMissing(table_.entry(i))) {
      continue;
    }
    out += first ? "" : ", ";
    out += toString(tableKey(i));
    first = false;
  }
  return out + "]";
}

void OperatorEntry::reportError(DispatchKey k, const std::string& hint) const {
  if (k == DispatchKey::Undefined) {
    throw NotImplementedError(detail::str(
        "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), or every "
        "dispatch key of the arguments was excluded (thread-local state) or skipped (a fallthrough kernel), but no "
        "fallback function is registered for schema ",
        name_,
        ". This usually means that this function requires a non-empty list of Tensors, or that you (the "
        "operator writer) forgot to register a CompositeExplicitAutograd or CompositeImplicitAutograd kernel. "
        "Available functions are ",
        listAllDispatchKeys(), ".", hint, "\n\n", dumpComputedTable()));
  }
  throw NotImplementedError(detail::str("Could not run '", name_, "' with arguments from the '", k,
                                        "' backend: the operator has no kernel for this key. '", name_,
                                        "' is only available for these keys: ", listAllDispatchKeys(),
                                        ". Register a kernel for ", k,
                                        " (or a CompositeExplicitAutograd / "
                                        "CompositeImplicitAutograd kernel) to support it.",
                                        hint, "\n\n", dumpComputedTable()));
}

} // namespace opdispatch
