// KernelRef: what a call needs from a registered kernel, by value — its
// entry points, its functor and what the dispatcher must do after it runs.
// The dispatch table holds KernelRefs (Note [Hot dispatch table]).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include <opdispatch/Macros.h>
#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/BoxingTemplates.h>
#include <opdispatch/dispatch/OperatorKernel.h>

namespace opdispatch {

class OperatorHandle;

/// A non-owning, trivially copyable view of a kernel's entry points. The
/// functor it points to is owned by the registered KernelFunction and
/// outlives every call that can see it (Note [Kernel lifetime]): use a
/// KernelRef only inside a call (CallGuard).
class KernelRef final {
 public:
  /// The boxed calling convention: arguments on top of the stack, replaced by the results.
  using BoxedKernelFunction = void(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack);

  /// What the dispatcher does around the kernel (Note [Post-kernel effects]).
  enum Effects : uint32_t {
    kNoEffects = 0,
    /// Bump the versions of the tensors passed to `Tensor(a!)` arguments.
    kBumpsVersions = 1u << 0,
    /// Check that no tensor result shares memory with an argument or another result.
    kChecksOutputAliasing = 1u << 1,
  };

  constexpr KernelRef() = default;
  constexpr KernelRef(OperatorKernel* functor, BoxedKernelFunction* boxed, void* unboxed, uint32_t effects)
      : functor_(functor),
        boxed_(boxed),
        unboxed_(unboxed),
        effects_(effects) {}

  OperatorKernel* functor() const { return functor_; }
  BoxedKernelFunction* boxedFunction() const { return boxed_; }
  void* unboxedFunction() const { return unboxed_; }
  uint32_t effects() const { return effects_; }
  bool hasEffects() const { return effects_ != kNoEffects; }
  bool bumpsVersions() const { return (effects_ & kBumpsVersions) != 0; }
  bool checksOutputAliasing() const { return (effects_ & kChecksOutputAliasing) != 0; }
  /// Whether this is the "skip this key" marker (KernelFunction::makeFallthrough).
  bool isFallthrough() const;

  /// Calls with the arguments on top of `stack`; `ks` is the (masked) key set of the call.
  void callBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const {
    (*boxed_)(functor_, op, ks, stack);
  }

  /// Calls with typed arguments: the unboxed entry when there is one (the
  /// caller guarantees `Return(Args...)` is the kernel's signature, see
  /// CppSignature), else boxes the arguments and calls the boxed entry
  /// (detail::BoxedKernelWrapper).
  template <class Return, class... Args>
  Return call(const OperatorHandle& op, DispatchKeySet ks, Args&&... args) const {
    if (OPDISPATCH_LIKELY(unboxed_ != nullptr)) {
      using Unboxed = Return(OperatorKernel*, DispatchKeySet, Args...);
      return (*reinterpret_cast<Unboxed*>(unboxed_))(functor_, ks, std::forward<Args>(args)...);
    }
    return detail::BoxedKernelWrapper<Return(Args...)>::call(*this, op, ks, std::forward<Args>(args)...);
  }

  bool operator==(const KernelRef& o) const {
    return functor_ == o.functor_ && boxed_ == o.boxed_ && unboxed_ == o.unboxed_ && effects_ == o.effects_;
  }
  bool operator!=(const KernelRef& o) const { return !(*this == o); }

 private:
  OperatorKernel* functor_ = nullptr;
  BoxedKernelFunction* boxed_ = nullptr;
  void* unboxed_ = nullptr;
  uint32_t effects_ = kNoEffects;
};

static_assert(std::is_trivially_copyable_v<KernelRef>, "dispatch tables copy KernelRefs as bytes");

} // namespace opdispatch
