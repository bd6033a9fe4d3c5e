// AnnotatedSchema: the argument positions computed from a schema.
#include <opdispatch/dispatch/AnnotatedSchema.h>

namespace opdispatch {

AnnotatedSchema::AnnotatedSchema(FunctionSchema s, std::string d, std::vector<std::string> t)
    : schema(std::move(s)), debug(std::move(d)), tags(std::move(t)) {
  num_arguments = static_cast<uint32_t>(schema.arguments().size());
  for (uint32_t i = 0; i < num_arguments; ++i) {
    if (schema.arguments()[i].type()->isTensorLike()) {
      tensor_arg_indices.push_back(i);
    }
    if (schema.arguments()[i].is_write()) {
      mutable_arg_indices.push_back(i);
    }
  }
}

} // namespace opdispatch
