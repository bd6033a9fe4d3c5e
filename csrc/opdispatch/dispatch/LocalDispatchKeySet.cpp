// The thread-local include/exclude sets and their guards.
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

void _force_tls_local_dispatch_key_set(LocalDispatchKeySet ks) {
  tls_call_state.keys = {(ks.included_ ^ default_included_set).raw_repr(), ks.excluded_.raw_repr()};
}

bool tls_is_dispatch_key_included(DispatchKey k) { return tls_local_dispatch_key_set().included_.has(k); }
bool tls_is_dispatch_key_excluded(DispatchKey k) { return tls_local_dispatch_key_set().excluded_.has(k); }

static void setBit(uint64_t& word, DispatchKey k, bool on) {
  OPDISPATCH_CHECK_VALUE(isRuntimeDispatchKey(k),
                         "only runtime dispatch keys can be included or excluded "
                         "in thread-local state; got ",
                         k);
  uint64_t bit = DispatchKeySet(k).raw_repr();
  word = on ? (word | bit) : (word & ~bit);
}

void tls_set_dispatch_key_included(DispatchKey k, bool desired_state) {
  // The raw word holds included XOR default_included_set (Note [BackendSelect is included by default]).
  setBit(tls_call_state.keys.included_, k, desired_state != default_included_set.has(k));
}
void tls_set_dispatch_key_excluded(DispatchKey k, bool desired_state) {
  setBit(tls_call_state.keys.excluded_, k, desired_state);
}

// The raw included word holds included XOR default_included_set: a key
// outside the default is included by setting its bit, a default key by
// clearing it.
IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKeySet ks) {
  added_ = ks - tls_local_dispatch_key_set().included_;
  uint64_t& raw = tls_call_state.keys.included_;
  raw = (raw | (added_ - default_included_set).raw_repr()) & ~(added_ & default_included_set).raw_repr();
}
IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() {
  uint64_t& raw = tls_call_state.keys.included_;
  raw = (raw & ~(added_ - default_included_set).raw_repr()) | (added_ & default_included_set).raw_repr();
}

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet ks) {
  DispatchKeySet current(DispatchKeySet::RAW, tls_call_state.keys.excluded_);
  added_ = ks - current;
  tls_call_state.keys.excluded_ |= added_.raw_repr();
}
ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() { tls_call_state.keys.excluded_ &= ~added_.raw_repr(); }

} // namespace opdispatch
