// Port of pytorch/pytorch
// test/cpp_extensions/open_registration_extension/torch_openreg/csrc/aten/OpenRegMinimal.cpp
// with the name map (TORCH_ -> OPDISPATCH_, at::/c10::/torch:: -> opdispatch::,
// the aten namespace -> od, opdispatch's built-in operator library). The
// registration structure is the original's: kernels for PrivateUse1, a global
// PrivateUse1 fallback, and one operator sent to the fallback by name. od has
// no empty_strided, as_strided, resize_, _reshape_alias, _local_scalar_dense
// or set_ overloads; its in-place copy_ plays the original's _copy_from.
#include "native/Minimal.h"

#include <opdispatch/library.h>

namespace opdispatch::openreg {

namespace {

// LITERALINCLUDE START: EMPTY.MEMORY_FORMAT WRAPPER
opdispatch::Tensor wrapper_empty_memory_format(opdispatch::IntArrayRef size,
                                               std::optional<opdispatch::ScalarType> dtype_opt,
                                               std::optional<int64_t> layout_opt,
                                               std::optional<opdispatch::Device> device_opt,
                                               std::optional<bool> pin_memory_opt,
                                               std::optional<int64_t> memory_format_opt) {
  return opdispatch::native::openreg::empty_memory_format(size, dtype_opt, layout_opt, device_opt, pin_memory_opt,
                                                          memory_format_opt);
}
// LITERALINCLUDE END: EMPTY.MEMORY_FORMAT WRAPPER

opdispatch::Tensor& wrapper_copy_(opdispatch::Tensor& self, const opdispatch::Tensor& src, bool non_blocking) {
  return opdispatch::native::openreg::copy_(self, src, non_blocking);
}

opdispatch::Tensor wrapper_view(const opdispatch::Tensor& self, opdispatch::IntArrayRef size) {
  return opdispatch::native::openreg::view(self, size);
}

// LITERALINCLUDE START: FALLBACK WRAPPER
void wrapper_cpu_fallback(const opdispatch::OperatorHandle& op, opdispatch::Stack* stack) {
  opdispatch::native::openreg::cpu_fallback(op, stack);
}
// LITERALINCLUDE END: FALLBACK WRAPPER

} // namespace

// LITERALINCLUDE START: TORCH_LIBRARY_IMPL DEFAULT
OPDISPATCH_LIBRARY_IMPL(od, PrivateUse1, m) {
  m.impl("empty.memory_format", wrapper_empty_memory_format);
  m.impl("copy_", wrapper_copy_);
  m.impl("view", wrapper_view);
}
// LITERALINCLUDE END: TORCH_LIBRARY_IMPL DEFAULT

// LITERALINCLUDE START: FALLBACK GLOBAL
OPDISPATCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(opdispatch::CppFunction::makeFromBoxedFunction<&wrapper_cpu_fallback>());
}
// LITERALINCLUDE END: FALLBACK GLOBAL

// LITERALINCLUDE START: FALLBACK SINGLE
OPDISPATCH_LIBRARY_IMPL(od, PrivateUse1, m) {
  m.impl("sub.Tensor", opdispatch::CppFunction::makeFromBoxedFunction<&wrapper_cpu_fallback>());
}
// LITERALINCLUDE END: FALLBACK SINGLE

} // namespace opdispatch::openreg
