// OperatorKernel: base class of every kernel functor (the state a
// KernelFunction carries: a wrapped C++ function, a lambda, a Python callable).
#pragma once

#include <opdispatch/core/intrusive_ptr.h>

namespace opdispatch {

class OperatorKernel : public intrusive_ptr_target {
 public:
  ~OperatorKernel() override = default;
  /// Called once, with the Dispatcher's registration lock held, when the
  /// kernel is deregistered. The functor object itself stays alive (a call
  /// may still be running it; see Note [Kernel lifetime]); state that should
  /// be released promptly, such as a Python callable, is released here.
  virtual void retire() {}
};

} // namespace opdispatch
