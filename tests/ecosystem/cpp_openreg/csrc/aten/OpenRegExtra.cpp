// Port of pytorch/pytorch
// test/cpp_extensions/open_registration_extension/torch_openreg/csrc/aten/OpenRegExtra.cpp
// with the name map: the openreg operator library (a DEF library, a
// PrivateUse1 kernel, a fragment, AutogradPrivateUse1 kernels). The
// REGISTER_PRIVATEUSE1_DISPATCH stubs and the aten overrides for operators od
// does not have (quantize_per_tensor, the fused attention ops) are left out.
// The two custom_autograd_fn_* kernels keep their registration at
// AutogradPrivateUse1 but are forward only: opdispatch has no C++
// torch::autograd::Function.
#include <cmath>

#include "native/Minimal.h"

#include <opdispatch/library.h>

namespace opdispatch::openreg {

namespace {
int64_t kernel_call_count() { return opdispatch::native::openreg::kernel_calls(); }

opdispatch::Tensor wrapper_custom_autograd_fn_returns_self(opdispatch::Tensor x) {
  opdispatch::native::openreg::count_kernel_call();
  return x;
}

opdispatch::Tensor wrapper_custom_autograd_fn_aliasing(opdispatch::Tensor x) {
  opdispatch::native::openreg::count_kernel_call();
  return opdispatch::native::openreg::view(x, x.sizes());
}

// The original's custom_abs runs abs on the device; here a loop over the
// (host) bytes of a contiguous float tensor.
opdispatch::Tensor wrapper_custom_abs(opdispatch::Tensor x) {
  opdispatch::native::openreg::count_kernel_call();
  OPDISPATCH_CHECK(x.scalar_type() == opdispatch::ScalarType::Float, "Only support float type.");
  OPDISPATCH_CHECK(x.is_contiguous(), "Input tensor need be contiguous.");
  opdispatch::Tensor out = opdispatch::empty(x.sizes(), x.scalar_type(), x.device());
  const float* in = x.data_ptr<float>();
  float* o = out.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    o[i] = std::abs(in[i]);
  }
  return out;
}
} // namespace

// Registration of custom operators
// LITERALINCLUDE START: CUSTOM OPERATOR SCHEMA
OPDISPATCH_LIBRARY(openreg, m) {
  m.def("custom_abs(Tensor input)-> Tensor");
}
// LITERALINCLUDE END: CUSTOM OPERATOR SCHEMA

// LITERALINCLUDE START: CUSTOM OPERATOR DEFAULT
OPDISPATCH_LIBRARY_IMPL(openreg, PrivateUse1, m) {
  m.impl("custom_abs", &wrapper_custom_abs);
}
// LITERALINCLUDE END: CUSTOM OPERATOR DEFAULT

OPDISPATCH_LIBRARY_FRAGMENT(openreg, m) {
  m.def("custom_autograd_fn_returns_self(Tensor input)-> Tensor");
  m.def("custom_autograd_fn_aliasing(Tensor(a) input)-> Tensor(a)");
  // Test hook, as the original's _from_blob_hook_call_count: how many times a
  // kernel of this device ran. Not device-specific, so no per-key impl.
  m.def("_kernel_call_count() -> int", &kernel_call_count);
}

OPDISPATCH_LIBRARY_IMPL(openreg, AutogradPrivateUse1, m) {
  m.impl("custom_autograd_fn_returns_self", &wrapper_custom_autograd_fn_returns_self);
  m.impl("custom_autograd_fn_aliasing", &wrapper_custom_autograd_fn_aliasing);
}

} // namespace opdispatch::openreg
