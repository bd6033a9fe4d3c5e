// PostKernelEffects: the output alias check's error.
#include <opdispatch/dispatch/PostKernelEffects.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

void throwOutputAliasError(const FunctionSchema& schema, const OperatorKernel* functor, size_t return_index,
                           bool other_is_return, size_t other, bool same_tensor) {
  std::string name = other_is_return ? std::to_string(other) : schema.arguments()[other].name();
  std::string what = other_is_return ? "return " + name : "argument '" + name + "'";
  throw Error(detail::str(
      schema.operator_name(), ": return ", return_index, " of the ", functor ? functor->describe() : "kernel",
      same_tensor ? " is the same tensor as " : " shares memory with ", what,
      ". The output of a custom operator must not be one of its inputs and may not alias its inputs or its other "
      "outputs (the result would silently change when they do). Return a new tensor instead, e.g. `return ",
      other_is_return ? "out" : name, ".clone()`, or define the operator with a schema that declares the alias."));
}

} // namespace opdispatch
