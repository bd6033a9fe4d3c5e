// OperatorEntry: kernel registration per key and the computation of the
// dispatch table from it (the precedence rules of DESIGN.md).
#include <opdispatch/dispatch/OperatorEntry.h>

#include <sstream>

#include <opdispatch/core/Exception.h>
#include <opdispatch/core/PyInterpreter.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/schema/InferSchema.h>

namespace opdispatch {

namespace {

// Note [The fake impl of an operator defined in C++ lives in Python]
// A C++ library that calls set_python_module("mod") before defining an
// operator says its fake impl is registered by the Python module `mod`. A Meta
// call of such an operator with no Meta kernel means that registration has not
// happened: the error says which module to import (or, if it is imported, that
// the fake impl is missing), as PyTorch's Dispatcher::throwIfHasPythonModule.
// FakeTensorMode and opcheck reach it through their Meta calls. It runs before
// the missing-kernel report, with no lock held (getPyStub takes the
// registration lock).
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
  throw NotImplementedError(detail::str(name, ": We could not find the fake impl for this operator. The operator "
                                        "specified that you may need to import the '", pymodule,
                                        "' Python module to load the fake impl. ", context));
}

void missingKernel(const OperatorHandle& op, DispatchKeySet ks, Stack*) {
  DispatchKey k = ks.highestPriorityTypeId();
  if (k == DispatchKey::Meta) {
    throwIfHasPythonModule(op.operator_name());
  }
  op.entry().reportError(k);
}

const AnnotatedKernel& missingKernelEntry() {
  static const AnnotatedKernel k(KernelFunction::makeFromBoxedFunctionWithKeyset<&missingKernel>(), std::nullopt,
                                 nullptr, "missing");
  return k;
}

const AnnotatedKernel& ambiguousAutogradOtherEntry() {
  static const AnnotatedKernel k(KernelFunction::makeAmbiguousAutogradOther(), std::nullopt, nullptr,
                                 "ambiguous_autogradother");
  return k;
}

// Every table index: Undefined, then each runtime key.
DispatchKey tableKey(int index) { return static_cast<DispatchKey>(index); }

} // namespace

AnnotatedSchema::AnnotatedSchema(FunctionSchema s, std::string d, std::vector<std::string> t)
    : schema(std::move(s)), debug(std::move(d)), tags(std::move(t)) {
  num_arguments = static_cast<uint32_t>(schema.arguments().size());
  for (uint32_t i = 0; i < num_arguments; ++i) {
    if (schema.arguments()[i].type()->isTensorLike()) {
      tensor_arg_indices.push_back(i);
    }
    if (schema.arguments()[i].is_write()) {
      mutable_arg_indices.push_back(i);
    }
  }
}

void OperatorEntry::callKernelBoxedBumpingVersions(const OperatorHandle& op, const AnnotatedSchema& schema,
                                                   DispatchKeySet ks, Stack* stack) const {
  // The kernel pops its arguments: keep the mutated tensors to bump afterwards.
  std::vector<intrusive_ptr<TensorImpl>> mutated;
  const IValue* args = stack->data() + (stack->size() - schema.num_arguments);
  for (uint32_t i : schema.mutable_arg_indices) {
    const IValue& v = args[i];
    if (v.isTensor()) {
      mutated.push_back(v.toTensor().getIntrusivePtr());
    } else if (v.isTensorList()) {
      for (const auto& t : v.toTensorList()) {
        mutated.push_back(t.getIntrusivePtr());
      }
    } else if (v.isOptionalTensorList()) {
      for (const auto& t : v.toOptionalTensorList()) {
        if (t) {
          mutated.push_back(t->getIntrusivePtr());
        }
      }
    }
  }
  lookup(ks).callBoxed(op, ks, stack);
  for (const auto& t : mutated) {
    if (t) {
      t->bump_version();
    }
  }
}

OperatorEntry::OperatorEntry(OperatorName name) : nonFallthroughKeys_(~uint64_t(0)), name_(std::move(name)) {
  for (auto& e : dispatchTable_) {
    e.store(&missingKernelEntry(), std::memory_order_relaxed);
  }
}

