// PostKernelEffects: version bumps and the output alias check.
#include <opdispatch/dispatch/PostKernelEffects.h>

#include <algorithm>

#include <opdispatch/core/Exception.h>
#include <opdispatch/dispatch/OperatorHandle.h>

namespace opdispatch {

PostKernelEffects::PostKernelEffects(const OperatorHandle& op, const KernelRef& kernel)
    : schema_(op.entry().schemaPtr()), kernel_(kernel) {
  bumps_versions_ = schema_ != nullptr && kernel.bumpsVersions() && !schema_->mutable_arg_indices.empty();
  checks_aliasing_ = schema_ != nullptr && kernel.checksOutputAliasing();
}

void PostKernelEffects::addArgument(uint32_t index, TensorImpl& t) {
  if (schema_ == nullptr) {
    return;
  }
  const auto& mutable_indices = schema_->mutable_arg_indices;
  bool mutated = bumps_versions_ &&
                 std::find(mutable_indices.begin(), mutable_indices.end(), index) != mutable_indices.end();
  if (mutated || checks_aliasing_) {
    arguments_.push_back({index, intrusive_ptr<TensorImpl>(&t), mutated});
  }
}

void PostKernelEffects::checkResult(size_t return_index, const TensorImpl& t) {
  if (!checks_aliasing_) {
    return;
  }
  for (const Argument& a : arguments_) {
    if (t.sharesMemoryWith(*a.tensor)) {
      throwOutputAliases(return_index, false, a.index, &t == a.tensor.get());
    }
  }
  for (const auto& [earlier_index, earlier] : results_) {
    if (t.sharesMemoryWith(*earlier)) {
      throwOutputAliases(return_index, true, earlier_index, &t == earlier);
    }
  }
  results_.emplace_back(return_index, &t);
}

void PostKernelEffects::commit() {
  for (const Argument& a : arguments_) {
    if (a.mutated) {
      a.tensor->bump_version();
    }
  }
}

void PostKernelEffects::throwOutputAliases(size_t return_index, bool other_is_return, size_t other,
                                           bool same_tensor) const {
  const FunctionSchema& schema = schema_->schema;
  std::string name = other_is_return ? std::to_string(other) : schema.arguments()[other].name();
  std::string what = other_is_return ? "return " + name : "argument '" + name + "'";
  OperatorKernel* functor = kernel_.functor();
  throw Error(detail::str(
      schema.operator_name(), ": return ", return_index, " of the ", functor ? functor->describe() : "kernel",
      same_tensor ? " is the same tensor as " : " shares memory with ", what,
      ". The output of a custom operator must not be one of its inputs and may not alias its inputs or its other "
      "outputs (the result would silently change when they do). Return a new tensor instead, e.g. `return ",
      other_is_return ? "out" : name, ".clone()`, or define the operator with a schema that declares the alias."));
}

} // namespace opdispatch
