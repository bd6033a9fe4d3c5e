// AnnotatedSchema: the argument positions computed from a schema.
#include <opdispatch/dispatch/AnnotatedSchema.h>

namespace opdispatch {

AnnotatedSchema::AnnotatedSchema(FunctionSchema s, InternedString d, std::vector<std::string> t)
    : schema(std::move(s)),
      debug(std::move(d)),
      tags(std::move(t)) {
  num_arguments = static_cast<uint32_t>(schema.arguments().size());
  num_returns = static_cast<uint32_t>(schema.returns().size());
  num_positional = 0;
  while (num_positional < num_arguments && !schema.arguments()[num_positional].kwarg_only()) {
    ++num_positional;
  }
  has_defaults = false;
  argument_info.reserve(num_arguments);  // (one heap block)
  for (uint32_t i = 0; i < num_arguments; ++i) {
    const Argument& arg = schema.arguments()[i];
    has_defaults = has_defaults || arg.default_value().has_value();
    argument_info.push_back(
        {arg.type()->unwrapOptional()->kind(), arg.type()->isOptional(), arg.default_value().has_value()});
    if (schema.arguments()[i].type()->isTensorLike()) {
      tensor_arg_indices.push_back(i);
    }
    if (schema.arguments()[i].is_write()) {
      mutable_arg_indices.push_back(i);
    }
  }
  tensor_positions.complete = tensor_arg_indices.size() <= InlineTensorPositions::kCapacity &&
                              (tensor_arg_indices.empty() || tensor_arg_indices.back() <= 255);
  if (tensor_positions.complete) {
    for (uint32_t i : tensor_arg_indices) {
      tensor_positions.positions[tensor_positions.size++] = static_cast<uint8_t>(i);
    }
  }
}

} // namespace opdispatch
