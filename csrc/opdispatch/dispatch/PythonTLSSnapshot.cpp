// The PythonTLSSnapshot fallback and the thread's snapshot. See Note [PythonTLSSnapshot].
#include <opdispatch/dispatch/PythonTLSSnapshot.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/Dispatcher.h>
#include <opdispatch/dispatch/KernelFunction.h>

namespace opdispatch {

namespace {
/// Empty except while a call that passed PythonTLSSnapshot is in progress
/// (and RestorePythonTLSSnapshot is not hiding it).
thread_local std::optional<LocalDispatchKeySet> tlsOnEntry;
} // namespace

PythonTLSSnapshotScope::PythonTLSSnapshotScope() : set_(!tlsOnEntry.has_value()) {
  if (set_) {
    tlsOnEntry = tls_local_dispatch_key_set();
  }
}

PythonTLSSnapshotScope::~PythonTLSSnapshotScope() {
  if (set_) {
    tlsOnEntry.reset();
  }
}

void pythonTLSSnapshotFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  PythonTLSSnapshotScope scope;
  op.redispatchBoxed(ks & DispatchKeySet(DispatchKeySet::FULL_AFTER, DispatchKey::PythonTLSSnapshot), stack);
}

KernelFunction pythonTLSSnapshotFallbackKernel() {
  return KernelFunction::makeFromBoxedFunctionWithKeyset<&pythonTLSSnapshotFallback>();
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
