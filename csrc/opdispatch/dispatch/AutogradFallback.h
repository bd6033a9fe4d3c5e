// The backend fallback of the autograd keys: what a call does when a tensor
// requires grad but the operator has no autograd kernel.
#pragma once

#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/KernelFunction.h>

namespace opdispatch {

class OperatorHandle;

/// A function that handles such calls instead of the default (which calls
/// the kernels below autograd, so the result does not require grad). The
/// autograd layer installs one that records a "derivative not implemented"
/// node; it must itself redispatch with `ks & after_autograd_keyset`.
using AutogradFallbackHook = void (*)(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);

/// Installs `hook` (null restores the default); returns the previous hook.
AutogradFallbackHook setAutogradFallbackHook(AutogradFallbackHook hook);

} // namespace opdispatch
