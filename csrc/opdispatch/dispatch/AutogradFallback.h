// The core's backend fallback for the autograd keys: what a call on a tensor
// that requires grad does when the operator has no autograd kernel.
#pragma once

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/Stack.h>

namespace opdispatch {

class OperatorHandle;

/// Calls the kernels below autograd (`ks & after_autograd_keyset`), so the
/// result does not require grad. Registered as a default fallback
/// (DefaultFallbacks.cpp); the Python layer registers one that records a
/// "derivative not implemented" node instead (Note [Default fallbacks]).
void autogradFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);

} // namespace opdispatch
