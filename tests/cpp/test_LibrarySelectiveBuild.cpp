// A selective build: this file is compiled with an operator allowlist, so
// only the listed operators of its OPDISPATCH_SELECTIVE_* registrations are
// registered (PyTorch: TORCH_OPERATOR_WHITELIST with TORCH_SELECTIVE_*). Also
// the second file of the lib_fragments namespace (see test_Library.cpp).
// The list is stringified as written: clang-format must not break it.
// clang-format off
#define OPDISPATCH_OPERATOR_ALLOWLIST lib_selective::kept;lib_selective::kept2.ov;lib_selective::impl_kept
// clang-format on

#include <gtest/gtest.h>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {
Tensor identity(const Tensor& x) { return x; }
} // namespace

OPDISPATCH_LIBRARY(lib_selective, m) {
  m.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_selective::kept(Tensor x) -> Tensor"));
  m.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_selective::dropped(Tensor x) -> Tensor"));
  m.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_selective::kept2.ov(Tensor x) -> Tensor"));
  m.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_selective::kept2"), &identity);  // not listed without its overload
  m.def(OPDISPATCH_SELECTIVE_SCHEMA("lib_selective::impl_kept"), &identity);
}
OPDISPATCH_LIBRARY_IMPL(lib_selective, CPU, m) {
  m.impl(OPDISPATCH_SELECTIVE_NAME("lib_selective::kept"), &identity);
  m.impl(OPDISPATCH_SELECTIVE_NAME("lib_selective::dropped"), &identity);
  m.impl(OPDISPATCH_SELECTIVE_NAME("lib_selective::impl_kept"), kCPU, &identity);
}

OPDISPATCH_LIBRARY_FRAGMENT(lib_fragments, m) { m.def("from_selective_build(Tensor x) -> Tensor"); }
OPDISPATCH_LIBRARY_IMPL(lib_fragments, Meta, m) { m.impl("from_selective_build", &identity); }

TEST(Library, AnAllowlistKeepsOnlyTheListedOperators) {
  auto& d = Dispatcher::singleton();
  auto has = [&](const char* name, const char* overload = "") {
    return d.findOp(OperatorName(name, overload)).has_value();
  };
  EXPECT_TRUE(has("lib_selective::kept"));
  EXPECT_TRUE(d.findSchemaOrThrow("lib_selective::kept", "").hasKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_TRUE(has("lib_selective::kept2", "ov"));
  EXPECT_TRUE(d.findSchemaOrThrow("lib_selective::impl_kept", "").hasKernelForDispatchKey(DispatchKey::CPU));
  EXPECT_FALSE(has("lib_selective::dropped"));
  EXPECT_FALSE(has("lib_selective::kept2"));
}
