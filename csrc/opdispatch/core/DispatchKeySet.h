// DispatchKeySet: a set of runtime dispatch keys in one uint64_t, plus the
// named sets and alias-key helpers the dispatcher needs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>

#include <opdispatch/core/DispatchKey.h>

namespace opdispatch {

// Note [FULL_AFTER keeps the Python dispatcher]
// A kernel redispatches with `ks & FULL_AFTER(its key)`. PythonDispatcher is
// the highest key, yet FULL_AFTER(t) contains it (for every t but itself), as
// in PyTorch: while the Python dispatcher is on, the call's key set has
// PythonDispatcher, so every redispatch comes back through its fallback,
// which consults the operator's py_impl kernels for the next key (Note [The
// Python dispatcher] in csrc/python/PythonDispatcher.cpp). While it is off,
// no key set has the bit and the `&` drops it.

// Note [DispatchKeySet representation]
// Bit (k - 1) is set for runtime key k (see Note [Flat dispatch keys]).
// The highest set bit is the highest-priority key, so the dispatch table index
// of a set is 64 - clz(repr) (0, the Undefined entry, for the empty set).
// Alias keys and Undefined have no bit; constructing a set from them gives
// the empty set, so callers that accept user input check isRuntimeDispatchKey.
class DispatchKeySet final {
 public:
  enum Full { FULL };
  enum FullAfter { FULL_AFTER };
  enum Raw { RAW };

  constexpr DispatchKeySet() = default;
  /// Every runtime key.
  constexpr DispatchKeySet(Full) : repr_(kFullRepr) {}
  /// Every runtime key of lower priority than `t` (`t` itself excluded),
  /// plus PythonDispatcher (see Note [FULL_AFTER keeps the Python dispatcher]).
  constexpr DispatchKeySet(FullAfter, DispatchKey t)
      : repr_(isRuntimeDispatchKey(t) ? (bit(t) - 1) | (bit(DispatchKey::PythonDispatcher) & ~bit(t)) : 0) {}
  constexpr DispatchKeySet(Raw, uint64_t x) : repr_(x) {}
  /// {k}; the empty set for Undefined or an alias key.
  constexpr explicit DispatchKeySet(DispatchKey k) : repr_(isRuntimeDispatchKey(k) ? bit(k) : 0) {}
  constexpr DispatchKeySet(std::initializer_list<DispatchKey> ks) : repr_(0) {
    for (auto k : ks) {
      repr_ |= isRuntimeDispatchKey(k) ? bit(k) : 0;
    }
  }

  constexpr bool has(DispatchKey k) const { return isRuntimeDispatchKey(k) && (repr_ & bit(k)); }
  constexpr bool has_any(DispatchKeySet ks) const { return (repr_ & ks.repr_) != 0; }
  constexpr bool has_all(DispatchKeySet ks) const { return (repr_ & ks.repr_) == ks.repr_; }
  constexpr bool isSupersetOf(DispatchKeySet ks) const { return has_all(ks); }
  constexpr DispatchKeySet operator|(DispatchKeySet o) const { return {RAW, repr_ | o.repr_}; }
  constexpr DispatchKeySet operator&(DispatchKeySet o) const { return {RAW, repr_ & o.repr_}; }
  constexpr DispatchKeySet operator-(DispatchKeySet o) const { return {RAW, repr_ & ~o.repr_}; }
  constexpr DispatchKeySet operator^(DispatchKeySet o) const { return {RAW, repr_ ^ o.repr_}; }
  constexpr bool operator==(DispatchKeySet o) const { return repr_ == o.repr_; }
  constexpr bool operator!=(DispatchKeySet o) const { return repr_ != o.repr_; }
  constexpr DispatchKeySet add(DispatchKey k) const { return *this | DispatchKeySet(k); }
  constexpr DispatchKeySet remove(DispatchKey k) const { return *this - DispatchKeySet(k); }
  constexpr bool empty() const { return repr_ == 0; }
  constexpr uint64_t raw_repr() const { return repr_; }

  /// Dispatch table index of the highest-priority key: the key's enum value,
  /// 0 (Undefined) for the empty set.
  int getDispatchTableIndex() const { return repr_ == 0 ? 0 : 64 - __builtin_clzll(repr_); }
  /// The highest-priority key, Undefined for the empty set.
  DispatchKey highestPriorityTypeId() const { return static_cast<DispatchKey>(getDispatchTableIndex()); }

  /// Iterates keys from the lowest to the highest priority.
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = DispatchKey;
    using difference_type = std::ptrdiff_t;
    using pointer = const DispatchKey*;
    using reference = DispatchKey;
    explicit iterator(uint64_t rest) : rest_(rest) {}
    DispatchKey operator*() const { return static_cast<DispatchKey>(__builtin_ctzll(rest_) + 1); }
    iterator& operator++() {
      rest_ &= rest_ - 1;
      return *this;
    }
    iterator operator++(int) {
      auto old = *this;
      ++*this;
      return old;
    }
    bool operator==(const iterator& o) const { return rest_ == o.rest_; }
    bool operator!=(const iterator& o) const { return rest_ != o.rest_; }

