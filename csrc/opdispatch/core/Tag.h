// Tag: the operator tags (PyTorch: at::Tag, from aten/src/ATen/native/tags.yaml).
// The dispatcher stores an operator's tags and gives them no meaning; the
// layers above (and users) read them.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace opdispatch {

/// Every tag, in PyTorch's order (and with its numbering).
// clang-format off
#define OPDISPATCH_FORALL_TAGS(_)                                                                          \
  _(core) _(cudagraph_unsafe) _(data_dependent_output) _(dynamic_output_shape) _(flexible_layout)        \
  _(generated) _(inplace) _(inplace_view) _(maybe_aliasing_or_mutating) _(needs_contiguous_strides)      \
  _(needs_exact_strides) _(needs_fixed_stride_order) _(nondeterministic_bitwise) _(nondeterministic_seeded) \
  _(out) _(out_variant) _(pointwise) _(pt2_compliant_tag) _(reduction) _(view_copy)
// clang-format on

enum class Tag : uint8_t {
#define OPDISPATCH_DEFINE_TAG(t) t,
  OPDISPATCH_FORALL_TAGS(OPDISPATCH_DEFINE_TAG)
#undef OPDISPATCH_DEFINE_TAG
};

/// The tag's name ("pt2_compliant_tag").
const char* toString(Tag t);
std::ostream& operator<<(std::ostream& os, Tag t);
/// Parses a tag name. Throws ValueError naming the string and listing the valid tags.
Tag parseTag(const std::string& name);

} // namespace opdispatch
