// Names and backend/autograd relations of DispatchKey.
#include <opdispatch/core/DispatchKey.h>

#include <iterator>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
constexpr const char* kKeyNames[] = {
#define OPDISPATCH_KEY_NAME(k) #k,
    OPDISPATCH_FORALL_DISPATCH_KEYS(OPDISPATCH_KEY_NAME)
#undef OPDISPATCH_KEY_NAME
};
static_assert(std::size(kKeyNames) == kNumDispatchKeys, "every dispatch key has a name");

constexpr int offset(DispatchKey k, DispatchKey from) { return static_cast<int>(k) - static_cast<int>(from); }
} // namespace

DispatchKey getAutogradKeyFromBackend(DispatchKey backend) {
  if (backend >= kFirstBackendKey && backend <= kLastDeviceBackendKey) {
    return static_cast<DispatchKey>(static_cast<int>(DispatchKey::AutogradCPU) + offset(backend, kFirstBackendKey));
  }
  if (backend == DispatchKey::QuantizedCPU || backend == DispatchKey::SparseCPU) {
    return DispatchKey::AutogradOther;
  }
  return DispatchKey::Undefined;
}

const char* toString(DispatchKey k) {
  auto i = static_cast<int>(k);
  return i < kNumDispatchKeys ? kKeyNames[i] : "UNKNOWN_DISPATCH_KEY";
}

std::ostream& operator<<(std::ostream& os, DispatchKey k) { return os << toString(k); }

DispatchKey parseDispatchKey(const std::string& name) {
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    if (name[0] == kKeyNames[i][0] && name == kKeyNames[i]) {  // (the first letter first: registrations parse keys)
      return static_cast<DispatchKey>(i);
    }
  }
  std::string valid;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    valid += (i ? ", " : "");
    valid += kKeyNames[i];
  }
  throw ValueError(detail::str("could not parse dispatch key '", name, "'; valid dispatch keys are: ", valid));
}

} // namespace opdispatch
