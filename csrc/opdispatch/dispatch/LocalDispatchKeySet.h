// Thread-local dispatch state: keys force-included into, and excluded from,
// every call on this thread, with RAII guards to change them for a scope.
#pragma once

#include <cstdint>

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/dispatch/ThreadCallState.h>

namespace opdispatch {

/// Keys every call includes unless TLS excludes them. PyTorch: c10::default_included_set.
/// See Note [BackendSelect is included by default].
constexpr DispatchKeySet default_included_set{DispatchKey::BackendSelect};

// Note [BackendSelect is included by default]
// A factory (empty, zeros, ...) has no tensor argument, so nothing in its key
// set says which backend the result lives on: its BackendSelect kernel reads
// the device argument and redispatches to that backend's key, where a device
// plugin's kernel (e.g. PrivateUse1) takes it. For that kernel to run,
// BackendSelect is in every call's key set, as in PyTorch; every other
// operator has the BackendSelect fallthrough, which the non-fallthrough mask
// removes, so for them nothing changes. The raw word stores included XOR
// default_included_set, so that zero-initialised TLS means "the default".
// The raw words live in the call's thread-local block (ThreadCallState.h).

struct LocalDispatchKeySet {
  DispatchKeySet included_;
  DispatchKeySet excluded_;
};

inline LocalDispatchKeySet tls_local_dispatch_key_set() {
  return {DispatchKeySet(DispatchKeySet::RAW, tls_call_state.keys.included_ ^ default_included_set.raw_repr()),
          DispatchKeySet(DispatchKeySet::RAW, tls_call_state.keys.excluded_)};
}
/// Replaces this thread's sets (RestorePythonTLSSnapshot restores the ones recorded on entry).
void _force_tls_local_dispatch_key_set(LocalDispatchKeySet ks);

/// The key set a call with arguments of keys `ks` dispatches on: `ks` |
/// this thread's included keys - its excluded keys.
inline DispatchKeySet applyLocalDispatchKeySet(DispatchKeySet ks) {
  const LocalDispatchKeySet tls = tls_local_dispatch_key_set();
  return (ks | tls.included_) - tls.excluded_;
}

bool tls_is_dispatch_key_included(DispatchKey k);
bool tls_is_dispatch_key_excluded(DispatchKey k);
/// Adds or removes runtime key `k`; throws ValueError for an alias key or Undefined.
void tls_set_dispatch_key_included(DispatchKey k, bool desired_state);
void tls_set_dispatch_key_excluded(DispatchKey k, bool desired_state);

/// Includes `ks` for its scope; on exit removes only the keys it added.
class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet ks);
  explicit IncludeDispatchKeyGuard(DispatchKey k) : IncludeDispatchKeyGuard(DispatchKeySet(k)) {}
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;
  ~IncludeDispatchKeyGuard();

 private:
  DispatchKeySet added_;
};

/// Excludes `ks` for its scope; on exit re-allows only the keys it excluded.
class ExcludeDispatchKeyGuard {
 public:
  explicit ExcludeDispatchKeyGuard(DispatchKeySet ks);
  explicit ExcludeDispatchKeyGuard(DispatchKey k) : ExcludeDispatchKeyGuard(DispatchKeySet(k)) {}
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;
  ~ExcludeDispatchKeyGuard();

 private:
  DispatchKeySet added_;
};

/// Skips every autograd key in its scope (what an autograd kernel uses
/// before calling the backend). PyTorch: at::AutoDispatchBelowAutograd.
struct AutoDispatchBelowAutograd {
  AutoDispatchBelowAutograd() : guard_(autograd_dispatch_keyset) {}
  ExcludeDispatchKeyGuard guard_;
};

/// Skips autograd and ADInplaceOrView. PyTorch: at::AutoDispatchBelowADInplaceOrView.
struct AutoDispatchBelowADInplaceOrView {
  AutoDispatchBelowADInplaceOrView() : guard_(autograd_dispatch_keyset.add(DispatchKey::ADInplaceOrView)) {}
  ExcludeDispatchKeyGuard guard_;
};

/// Sets this thread's included and excluded sets to exactly `include` and
/// `exclude` for its scope, and restores the previous ones on exit.
/// PyTorch: c10::impl::ForceDispatchKeyGuard.
class ForceDispatchKeyGuard {
 public:
  ForceDispatchKeyGuard(DispatchKeySet include, DispatchKeySet exclude) : saved_(tls_local_dispatch_key_set()) {
    _force_tls_local_dispatch_key_set({include, exclude});
  }
  explicit ForceDispatchKeyGuard(LocalDispatchKeySet keys) : ForceDispatchKeyGuard(keys.included_, keys.excluded_) {}
  ForceDispatchKeyGuard(const ForceDispatchKeyGuard&) = delete;
  ForceDispatchKeyGuard& operator=(const ForceDispatchKeyGuard&) = delete;
  ~ForceDispatchKeyGuard() { _force_tls_local_dispatch_key_set(saved_); }

 private:
  LocalDispatchKeySet saved_;
};

/// PyTorch keeps the thread-local dispatch state in c10::impl; these are its
/// names for the declarations above, so code ported with the name map
/// (c10:: -> opdispatch::) finds them.
namespace impl {
using ::opdispatch::_force_tls_local_dispatch_key_set;
using ::opdispatch::ExcludeDispatchKeyGuard;
using ::opdispatch::ForceDispatchKeyGuard;
using ::opdispatch::IncludeDispatchKeyGuard;
using ::opdispatch::LocalDispatchKeySet;
using ::opdispatch::PODLocalDispatchKeySet;
using ::opdispatch::tls_is_dispatch_key_excluded;
using ::opdispatch::tls_is_dispatch_key_included;
using ::opdispatch::tls_local_dispatch_key_set;
using ::opdispatch::tls_set_dispatch_key_excluded;
using ::opdispatch::tls_set_dispatch_key_included;
} // namespace impl

} // namespace opdispatch
