// OperatorKernel: base class of every kernel functor (the state a
// KernelFunction carries: a wrapped C++ function, a lambda, a Python callable).
#pragma once

#include <string>

#include <opdispatch/core/intrusive_ptr.h>

namespace opdispatch {

class OperatorKernel : public intrusive_ptr_target {
 public:
  ~OperatorKernel() override = default;
  /// Called once when the kernel is deregistered (after the Dispatcher
  /// released its registration lock, so it may take the GIL). The functor
  /// object itself stays alive while a call may still be running it (Note
  /// [Kernel lifetime]); state that should be released promptly, such as a
  /// Python callable, is released here. The destructor may run later on any
  /// thread, holding no lock.
  virtual void retire() {}
  /// How error messages name this kernel, e.g. "Python kernel registered at CPU".
  virtual std::string describe() const { return "kernel"; }
};

} // namespace opdispatch
