// GradMode: the thread-local flag that says whether autograd kernels record
// calls on tensors that require grad. PyTorch: c10::GradMode (c10/core/GradMode.h).
#pragma once

namespace opdispatch {

// Note [Grad mode is its own flag]
// Grad mode is not the exclusion of the autograd dispatch keys: an autograd
// kernel excludes those keys (AutoDispatchBelowAutograd) to run the operator
// below it, and grad mode stays on there, so a kernel, a mode's
// __torch_dispatch__, or any code below autograd sees is_grad_enabled() ==
// True as in PyTorch. no_grad() turns the flag off and excludes no key: the
// autograd kernels still run and consult the flag before they record. The flag
// is per thread and starts on.

/// The grad-mode flag of this thread. PyTorch: c10::GradMode.
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Sets grad mode for its scope and restores the previous mode on exit.
/// PyTorch: c10::AutoGradMode.
struct AutoGradMode {
  explicit AutoGradMode(bool enabled) : prev_mode_(GradMode::is_enabled()) { GradMode::set_enabled(enabled); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;
  ~AutoGradMode() { GradMode::set_enabled(prev_mode_); }
  bool prev_mode_;
};

/// Turns grad mode off for its scope. PyTorch: at::NoGradGuard.
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

/// PyTorch's c10::InferenceMode as a guard: while `enabled`, grad mode is off
/// and is_enabled() is true; InferenceMode(false) turns grad mode on, as
/// PyTorch's does. opdispatch has no inference tensors, so nothing else
/// changes: tensors made inside are ordinary tensors.
class InferenceMode {
 public:
  explicit InferenceMode(bool enabled = true);
  InferenceMode(const InferenceMode&) = delete;
  InferenceMode& operator=(const InferenceMode&) = delete;
  ~InferenceMode();
  /// Whether an InferenceMode(true) is the innermost one active on this thread.
  static bool is_enabled();

 private:
  AutoGradMode grad_mode_;
  bool prev_enabled_;
};

} // namespace opdispatch
