// The backend fallbacks registered when libopdispatch loads: fallthrough for
// keys that only matter when a layer above registers kernels for them, and
// the autograd fallback (see AutogradFallback.h) and the PythonTLSSnapshot
// fallback (see PythonTLSSnapshot.h).
#include <atomic>

#include <opdispatch/dispatch/AutogradFallback.h>
#include <opdispatch/dispatch/PythonTLSSnapshot.h>
#include <opdispatch/library.h>

namespace opdispatch {

namespace {
std::atomic<AutogradFallbackHook> autogradHook{nullptr};

void autogradFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  if (AutogradFallbackHook hook = autogradHook.load(std::memory_order_acquire)) {
    hook(op, ks, stack);
    return;
  }
  op.redispatchBoxed(ks & after_autograd_keyset, stack);
}
} // namespace

AutogradFallbackHook setAutogradFallbackHook(AutogradFallbackHook hook) { return autogradHook.exchange(hook); }

} // namespace opdispatch

using opdispatch::CppFunction;

OPDISPATCH_LIBRARY_IMPL(_, Autograd, m) {
  m.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&opdispatch::autogradFallback>());
}
OPDISPATCH_LIBRARY_IMPL(_, BackendSelect, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, Functionalize, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, ADInplaceOrView, m) { m.fallback(CppFunction::makeFallthrough()); }
// The autocast keys PyTorch itself gives a fallthrough; device plugins
// register their own for AutocastHPU, AutocastXLA and AutocastPrivateUse1.
OPDISPATCH_LIBRARY_IMPL(_, AutocastCPU, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, AutocastXPU, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, AutocastMPS, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, AutocastCUDA, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, FuncTorchVmapMode, m) { m.fallback(CppFunction::makeFallthrough()); }
OPDISPATCH_LIBRARY_IMPL(_, PythonTLSSnapshot, m) {
  m.fallback(CppFunction::makeFromBoxedFunctionWithKeyset<&opdispatch::pythonTLSSnapshotFallback>());
}
OPDISPATCH_LIBRARY_IMPL(_, PreDispatch, m) { m.fallback(CppFunction::makeFallthrough()); }
