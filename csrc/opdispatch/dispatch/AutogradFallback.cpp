// The core's autograd fallback.
#include <opdispatch/dispatch/AutogradFallback.h>

#include <opdispatch/dispatch/OperatorHandle.h>

namespace opdispatch {

void autogradFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
  op.redispatchBoxed(ks & after_autograd_keyset, stack);
}

} // namespace opdispatch
