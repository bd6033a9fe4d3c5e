// The backend fallbacks libopdispatch installs when it loads, as defaults a
// user's fallback can replace (Note [Default fallbacks]): the autograd
// fallback for every autograd key (AutogradFallback.h), the PythonTLSSnapshot
// fallback (PythonTLSSnapshot.h), and fallthrough for the keys that only
// matter when a layer above registers kernels for them.
#include <initializer_list>
#include <string>
#include <vector>

#include <opdispatch/dispatch/AutogradFallback.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/PythonTLSSnapshot.h>

namespace opdispatch {

namespace {

class DefaultFallbacks final {
 public:
  DefaultFallbacks() {
    for (DispatchKey k : autograd_dispatch_keyset) {
      add(k, KernelFunction::makeFromBoxedFunctionWithKeyset<&autogradFallback>(), __LINE__);
    }
    add(DispatchKey::PythonTLSSnapshot, pythonTLSSnapshotFallbackKernel(), __LINE__);
    // The autocast keys PyTorch itself gives a fallthrough; device plugins
    // register their own for AutocastHPU, AutocastXLA and AutocastPrivateUse1.
    for (DispatchKey k : {DispatchKey::BackendSelect, DispatchKey::Functionalize, DispatchKey::ADInplaceOrView,
                          DispatchKey::AutocastCPU, DispatchKey::AutocastXPU, DispatchKey::AutocastMPS,
                          DispatchKey::AutocastCUDA, DispatchKey::FuncTorchVmapMode, DispatchKey::PreDispatch}) {
      add(k, KernelFunction::makeFallthrough(), __LINE__);
    }
  }

 private:
  void add(DispatchKey k, KernelFunction kernel, int line) {
    handles_.push_back(Dispatcher::singleton().registerFallback(
        k, std::move(kernel), "registered at " + std::string(__FILE__) + ":" + std::to_string(line),
        FallbackKind::Default));
  }
  std::vector<RegistrationHandleRAII> handles_;
};

const DefaultFallbacks kDefaultFallbacks;

} // namespace

} // namespace opdispatch
