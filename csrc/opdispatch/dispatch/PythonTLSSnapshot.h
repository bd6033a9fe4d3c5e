// The PythonTLSSnapshot key: on its way into the dispatcher a call that may
// reach the Python key records the thread's dispatch key sets as they were
// at entry, before autograd and other kernels above Python change them, so
// that Python code run at the Python key can restore them. PyTorch:
// ATen/core/PythonFallbackKernel.{h,cpp} (tls_on_entry and its guards).
#pragma once

#include <optional>

#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

namespace opdispatch {

class KernelFunction;
class OperatorHandle;

// Note [PythonTLSSnapshot]
// Tensors that carry the Python key (subclasses with __torch_dispatch__) also
// carry PythonTLSSnapshot, and a thread with an active dispatch mode includes
// both keys. PythonTLSSnapshot is above every other key but PreDispatch and
// PythonDispatcher, so its fallback runs first: it records this thread's
// LocalDispatchKeySet unless a snapshot is already recorded (a call made by a
// kernel below it, still inside the outer call), and redispatches to the keys
// below it. The snapshot is cleared when the call that recorded it returns.
// RestorePythonTLSSnapshot sets the thread's key sets back to the snapshot
// for a scope (Python code inside __torch_dispatch__ that needs the caller's
// state, e.g. to let autograd see a call again). The fallback itself has no
// Python in it, so it lives in the core, like PyTorch's.

/// The PythonTLSSnapshot fallback: records the snapshot (if none is recorded)
/// around a redispatch to the keys below PythonTLSSnapshot.
void pythonTLSSnapshotFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);
/// The fallback as the kernel libopdispatch registers (its boxed entry is
/// this library's instance of the wrapper, which callers elsewhere compare against).
KernelFunction pythonTLSSnapshotFallbackKernel();

/// What the fallback does around its redispatch, for a caller that
/// redispatches its own way (a Python call, csrc/python): records this
/// thread's key sets as the snapshot for its scope unless one is recorded.
/// PyTorch: MaybeSetTLSOnEntryGuard.
class PythonTLSSnapshotScope {
 public:
  PythonTLSSnapshotScope();
  PythonTLSSnapshotScope(const PythonTLSSnapshotScope&) = delete;
  PythonTLSSnapshotScope& operator=(const PythonTLSSnapshotScope&) = delete;
  ~PythonTLSSnapshotScope();

 private:
  bool set_;
};

/// The snapshot recorded by the call in progress on this thread, if any.
std::optional<LocalDispatchKeySet> pythonTLSSnapshot();

/// Sets this thread's key sets to the snapshot for its scope and hides the
/// snapshot meanwhile (calls made inside record their own). Throws Error if
/// no call recorded one (used outside __torch_dispatch__).
class RestorePythonTLSSnapshot {
 public:
  RestorePythonTLSSnapshot();
  RestorePythonTLSSnapshot(const RestorePythonTLSSnapshot&) = delete;
  RestorePythonTLSSnapshot& operator=(const RestorePythonTLSSnapshot&) = delete;
  ~RestorePythonTLSSnapshot();

 private:
  LocalDispatchKeySet snapshot_;
  LocalDispatchKeySet current_;
};

} // namespace opdispatch
