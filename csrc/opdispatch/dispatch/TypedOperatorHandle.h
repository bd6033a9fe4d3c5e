// TypedOperatorHandle: an OperatorHandle whose calls are typed — no boxing
// when the kernel has an unboxed entry. PyTorch: TypedOperatorHandle.
#pragma once

#include <utility>

#include <opdispatch/dispatch/CallUnit.h>
#include <opdispatch/dispatch/OperatorHandle.h>

namespace opdispatch {

template <class Return, class... Args>
class TypedOperatorHandle<Return(Args...)> final : public OperatorHandle {
 public:
  /// Dispatches on the tensor arguments and TLS, then calls the kernel (Note [One call path]).
  Return call(Args... args) const {
    TypedCallFrame<Return, Args...> frame(std::forward<Args>(args)...);
    return callOperator(*this, frame);
  }
  /// Calls the kernel for `ks` (the caller restricted it, e.g. with FULL_AFTER).
  Return redispatch(DispatchKeySet ks, Args... args) const {
    TypedCallFrame<Return, Args...> frame(std::forward<Args>(args)...);
    return redispatchOperator(*this, ks, frame);
  }

 private:
  friend class OperatorHandle;
  explicit TypedOperatorHandle(OperatorEntry* e) : OperatorHandle(e) {}
};

} // namespace opdispatch
