// The definition of the call's thread-local block (Note [The call's thread-local block]).
#include <opdispatch/dispatch/ThreadCallState.h>

namespace opdispatch {

__thread ThreadCallState tls_call_state
    __attribute__((tls_model("initial-exec"))) = {{0, 0}, {kUnregisteredEpoch}, nullptr};

} // namespace opdispatch
