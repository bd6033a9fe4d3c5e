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
  boxed_call_summary = BoxedCallSummary::of(num_arguments, tensor_arg_indices);
}

BoxedCallSummary BoxedCallSummary::of(uint32_t num_arguments, const std::vector<uint32_t>& positions) {
  if (positions.size() > kCapacity || num_arguments > 255) {
    return BoxedCallSummary();
  }
  uint64_t bits = kValid | positions.size() | (uint64_t{num_arguments} << 8);
  for (size_t k = 0; k < positions.size(); ++k) {
    bits |= uint64_t{positions[k]} << (16 + 8 * k);  // each < num_arguments <= 255
  }
  return BoxedCallSummary(bits);
}

} // namespace opdispatch
