// Building inferred schemas and comparing them with declared ones.
#include <opdispatch/schema/InferSchema.h>

namespace opdispatch {
namespace detail {

std::unique_ptr<FunctionSchema> makeInferredSchema(const TypeGetter* args, size_t num_args, const TypeGetter* returns,
                                                   size_t num_returns) {
  std::vector<Argument> arguments;
  std::vector<Argument> rets;
  for (size_t i = 0; i < num_args; ++i) {
    arguments.emplace_back("_" + std::to_string(i), args[i]());
  }
  for (size_t i = 0; i < num_returns; ++i) {
    rets.emplace_back("_" + std::to_string(i), returns[i]());
  }
  return std::make_unique<FunctionSchema>(OperatorName("", ""), std::move(arguments), std::move(rets));
}

} // namespace detail

static bool typeAccepts(TypePtr declared, TypePtr inferred) {
  if (declared->acceptsInferred(inferred)) {
    return true;
  }
  TypePtr d = declared->unwrapOptional();
  TypePtr i = inferred->unwrapOptional();
  bool same_optionality = declared->isOptional() == inferred->isOptional();
  bool int_like = d->kind() == TypeKind::Layout || d->kind() == TypeKind::MemoryFormat;
  return same_optionality && int_like && i->kind() == TypeKind::Int;
}

std::optional<std::string> findSchemaDifferences(const FunctionSchema& declared, const FunctionSchema& inferred) {
  if (declared.arguments().size() != inferred.arguments().size()) {
    return detail::str("The number of arguments is different. ", declared.arguments().size(), " vs ",
                       inferred.arguments().size(), ".");
  }
  if (declared.returns().size() != inferred.returns().size()) {
    return detail::str("The number of returns is different. ", declared.returns().size(), " vs ",
                       inferred.returns().size(), ".");
  }
  for (size_t i = 0; i < declared.arguments().size(); ++i) {
    TypePtr d = declared.arguments()[i].type();
    TypePtr inf = inferred.arguments()[i].type();
    if (!typeAccepts(d, inf)) {
      return detail::str("Type mismatch in argument ", i + 1, " (", declared.arguments()[i].name(), "): ", d, " vs ",
                         inf, ".");
    }
  }
  for (size_t i = 0; i < declared.returns().size(); ++i) {
    TypePtr d = declared.returns()[i].type();
    TypePtr inf = inferred.returns()[i].type();
    if (!typeAccepts(d, inf)) {
      return detail::str("Type mismatch in return ", i + 1, ": ", d, " vs ", inf, ".");
    }
  }
  return std::nullopt;
}

} // namespace opdispatch
