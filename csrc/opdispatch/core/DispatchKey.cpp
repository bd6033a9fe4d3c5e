// Names and backend/autograd relations of DispatchKey.
#include <opdispatch/core/DispatchKey.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
constexpr const char* kKeyNames[kNumDispatchKeys] = {
    "Undefined",
    "CPU",
    "CUDA",
    "XLA",
    "MPS",
    "Meta",
    "PrivateUse1",
    "QuantizedCPU",
    "SparseCPU",
    "BackendSelect",
    "Python",
    "Functionalize",
    "ADInplaceOrView",
    "AutogradOther",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradXLA",
    "AutogradMPS",
    "AutogradMeta",
    "AutogradPrivateUse1",
    "AutocastCPU",
    "AutocastCUDA",
    "FuncTorchBatched",
    "FuncTorchVmapMode",
    "PythonTLSSnapshot",
    "PreDispatch",
    "PythonDispatcher",
    "Autograd",
    "CompositeImplicitAutograd",
    "FuncTorchBatchedDecomposition",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
};
} // namespace

DispatchKey getAutogradKeyFromBackend(DispatchKey backend) {
  switch (backend) {
    case DispatchKey::CPU:
      return DispatchKey::AutogradCPU;
    case DispatchKey::CUDA:
      return DispatchKey::AutogradCUDA;
    case DispatchKey::XLA:
      return DispatchKey::AutogradXLA;
    case DispatchKey::MPS:
      return DispatchKey::AutogradMPS;
    case DispatchKey::Meta:
      return DispatchKey::AutogradMeta;
    case DispatchKey::PrivateUse1:
      return DispatchKey::AutogradPrivateUse1;
    case DispatchKey::QuantizedCPU:
    case DispatchKey::SparseCPU:
      return DispatchKey::AutogradOther;
    default:
      return DispatchKey::Undefined;
  }
}

const char* toString(DispatchKey k) {
  auto i = static_cast<int>(k);
  return i < kNumDispatchKeys ? kKeyNames[i] : "UNKNOWN_DISPATCH_KEY";
}

std::ostream& operator<<(std::ostream& os, DispatchKey k) { return os << toString(k); }

DispatchKey parseDispatchKey(const std::string& name) {
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    if (name == kKeyNames[i]) {
      return static_cast<DispatchKey>(i);
    }
  }
  std::string valid;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    valid += (i ? ", " : "");
    valid += kKeyNames[i];
  }
  throw ValueError(detail::str("could not parse dispatch key '", name,
                               "'; valid dispatch keys are: ", valid));
}

} // namespace opdispatch
