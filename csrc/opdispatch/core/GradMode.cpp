// The thread-local grad-mode flag (see Note [Grad mode is its own flag]).
#include <opdispatch/core/GradMode.h>

namespace opdispatch {

namespace {
thread_local bool gGradEnabled = true;
thread_local bool gInferenceMode = false;
} // namespace

bool GradMode::is_enabled() { return gGradEnabled; }
void GradMode::set_enabled(bool enabled) { gGradEnabled = enabled; }

InferenceMode::InferenceMode(bool enabled) : grad_mode_(!enabled), prev_enabled_(gInferenceMode) {
  gInferenceMode = enabled;
}
InferenceMode::~InferenceMode() { gInferenceMode = prev_enabled_; }
bool InferenceMode::is_enabled() { return gInferenceMode; }

} // namespace opdispatch