DispatchKeySet OperatorEntry::computeDispatchKeySetBoxed(const AnnotatedSchema& schema, const Stack& stack) const {
  DispatchKeySet ks;
  const IValue* args = stack.data() + (stack.size() - schema.num_arguments);
  for (uint32_t i : schema.tensor_arg_indices) {
    const IValue& v = args[i];
    if (OPDISPATCH_LIKELY(v.isTensor())) {
      if (const TensorImpl* impl = v.unsafeToTensorImpl()) {
        ks = ks | impl->key_set();
      }
    } else if (v.isTensorList()) {
      for (const auto& t : v.toTensorList()) {
        ks = ks | t.key_set();
      }
    } else if (v.isOptionalTensorList()) {
      for (const auto& t : v.toOptionalTensorList()) {
        if (t) {
          ks = ks | t->key_set();
        }
      }
    } else if (v.isGenericList()) {
      for (const auto& e : v.toGenericList()) {
        if (e.isTensor()) {
          ks = ks | e.toTensor().key_set();
        }
      }
    }
  }
  return computeDispatchKeySet(ks);
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
  return s ? s->debug : none;
}

const std::vector<std::string>& OperatorEntry::tags() const {
  static const std::vector<std::string> none;
  const AnnotatedSchema* s = schemaPtr();
  return s ? s->tags : none;
}

namespace {
constexpr uint64_t keyBit(DispatchKey k) { return uint64_t(1) << static_cast<int>(k); }
} // namespace

const AnnotatedKernel* OperatorEntry::getKernelForDispatchKey(DispatchKey k) const {
  if ((kernelKeys_ & keyBit(k)) == 0) {
    return nullptr;
  }
  for (const auto& [key, list] : kernels_) {
    if (key == k) {
      return &list.front();
    }
  }
  return nullptr;
}

bool OperatorEntry::hasKernelForDispatchKey(DispatchKey k) const { return getKernelForDispatchKey(k) != nullptr; }

bool OperatorEntry::hasKernelForAnyDispatchKey(DispatchKeySet ks) const {
  // Bit i of a DispatchKeySet is runtime key i + 1 (Note [DispatchKeySet representation]).
  return ((kernelKeys_ >> 1) & ks.raw_repr()) != 0;
}

bool OperatorEntry::isKernelFallthroughKernel(DispatchKey k) const {
  const AnnotatedKernel* a = getKernelForDispatchKey(k);
  return a != nullptr && a->kernel.isFallthrough();
}

bool OperatorEntry::hasComputedKernelForDispatchKey(DispatchKey k) const {
  OPDISPATCH_CHECK_VALUE(k == DispatchKey::Undefined || isRuntimeDispatchKey(k),
                         "hasComputedKernelForDispatchKey needs a runtime key, got alias key ", k);
  return dispatchTable_[static_cast<int>(k)].load(std::memory_order_acquire) != &missingKernelEntry();
}

