// DispatchKey: the runtime keys (one bit each in a DispatchKeySet, ordered by
// priority) and the alias keys that name sets of runtime keys.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace opdispatch {

// Note [Flat dispatch keys]
// PyTorch encodes a runtime key as (functionality bit, backend bit) so that
// e.g. AutogradCPU = Autograd functionality x CPU backend. opdispatch keeps
// one bit per runtime key instead: the enum value minus one is the bit index
// in DispatchKeySet, and a higher bit means a higher priority, so the kernel
// for a key set is found with one count-leading-zeros. The order of the keys
// below is PyTorch's order of functionalities. The visible difference from
// PyTorch: excluding one backend key (say CPU) excludes only that key.
enum class DispatchKey : uint8_t {
  Undefined = 0, ///< No bit; the table entry used when a call has no keys.

  // Backends, lowest priority.
  CPU,
  CUDA,
  XLA,
  MPS,
  Meta,
  PrivateUse1,
  QuantizedCPU, ///< Uses AutogradOther, as in PyTorch.
  SparseCPU, ///< Uses AutogradOther, as in PyTorch.

  BackendSelect,
  Python,
  Functionalize,
  ADInplaceOrView,

  AutogradOther,
  AutogradCPU,
  AutogradCUDA,
  AutogradXLA,
  AutogradMPS,
  AutogradMeta,
  AutogradPrivateUse1,

  AutocastCPU,
  AutocastCUDA,
  FuncTorchBatched,
  FuncTorchVmapMode,
  PythonTLSSnapshot,
  PreDispatch,
  PythonDispatcher, ///< Highest-priority runtime key.

  // Alias keys: never in a runtime DispatchKeySet; each names a set of
  // runtime keys (see getRuntimeDispatchKeySet).
  Autograd,
  CompositeImplicitAutograd,
  FuncTorchBatchedDecomposition,
  CompositeExplicitAutograd,
  CompositeExplicitAutogradNonFunctional,

  NumDispatchKeys, ///< Sentinel, not a key.
};

constexpr DispatchKey kFirstBackendKey = DispatchKey::CPU;
constexpr DispatchKey kLastBackendKey = DispatchKey::SparseCPU;
constexpr DispatchKey kFirstAutogradKey = DispatchKey::AutogradOther;
constexpr DispatchKey kLastAutogradKey = DispatchKey::AutogradPrivateUse1;
constexpr DispatchKey kLastRuntimeKey = DispatchKey::PythonDispatcher;
constexpr DispatchKey kFirstAliasKey = DispatchKey::Autograd;
constexpr DispatchKey kLastAliasKey = DispatchKey::CompositeExplicitAutogradNonFunctional;

/// Number of runtime keys with a bit (Undefined excluded).
constexpr int kNumRuntimeKeys = static_cast<int>(kLastRuntimeKey);
/// Number of dispatch table entries: one per runtime key plus Undefined.
constexpr int kDispatchTableSize = kNumRuntimeKeys + 1;
/// Number of keys, runtime and alias, Undefined included.
constexpr int kNumDispatchKeys = static_cast<int>(DispatchKey::NumDispatchKeys);
static_assert(kNumRuntimeKeys <= 64, "every runtime key needs a bit of a uint64_t");

constexpr bool isRuntimeDispatchKey(DispatchKey k) {
  return k > DispatchKey::Undefined && k <= kLastRuntimeKey;
}
constexpr bool isAliasDispatchKey(DispatchKey k) {
  return k >= kFirstAliasKey && k <= kLastAliasKey;
}
constexpr bool isBackendDispatchKey(DispatchKey k) {
  return k >= kFirstBackendKey && k <= kLastBackendKey;
}
constexpr bool isAutogradDispatchKey(DispatchKey k) {
  return k >= kFirstAutogradKey && k <= kLastAutogradKey;
}

/// The autograd key of a backend key (CPU -> AutogradCPU; QuantizedCPU and
/// SparseCPU -> AutogradOther). Undefined for a key that is not a backend.
/// PyTorch: getAutogradKeyFromBackend.
DispatchKey getAutogradKeyFromBackend(DispatchKey backend);

/// The key's name as PyTorch spells it ("CPU", "AutogradCPU", ...).
const char* toString(DispatchKey k);
std::ostream& operator<<(std::ostream& os, DispatchKey k);

/// Parses a key name (runtime or alias, or "Undefined").
/// Throws ValueError naming the string and listing the valid names.
DispatchKey parseDispatchKey(const std::string& name);

} // namespace opdispatch
