// Names and backend/autograd relations of DispatchKey.
#include <opdispatch/core/DispatchKey.h>

#include <iterator>
#include <string>

#include <opdispatch/core/EditDistance.h>
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

/// " Did you mean 'K'?" for the key name closest to `name`, if one is close
/// (at most a third of its letters differ, case aside), else "".
std::string closestKeyHint(const std::string& name) {
  const char* best = nullptr;
  size_t bestDistance = 0;
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    size_t d = editDistance(name, kKeyNames[i]);
    if (isNearMiss(name, kKeyNames[i]) && (best == nullptr || d < bestDistance)) {
      best = kKeyNames[i];
      bestDistance = d;
    }
  }
  return best ? detail::str(" Did you mean '", best, "'?") : std::string();
}
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
  throw ValueError(detail::str("could not parse dispatch key '", name, "'.", closestKeyHint(name),
                               " Valid dispatch keys are: ", valid));
}

} // namespace opdispatch