std::optional<CppSignature> OperatorEntry::cppSignature() const {
  for (const auto& kv : kernels_) {
    for (const auto& k : kv.second) {
      if (k.cpp_signature) {
        return k.cpp_signature;
      }
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

void OperatorEntry::registerSchema(FunctionSchema schema, std::string debug, std::vector<std::string> tags) {
  OPDISPATCH_INTERNAL_ASSERT(!hasSchema(), "registerSchema on ", name_, " which already has a schema");
  OPDISPATCH_INTERNAL_ASSERT(schema.operator_name() == name_, "schema ", schema, " registered for ", name_);
  for (const auto& kv : kernels_) {
    for (const auto& k : kv.second) {
      checkKernelSchema(k, schema, debug, kv.first);
    }
  }
  auto* annotated = new AnnotatedSchema(std::move(schema), std::move(debug), std::move(tags));
  hasMutableArguments_.store(!annotated->mutable_arg_indices.empty(), std::memory_order_relaxed);
  schema_.store(annotated, std::memory_order_release);
}

const AnnotatedSchema* OperatorEntry::deregisterSchema() {
  const AnnotatedSchema* old = schemaPtr();
  OPDISPATCH_INTERNAL_ASSERT(old != nullptr, "deregisterSchema on ", name_, " which has no schema");
  schema_.store(nullptr, std::memory_order_release);
  hasMutableArguments_.store(false, std::memory_order_relaxed);
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
    OPDISPATCH_CHECK(*typedCallSignature_ == sig, "Tried to access or call operator ", name_,
                     " with C++ signature ", sig.name(), " but it is already called as ",
                     typedCallSignature_->name(), "; use one signature for all typed handles of an operator.");
  }
  typedCallSignature_ = sig;
}

AnnotatedKernelContainer& OperatorEntry::kernelsFor(DispatchKey key) {
  for (auto& kv : kernels_) {
    if (kv.first == key) {
      return kv.second;
    }
  }
  kernels_.emplace_back(key, AnnotatedKernelContainer());
  kernelKeys_ |= keyBit(key);
  return kernels_.back().second;
}

AnnotatedKernelContainerIterator OperatorEntry::registerKernel(const Dispatcher& dispatcher,
                                                               std::optional<DispatchKey> key, KernelFunction kernel,
                                                               std::optional<CppSignature> sig,
                                                               std::unique_ptr<FunctionSchema> inferred,
                                                               std::string debug) {
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
  auto& list = kernelsFor(k);
  list.emplace_front(std::move(candidate));
  updateDispatchTable(dispatcher);
  return list.begin();
}

void OperatorEntry::afterKernelRemoved(const Dispatcher& dispatcher, DispatchKey key) {
  for (auto it = kernels_.begin(); it != kernels_.end(); ++it) {
    if (it->first == key && it->second.empty()) {
      kernels_.erase(it);
      kernelKeys_ &= ~keyBit(key);
      break;
    }
  }
  updateDispatchTable(dispatcher);
}

std::pair<const AnnotatedKernel*, const char*> OperatorEntry::computeDispatchTableEntryWithDebug(
    const Dispatcher& dispatcher, DispatchKey k) const {
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
  constexpr uint64_t kAliasKeyBits = ((uint64_t(1) << (static_cast<int>(kLastAliasKey) + 1)) - 1) &
                                     ~((uint64_t(1) << static_cast<int>(kFirstAliasKey)) - 1);
  if ((kernelKeys_ & (keyBit(k) | kAliasKeyBits)) == 0) {
    if (const AnnotatedKernel* fallback = dispatcher.backendFallbackKernel(k)) {
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
  if (const AnnotatedKernel* fallback = dispatcher.backendFallbackKernel(k)) {
    return {fallback, "backend fallback"};
  }
  // 4.
  return {&missingKernelEntry(), "missing"};
}

void OperatorEntry::updateDispatchTable(const Dispatcher& dispatcher) {
  uint64_t non_fallthrough = 0;
  for (int i = 0; i < kDispatchTableSize; ++i) {
    const AnnotatedKernel* chosen = computeDispatchTableEntryWithDebug(dispatcher, tableKey(i)).first;
    dispatchTable_[i].store(chosen, std::memory_order_release);
    if (i > 0 && !chosen->kernel.isFallthrough()) {
      non_fallthrough |= DispatchKeySet(tableKey(i)).raw_repr();
    }
  }
  nonFallthroughKeys_.store(non_fallthrough, std::memory_order_relaxed);
}

void OperatorEntry::updateDispatchTableEntry(const Dispatcher& dispatcher, DispatchKey k) {
  const AnnotatedKernel* chosen = computeDispatchTableEntryWithDebug(dispatcher, k).first;
  dispatchTable_[static_cast<int>(k)].store(chosen, std::memory_order_release);
  uint64_t bit = DispatchKeySet(k).raw_repr();
  uint64_t mask = nonFallthroughKeys_.load(std::memory_order_relaxed);
  nonFallthroughKeys_.store(chosen->kernel.isFallthrough() ? (mask & ~bit) : (mask | bit), std::memory_order_relaxed);
}

std::string OperatorEntry::dumpState() const {
  std::ostringstream oss;
  oss << "name: " << name_ << "\n";
  if (const AnnotatedSchema* s = schemaPtr()) {
    oss << "schema: " << s->schema << "\n";
    oss << "debug: " << s->debug << "\n";
    oss << "alias analysis kind: FROM_SCHEMA\n";
  } else {
    oss << "schema: (none)\n";
  }
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    auto key = static_cast<DispatchKey>(i);
    for (const auto& [k, list] : kernels_) {
      if (k != key) {
        continue;
      }
      int n = 0;
      for (const auto& ak : list) {
        oss << toString(key) << (isAliasDispatchKey(key) ? "[alias]" : "") << (n > 0 ? " (inactive)" : "") << ": "
            << ak.debug << " :: "
            << (ak.inferred_function_schema ? ak.inferred_function_schema->signatureString() : "(none)") << " [ "
            << ak.kernel.dumpState() << "]\n";
        ++n;
      }
    }
  }
  return oss.str();
}

std::string OperatorEntry::dumpComputedTable() const {
  std::ostringstream oss;
  const Dispatcher& dispatcher = Dispatcher::singleton();
  for (int i = 0; i < kDispatchTableSize; ++i) {
    auto [kernel, reason] = computeDispatchTableEntryWithDebug(dispatcher, tableKey(i));
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
  for (const auto& kv : kernels_) {
    OPDISPATCH_INTERNAL_ASSERT(!kv.second.empty(), "empty kernel list for ", kv.first, "\n", dumpState());
    OPDISPATCH_INTERNAL_ASSERT(kv.first != DispatchKey::Undefined, dumpState());
  }
  const Dispatcher& dispatcher = Dispatcher::singleton();
  uint64_t non_fallthrough = 0;
  for (int i = 0; i < kDispatchTableSize; ++i) {
    const AnnotatedKernel* expected = computeDispatchTableEntryWithDebug(dispatcher, tableKey(i)).first;
    OPDISPATCH_INTERNAL_ASSERT(dispatchTable_[i].load() == expected, "stale dispatch table entry for ", tableKey(i),
                               "\nCanonical state\n~~~~~~~~~~~\n", dumpState(),
                               "\nComputed table:\n~~~~~~~~~~~\n", dumpComputedTable());
    if (i > 0 && !expected->kernel.isFallthrough()) {
      non_fallthrough |= DispatchKeySet(tableKey(i)).raw_repr();
    }
  }
  OPDISPATCH_INTERNAL_ASSERT(non_fallthrough == nonFallthroughKeys_.load(), "stale fallthrough mask for ", name_,
                             ": stored ", nonFallthroughKeys(), ", expected ",
                             DispatchKeySet(DispatchKeySet::RAW, non_fallthrough));
}

std::string OperatorEntry::listAllDispatchKeys() const {
  std::string out = "[";
  bool first = true;
  for (int i = 1; i < kDispatchTableSize; ++i) {
    if (dispatchTable_[i].load() == &missingKernelEntry()) {
      continue;
    }
    out += first ? "" : ", ";
    out += toString(tableKey(i));
    first = false;
  }
  return out + "]";
}

void OperatorEntry::reportError(DispatchKey k) const {
  if (k == DispatchKey::Undefined) {
    throw NotImplementedError(detail::str(
        "There were no tensor arguments to this function (e.g., you passed an empty list of Tensors), or every "
        "dispatch key of the arguments was excluded (thread-local state) or skipped (a fallthrough kernel), but no "
        "fallback function is registered for schema ",
        name_,
        ". This usually means that this function requires a non-empty list of Tensors, or that you (the "
        "operator writer) forgot to register a CompositeExplicitAutograd or CompositeImplicitAutograd kernel. "
        "Available functions are ",
        listAllDispatchKeys(), ".\n\n", dumpComputedTable()));
  }
  throw NotImplementedError(detail::str("Could not run '", name_, "' with arguments from the '", k,
                                        "' backend: the operator has no kernel for this key. '", name_,
                                        "' is only available for these keys: ", listAllDispatchKeys(),
                                        ". Register a kernel for ", k, " (or a CompositeExplicitAutograd / "
                                        "CompositeImplicitAutograd kernel) to support it.\n\n",
                                        dumpComputedTable()));
}

} // namespace opdispatch