   private:
    uint64_t rest_;
  };
  iterator begin() const { return iterator(repr_); }
  iterator end() const { return iterator(0); }

 private:
  static constexpr uint64_t bit(DispatchKey k) { return uint64_t(1) << (static_cast<uint8_t>(k) - 1); }
  static constexpr uint64_t kFullRepr = kNumRuntimeKeys == 64 ? ~uint64_t(0) : (uint64_t(1) << kNumRuntimeKeys) - 1;
  uint64_t repr_ = 0;
};
static_assert(sizeof(DispatchKeySet) == sizeof(uint64_t), "DispatchKeySet is one word");

/// "DispatchKeySet(CPU, AutogradCPU)", keys lowest priority first (PyTorch's format).
std::string toString(DispatchKeySet ks);
std::ostream& operator<<(std::ostream& os, DispatchKeySet ks);

/// The runtime keys from `first` to `last`, both included.
constexpr DispatchKeySet keyRange(DispatchKey first, DispatchKey last) {
  constexpr uint64_t one = 1;
  const uint64_t up_to_last = ((one << (static_cast<uint8_t>(last) - 1)) << 1) - 1;
  const uint64_t below_first = (one << (static_cast<uint8_t>(first) - 1)) - 1;
  return DispatchKeySet(DispatchKeySet::RAW, up_to_last & ~below_first);
}

static_assert(DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::CPU) ==
                  DispatchKeySet(DispatchKey::PythonDispatcher),
              "FULL_AFTER keeps the Python dispatcher (Note [FULL_AFTER keeps the Python dispatcher])");
static_assert(
    !DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::PythonDispatcher).has(DispatchKey::PythonDispatcher),
    "FULL_AFTER(PythonDispatcher) is the keys below it");

/// Every backend key.
constexpr DispatchKeySet backend_dispatch_keyset = keyRange(kFirstBackendKey, kLastBackendKey);
/// Every autograd key, AutogradOther included.
constexpr DispatchKeySet autograd_dispatch_keyset = keyRange(kFirstAutogradKey, kLastAutogradKey);
/// The backends that share the AutogradOther key.
constexpr DispatchKeySet autogradother_backends{DispatchKey::QuantizedCPU, DispatchKey::SparseCPU};
/// The runtime keys of CompositeImplicitAutograd (plus Undefined, which has no bit).
constexpr DispatchKeySet math_dispatch_keyset = backend_dispatch_keyset | autograd_dispatch_keyset;
/// Keys below autograd: what an autograd kernel redispatches to. PyTorch: after_autograd_keyset.
constexpr DispatchKeySet after_autograd_keyset{DispatchKeySet::FULL_AFTER, DispatchKey::AutogradOther};
/// Keys below ADInplaceOrView. PyTorch: after_ADInplaceOrView_keyset.
constexpr DispatchKeySet after_ADInplaceOrView_keyset{DispatchKeySet::FULL_AFTER, DispatchKey::ADInplaceOrView};
/// The keys a Python tensor subclass that handles dispatch carries.
constexpr DispatchKeySet python_ks{DispatchKey::Python, DispatchKey::PythonTLSSnapshot};

/// The runtime keys an alias key stands for; {k} for a runtime key k; empty
/// for Undefined. PyTorch: getRuntimeDispatchKeySet.
constexpr DispatchKeySet getRuntimeDispatchKeySet(DispatchKey k) {
  switch (k) {
    case DispatchKey::Autograd:
      return autograd_dispatch_keyset;
    case DispatchKey::CompositeImplicitAutograd:
      return math_dispatch_keyset;
    case DispatchKey::CompositeExplicitAutograd:
    case DispatchKey::CompositeExplicitAutogradNonFunctional:
      return backend_dispatch_keyset;
    case DispatchKey::FuncTorchBatchedDecomposition:
      return DispatchKeySet(DispatchKey::FuncTorchBatched);
    default:
      return DispatchKeySet(k);
  }
}
/// Whether runtime key `k` is one of the keys of `alias` (false for Undefined).
/// PyTorch: isIncludedInAlias.
constexpr bool isIncludedInAlias(DispatchKey k, DispatchKey alias) {
  return k != DispatchKey::Undefined && getRuntimeDispatchKeySet(alias).has(k);
}
/// The backends served by an autograd key (AutogradCPU -> {CPU},
/// AutogradOther -> autogradother_backends); empty for other keys.
/// PyTorch: getBackendKeySetFromAutograd.
DispatchKeySet getBackendKeySetFromAutograd(DispatchKey k);
/// The key set of a tensor on `backend`: {backend}, plus ADInplaceOrView and
/// the backend's autograd key when `requires_grad`.
DispatchKeySet tensorKeySet(DispatchKey backend, bool requires_grad);

} // namespace opdispatch
