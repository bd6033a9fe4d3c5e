// TorchDispatchModeTLS: this thread's stack of dispatch modes (Python objects
// with __torch_dispatch__) — user modes in push order, plus one slot per
// infrastructure mode (_TorchDispatchModeKey) below them — and the thread-local
// Python and PythonTLSSnapshot keys that are included while it is non-empty.
// PyTorch: c10/core/impl/TorchDispatchModeTLS.{h,cpp}, torch/csrc/utils/torch_dispatch_mode.h.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include <pybind11/pybind11.h>

namespace opdispatch::python {

/// The infrastructure modes, lowest priority first (FAKE runs last).
/// PyTorch: c10::impl::TorchDispatchModeKey.
enum class TorchDispatchModeKey : int8_t { FAKE, PROXY, FUNCTIONAL, NUM_MODE_KEYS };

/// "FakeTensorMode", "ProxyTorchDispatchMode", "FunctionalTensorMode".
const char* toString(TorchDispatchModeKey k);

// Note [The dispatch mode stack]
// The logical stack, bottom first: the infrastructure modes that are set
// (FAKE, PROXY, FUNCTIONAL), then the user modes in push order. The top (the
// last user mode, or the highest infrastructure mode if there is no user
// mode) handles the next call. While any mode is set, the thread includes the
// Python and PythonTLSSnapshot keys, so every call reaches the Python key's
// fallback; when the last mode goes, both are removed, so calls on plain
// tensors skip the key again. All functions need the GIL (they hold Python
// references); the state is per thread, so modes entered on one thread never
// see calls made on another.
namespace TorchDispatchModeTLS {
/// Pushes a user mode (takes a new reference).
void pushNonInfraMode(pybind11::handle mode);
/// Pops the top of the logical stack. Throws Error if the stack is empty.
pybind11::object popStack();
/// Pops the highest infrastructure mode. Throws Error if none is set.
std::pair<pybind11::object, TorchDispatchModeKey> popHighestInfraMode();
/// The mode at logical index `idx` (0 = bottom). Throws IndexError out of range.
pybind11::object getStackAt(int64_t idx);
/// The number of modes on the logical stack.
int64_t stackLen();
/// The infrastructure mode of `key`, if set.
std::optional<pybind11::object> getMode(TorchDispatchModeKey key);
/// Sets the infrastructure mode of `key`. Throws Error if one is set already.
void setMode(pybind11::handle mode, TorchDispatchModeKey key);
/// Unsets and returns the infrastructure mode of `key`, if set.
std::optional<pybind11::object> unsetMode(TorchDispatchModeKey key);
/// Whether any mode is set (`skip_infra_modes`: any user mode).
bool anyModesSet(bool skip_infra_modes = false);
} // namespace TorchDispatchModeTLS

/// Whether a call at the Python key goes to a mode first: a mode is set and
/// the Python key is not excluded (_DisableTorchDispatch). PyTorch: dispatch_mode_enabled.
bool dispatchModeEnabled();

/// Pops the top mode for its scope and pushes it back (into the same slot)
/// on exit: a mode's __torch_dispatch__ runs with itself popped, so calls it
/// makes go to the next mode. PyTorch: StashTorchDispatchModeGuard.
class StashTorchDispatchModeGuard {
 public:
  StashTorchDispatchModeGuard();
  StashTorchDispatchModeGuard(const StashTorchDispatchModeGuard&) = delete;
  StashTorchDispatchModeGuard& operator=(const StashTorchDispatchModeGuard&) = delete;
  ~StashTorchDispatchModeGuard();
  const pybind11::object& mode() const { return mode_; }

 private:
  pybind11::object mode_;
  std::optional<TorchDispatchModeKey> key_;
};

/// The _C functions of the stack, _TorchDispatchModeKey and _DisableTorchDispatch.
void initTorchDispatchModeBindings(pybind11::module_& m);

} // namespace opdispatch::python
