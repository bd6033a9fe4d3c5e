// The thread-local grad-mode flag (see Note [Grad mode is its own flag]).
#include <opdispatch/core/GradMode.h>

namespace opdispatch {

namespace {
thread_local bool gGradEnabled = true;
} // namespace

bool GradMode::is_enabled() { return gGradEnabled; }
void GradMode::set_enabled(bool enabled) { gGradEnabled = enabled; }

} // namespace opdispatch
