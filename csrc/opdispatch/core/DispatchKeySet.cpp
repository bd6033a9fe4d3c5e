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
  switch (k) {
    case DispatchKey::AutogradCPU:
      return DispatchKeySet(DispatchKey::CPU);
    case DispatchKey::AutogradCUDA:
      return DispatchKeySet(DispatchKey::CUDA);
    case DispatchKey::AutogradXLA:
      return DispatchKeySet(DispatchKey::XLA);
    case DispatchKey::AutogradMPS:
      return DispatchKeySet(DispatchKey::MPS);
    case DispatchKey::AutogradMeta:
      return DispatchKeySet(DispatchKey::Meta);
    case DispatchKey::AutogradPrivateUse1:
      return DispatchKeySet(DispatchKey::PrivateUse1);
    case DispatchKey::AutogradOther:
      return autogradother_backends;
    default:
      return DispatchKeySet();
  }
}

DispatchKeySet tensorKeySet(DispatchKey backend, bool requires_grad) {
  DispatchKeySet ks(backend);
  if (requires_grad) {
    ks = ks.add(DispatchKey::ADInplaceOrView).add(getAutogradKeyFromBackend(backend));
  }
  return ks;
}

} // namespace opdispatch
