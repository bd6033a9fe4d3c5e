// The fallthrough and ambiguous-autogradother kernels, and KernelFunction state dumps.
#include <opdispatch/dispatch/KernelFunction.h>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/OperatorHandle.h>

namespace opdispatch {

namespace {
void fallthroughKernel(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack*) {
  OPDISPATCH_INTERNAL_ASSERT(false, "a fallthrough kernel was called for ", op.operator_name(), " with ", ks,
                             "; fallthrough keys should have been masked out of the dispatch key set");
}

void ambiguousAutogradOtherKernel(OperatorKernel*, const OperatorHandle& op, DispatchKeySet, Stack*) {
  OPDISPATCH_CHECK_NOT_IMPLEMENTED(
      false, op.operator_name(),
      " has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther. "
      "This makes the backend kernel unreachable; the dispatcher does not know whether the backend kernel "
      "needs an autograd kernel. To fix this, register a kernel for AutogradOther as well (an Autograd kernel "
      "does not help: CompositeImplicitAutograd takes precedence over it).");
}
} // namespace

void detail::throwBoxedArgumentTypeError(const OperatorHandle& op, size_t index, const IValue& v, BoxedArgKind kind) {
  static constexpr const char* kKindNames[] = {"Tensor", "int", "float", "bool"};
  std::string argument = "argument " + std::to_string(index);
  if (op.hasSchema() && index < op.schema().arguments().size()) {
    argument += " ('" + op.schema().arguments()[index].name() + "')";
  }
  throw TypeError(detail::str("boxed call of ", op.operator_name(), ": ", argument, " on the stack is a ", v.tagKind(),
                              " but the kernel takes a ", kKindNames[static_cast<int>(kind)],
                              "; push the arguments in schema order with the schema's types"));
}

bool KernelRef::isFallthrough() const { return boxed_ == &fallthroughKernel; }

KernelFunction KernelFunction::makeFallthrough() { return KernelFunction(nullptr, &fallthroughKernel, nullptr); }

KernelFunction KernelFunction::makeAmbiguousAutogradOther() {
  return KernelFunction(nullptr, &ambiguousAutogradOtherKernel, nullptr);
}

std::string KernelFunction::dumpState() const {
  std::string s;
  if (isFallthrough()) {
    return "fallthrough ";
  }
  if (boxed_kernel_func_) {
    s += "boxed ";
  }
  if (unboxed_kernel_func_) {
    s += "unboxed ";
  }
  return s;
}

} // namespace opdispatch
