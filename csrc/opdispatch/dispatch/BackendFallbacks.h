// BackendFallbacks: the backend fallback of each runtime key — the kernel an
// operator with no kernel of its own for that key uses (docs/architecture.rst, precedence
// step 5) — as user and default registrations.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <opdispatch/core/DispatchKey.h>
#include <opdispatch/dispatch/AnnotatedKernel.h>

namespace opdispatch {

/// Who installed a fallback (Note [Default fallbacks]).
enum class FallbackKind : uint8_t {
  /// A user's registration (Library::fallback, _DispatchLibrary.fallback).
  User,
  /// One opdispatch installs itself; a user's fallback for the key replaces it.
  Default,
};

// Note [Default fallbacks]
// opdispatch installs fallbacks of its own: the core's (DefaultFallbacks.cpp:
// the autograd fallback, fallthroughs for BackendSelect, ADInplaceOrView, ...)
// and the Python layer's autograd fallback. They are FallbackKind::Default. A
// user's fallback for the same key — an out-of-tree device plugin's
// AutogradPrivateUse1 fallback, say — takes effect over them, and removing it
// restores the default. Per key, the fallback in effect is the newest User
// fallback, else the newest Default; so registration order does not matter (a
// Default registered after a User fallback still loses to it) and every
// removal restores exactly the state before. Two User fallbacks for one key
// are an error, as in PyTorch, except at AutogradPrivateUse1, where PyTorch
// accepts several for compatibility (pytorch/pytorch#163979): there the newest
// wins. PyTorch itself replaces only the AutogradPrivateUse1 default, and
// removing the replacement leaves no fallback.
class BackendFallbacks final {
 public:
  /// Where a registration sits, to remove it.
  struct Position {
    DispatchKey key;
    FallbackKind kind;
    AnnotatedKernelContainerIterator it;
  };

  /// The fallback in effect for runtime key `k`, or null (Undefined or none).
  /// Registration lock held.
  const AnnotatedKernel* lookup(DispatchKey k) const;
  /// Registers `kernel` for runtime key `k`. Throws Error if `k` already has
  /// a User fallback and another User one is added (outside
  /// AutogradPrivateUse1); nothing changes then.
  Position add(DispatchKey k, FallbackKind kind, KernelFunction kernel, std::string debug);
  /// Unlinks the registration at `p` and moves its node to the end of
  /// `retired` (its address stays valid: the caller retires it to the
  /// Reclaimer; Note [Kernel lifetime]).
  void remove(const Position& p, AnnotatedKernelContainer& retired);
  /// Whether any registration (in effect or not) uses `functor`.
  bool uses(const OperatorKernel* functor) const;

 private:
  struct Slot {
    AnnotatedKernelContainer user;     ///< newest first
    AnnotatedKernelContainer defaults; ///< newest first
  };
  std::array<Slot, kDispatchTableSize> slots_;
};

} // namespace opdispatch
