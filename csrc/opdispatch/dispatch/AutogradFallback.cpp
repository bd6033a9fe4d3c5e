// The core's autograd fallback.
#include <opdispatch/dispatch/AutogradFallback.h>

#include <atomic>

#include <opdispatch/dispatch/OperatorHandle.h>

namespace opdispatch {

namespace {
std::atomic<AutogradFallbackMode> autograd_fallback_mode{AutogradFallbackMode::Warn};
} // namespace

void setAutogradFallbackMode(AutogradFallbackMode mode) {
  autograd_fallback_mode.store(mode, std::memory_order_relaxed);
}

AutogradFallbackMode getAutogradFallbackMode() { return autograd_fallback_mode.load(std::memory_order_relaxed); }

void autogradFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  op.redispatchBoxed(ks & after_autograd_keyset, stack);
}

} // namespace opdispatch
