// BackendFallbacks: user fallbacks over defaults (Note [Default fallbacks]).
#include <opdispatch/dispatch/BackendFallbacks.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

const AnnotatedKernel* BackendFallbacks::lookup(DispatchKey k) const {
  if (!isRuntimeDispatchKey(k)) {
    return nullptr;
  }
  const Slot& slot = slots_[static_cast<int>(k)];
  if (!slot.user.empty()) {
    return &slot.user.front();
  }
  return slot.defaults.empty() ? nullptr : &slot.defaults.front();
}

BackendFallbacks::Position BackendFallbacks::add(DispatchKey k, FallbackKind kind, KernelFunction kernel,
                                                 std::string debug) {
  OPDISPATCH_CHECK_VALUE(isRuntimeDispatchKey(k), "a backend fallback needs a runtime dispatch key, got ", k, " (",
                         debug, ")");
  Slot& slot = slots_[static_cast<int>(k)];
  OPDISPATCH_CHECK(kind == FallbackKind::Default || slot.user.empty() || k == DispatchKey::AutogradPrivateUse1,
                   "Tried to register multiple backend fallbacks for the same dispatch key ", k,
                   "; previous registration ", slot.user.empty() ? "" : slot.user.front().debug.str(),
                   ", new registration ", debug, ". Remove the previous fallback first.");
  AnnotatedKernelContainer& list = kind == FallbackKind::User ? slot.user : slot.defaults;
  list.emplace_front(std::move(kernel), std::nullopt, nullptr, std::move(debug));
  return {k, kind, list.begin()};
}

void BackendFallbacks::remove(const Position& p, AnnotatedKernelContainer& retired) {
  Slot& slot = slots_[static_cast<int>(p.key)];
  AnnotatedKernelContainer& list = p.kind == FallbackKind::User ? slot.user : slot.defaults;
  retired.splice(retired.end(), list, p.it);
}

bool BackendFallbacks::uses(const OperatorKernel* functor) const {
  for (const Slot& slot : slots_) {
    for (const auto* list : {&slot.user, &slot.defaults}) {
      for (const AnnotatedKernel& k : *list) {
        if (k.kernel.functor() == functor) {
          return true;
        }
      }
    }
  }
  return false;
}

} // namespace opdispatch
