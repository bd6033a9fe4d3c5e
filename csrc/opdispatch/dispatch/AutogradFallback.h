// The core's backend fallback for the autograd keys: what a call on a tensor
// that requires grad does when the operator has no autograd kernel.
#pragma once

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/Stack.h>

namespace opdispatch {

class OperatorHandle;

/// What a call of an operator with no autograd kernel on a tensor that
/// requires grad gives its outputs (the Python layer's fallback reads it):
/// Warn, a grad_fn that warns at backward and passes no gradient on (the
/// default); Nothing, no grad_fn (the outputs do not require grad).
/// Process-wide, as PyTorch's. PyTorch: torch::autograd::AutogradFallbackMode.
enum class AutogradFallbackMode { Nothing, Warn };

void setAutogradFallbackMode(AutogradFallbackMode mode);
AutogradFallbackMode getAutogradFallbackMode();

/// Calls the kernels below autograd (`ks & after_autograd_keyset`), so the
/// result does not require grad. Registered as a default fallback
/// (DefaultFallbacks.cpp); the Python layer registers one that records a
/// "derivative not implemented" node instead (Note [Default fallbacks]).
void autogradFallback(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);

} // namespace opdispatch
