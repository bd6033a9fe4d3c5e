// DispatchKeySet printing and the alias-key expansions.
#include <opdispatch/core/DispatchKeySet.h>

#include <ostream>

namespace opdispatch {

std::string toString(DispatchKeySet ks) {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (DispatchKey k : ks) {
    if (!first) {
      out += ", ";
    }
    out += toString(k);
    first = false;
  }
  return out + ")";
}

std::ostream& operator<<(std::ostream& os, DispatchKeySet ks) { return os << toString(ks); }

DispatchKeySet getBackendKeySetFromAutograd(DispatchKey k) {
  if (k == DispatchKey::AutogradOther) {
    return autogradother_backends;
  }
  if (k >= DispatchKey::AutogradCPU && k <= kLastAutogradKey) {
    return DispatchKeySet(static_cast<DispatchKey>(static_cast<int>(kFirstBackendKey) + static_cast<int>(k) -
                                                   static_cast<int>(DispatchKey::AutogradCPU)));
  }
  return DispatchKeySet();
}

DispatchKeySet tensorKeySet(DispatchKey backend, bool requires_grad) {
  DispatchKeySet ks(backend);
  if (requires_grad) {
    ks = ks.add(DispatchKey::ADInplaceOrView).add(getAutogradKeyFromBackend(backend));
  }
  return ks;
}

} // namespace opdispatch
