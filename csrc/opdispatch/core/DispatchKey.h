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
// below is PyTorch's order of functionalities, and within one functionality
// PyTorch's order of backends. The visible difference from PyTorch: excluding
// one backend key (say CPU) excludes only that key.
//
// The keys are listed once, in OPDISPATCH_FORALL_DISPATCH_KEYS; the enum and
// the names are generated from that list, so every key has a name.

/// The backends that have a device type (Device.h) and an autograd key of
/// their own, in PyTorch's backend order. `_(prefix##Backend)` for each, so
/// one list gives both CPU... and AutogradCPU...
// clang-format off
#define OPDISPATCH_FORALL_DEVICE_BACKENDS(_, prefix)                                                            \
  _(prefix##CPU) _(prefix##CUDA) _(prefix##HIP) _(prefix##XLA) _(prefix##MPS) _(prefix##IPU) _(prefix##XPU) \
  _(prefix##HPU) _(prefix##VE) _(prefix##Lazy) _(prefix##MTIA) _(prefix##MAIA) _(prefix##PrivateUse1)        \
  _(prefix##Meta)
// clang-format on

/// Every key, runtime keys from the lowest priority to the highest, then the
/// alias keys. Autocast keys exist for the backends whose autocast PyTorch
/// users register kernels or fallthroughs at (PyTorch's order).
// clang-format off
#define OPDISPATCH_FORALL_DISPATCH_KEYS(_)                                                                   \
  _(Undefined)                                                                                             \
  OPDISPATCH_FORALL_DEVICE_BACKENDS(_, )                                                                   \
  _(QuantizedCPU) _(SparseCPU)                                                                             \
  _(BackendSelect) _(Python) _(Functionalize) _(ADInplaceOrView)                                           \
  _(AutogradOther) OPDISPATCH_FORALL_DEVICE_BACKENDS(_, Autograd)                                          \
  _(AutocastCPU) _(AutocastXPU) _(AutocastHPU) _(AutocastXLA) _(AutocastMPS) _(AutocastCUDA)               \
  _(AutocastPrivateUse1)                                                                                   \
  _(FuncTorchBatched) _(FuncTorchVmapMode) _(PythonTLSSnapshot) _(PreDispatch) _(PythonDispatcher)         \
  _(Autograd) _(CompositeImplicitAutograd) _(FuncTorchBatchedDecomposition) _(CompositeExplicitAutograd) \
  _(CompositeExplicitAutogradNonFunctional)
// clang-format on

enum class DispatchKey : uint8_t {
#define OPDISPATCH_DEFINE_KEY(k) k,
  OPDISPATCH_FORALL_DISPATCH_KEYS(OPDISPATCH_DEFINE_KEY)
#undef OPDISPATCH_DEFINE_KEY
      NumDispatchKeys, ///< Sentinel, not a key.
  /// The older name of CompositeImplicitAutograd, which C++ registrations
  /// still use (OPDISPATCH_LIBRARY_IMPL(ns, CatchAll, m)); the same key, so
  /// it is named and shown as CompositeImplicitAutograd and, as in PyTorch
  /// 2.13, not parsed from the string "CatchAll". PyTorch: DispatchKey::CatchAll.
  CatchAll = CompositeImplicitAutograd,
};

constexpr DispatchKey kFirstBackendKey = DispatchKey::CPU;
/// The last backend with a device type (the device backends are CPU..Meta).
constexpr DispatchKey kLastDeviceBackendKey = DispatchKey::Meta;
constexpr DispatchKey kLastBackendKey = DispatchKey::SparseCPU;
constexpr DispatchKey kFirstAutogradKey = DispatchKey::AutogradOther;
constexpr DispatchKey kLastAutogradKey = DispatchKey::AutogradMeta;
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
static_assert(static_cast<int>(kLastAliasKey) + 1 == kNumDispatchKeys, "the alias keys come last");
static_assert(static_cast<int>(DispatchKey::AutogradCPU) - static_cast<int>(DispatchKey::CPU) ==
                  static_cast<int>(DispatchKey::AutogradMeta) - static_cast<int>(DispatchKey::Meta),
              "AutogradX is at the same offset from AutogradCPU as X from CPU, for every device backend");

constexpr bool isRuntimeDispatchKey(DispatchKey k) { return k > DispatchKey::Undefined && k <= kLastRuntimeKey; }
constexpr bool isAliasDispatchKey(DispatchKey k) { return k >= kFirstAliasKey && k <= kLastAliasKey; }
constexpr bool isBackendDispatchKey(DispatchKey k) { return k >= kFirstBackendKey && k <= kLastBackendKey; }
constexpr bool isAutogradDispatchKey(DispatchKey k) { return k >= kFirstAutogradKey && k <= kLastAutogradKey; }

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
