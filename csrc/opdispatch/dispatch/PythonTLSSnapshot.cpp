// The PythonTLSSnapshot fallback and the thread's snapshot. See Note [PythonTLSSnapshot].
#include <opdispatch/dispatch/PythonTLSSnapshot.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>

namespace opdispatch {

namespace {
/// Empty except while a call that passed PythonTLSSnapshot is in progress
/// (and RestorePythonTLSSnapshot is not hiding it).
thread_local std::optional<LocalDispatchKeySet> tlsOnEntry;

/// Records the snapshot unless one is recorded; clears what it recorded.
class MaybeSetTLSOnEntryGuard {
 public:
  MaybeSetTLSOnEntryGuard() : set_(!tlsOnEntry.has_value()) {
    if (set_) {
      tlsOnEntry = tls_local_dispatch_key_set();
    }
  }
  MaybeSetTLSOnEntryGuard(const MaybeSetTLSOnEntryGuard&) = delete;
  MaybeSetTLSOnEntryGuard& operator=(const MaybeSetTLSOnEntryGuard&) = delete;
  ~MaybeSetTLSOnEntryGuard() {
    if (set_) {
      tlsOnEntry.reset();
    }
  }

 private:
  bool set_;
};
} // namespace

void pythonTLSSnapshotFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  MaybeSetTLSOnEntryGuard guard;
  op.redispatchBoxed(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::PythonTLSSnapshot), stack);
}

std::optional<LocalDispatchKeySet> pythonTLSSnapshot() { return tlsOnEntry; }

static LocalDispatchKeySet recordedSnapshot() {
  OPDISPATCH_CHECK(tlsOnEntry.has_value(),
                   "Accessing the dispatch state recorded on entry (PythonTLSSnapshot) outside of "
                   "'__torch_dispatch__' is not allowed: use _RestorePythonTLSSnapshot only inside a "
                   "__torch_dispatch__ handler");
  return *tlsOnEntry;
}

RestorePythonTLSSnapshot::RestorePythonTLSSnapshot()
    : snapshot_(recordedSnapshot()),
      current_(tls_local_dispatch_key_set()) {
  _force_tls_local_dispatch_key_set(snapshot_);
  tlsOnEntry.reset();
}

RestorePythonTLSSnapshot::~RestorePythonTLSSnapshot() {
  _force_tls_local_dispatch_key_set(current_);
  tlsOnEntry = snapshot_;
}

} // namespace opdispatch
