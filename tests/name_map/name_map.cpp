// C++ written against PyTorch's names with only the name map applied
// (c10::/at:: -> opdispatch::, TORCH_ -> OPDISPATCH_): the thread-local
// dispatch guards, grad mode, TORCH_CHECK's messages and set_python_module.
// Each operator reports what it saw, for tests/test_name_map.py.
#include <opdispatch/library.h>

#include <cstring>
#include <vector>

namespace {

// TORCH_CHECK(x > 0): no message.
void check_bare(int64_t x) { OPDISPATCH_CHECK(x > 0); }
// TORCH_CHECK with a message: its parts concatenated with operator<<.
void check_message(int64_t x) { OPDISPATCH_CHECK(x > 0, "x must be positive, got ", x, " (", 1.5, ")"); }
void check_value_bare(int64_t x) { OPDISPATCH_CHECK_VALUE(x > 0); }

int64_t flag(bool b) { return b ? 1 : 0; }

// The guards under PyTorch's names; each entry is 1 if the state holds.
std::vector<int64_t> guards() {
  using opdispatch::DispatchKey;
  namespace impl = opdispatch::impl;
  std::vector<int64_t> seen;
  {
    impl::ExcludeDispatchKeyGuard no_cpu(DispatchKey::AutogradCPU);
    seen.push_back(flag(impl::tls_is_dispatch_key_excluded(DispatchKey::AutogradCPU)));
    impl::IncludeDispatchKeyGuard python(opdispatch::DispatchKeySet(DispatchKey::Python));
    seen.push_back(flag(impl::tls_local_dispatch_key_set().included_.has(DispatchKey::Python)));
  }
  seen.push_back(flag(!impl::tls_is_dispatch_key_excluded(DispatchKey::AutogradCPU) &&
                      !impl::tls_is_dispatch_key_included(DispatchKey::Python)));
  {
    opdispatch::AutoDispatchBelowAutograd below;
    bool all = true;
    for (DispatchKey k : opdispatch::autograd_dispatch_keyset) {
      all = all && impl::tls_is_dispatch_key_excluded(k);
    }
    seen.push_back(flag(all && !impl::tls_is_dispatch_key_excluded(DispatchKey::ADInplaceOrView)));
    // Grad mode is its own flag: still on below autograd.
    seen.push_back(flag(opdispatch::GradMode::is_enabled()));
  }
  {
    opdispatch::AutoDispatchBelowADInplaceOrView below;
    seen.push_back(flag(impl::tls_is_dispatch_key_excluded(DispatchKey::ADInplaceOrView) &&
                        impl::tls_is_dispatch_key_excluded(DispatchKey::AutogradPrivateUse1)));
  }
  // BackendSelect is in the default included set, as c10::default_included_set.
  seen.push_back(flag(opdispatch::default_included_set.has(DispatchKey::BackendSelect) &&
                      impl::tls_is_dispatch_key_included(DispatchKey::BackendSelect)));
  return seen;
}

// at::GradMode / at::NoGradGuard / c10::AutoGradMode: the flag before, in
// and after the guards.
std::vector<int64_t> grad_mode() {
  std::vector<int64_t> seen{flag(opdispatch::GradMode::is_enabled())};
  {
    opdispatch::NoGradGuard no_grad;
    seen.push_back(flag(opdispatch::GradMode::is_enabled()));
    opdispatch::AutoGradMode enable(true);
    seen.push_back(flag(opdispatch::GradMode::is_enabled()));
  }
  seen.push_back(flag(opdispatch::GradMode::is_enabled()));
  return seen;
}

bool grad_enabled_in_kernel(const opdispatch::Tensor& /*x*/) { return opdispatch::GradMode::is_enabled(); }

// x.clone() for a contiguous x.
opdispatch::Tensor stub_cpu(const opdispatch::Tensor& x) {
  OPDISPATCH_CHECK(x.is_contiguous(), "stub: expected a contiguous tensor");
  opdispatch::Tensor out = opdispatch::empty(x.sizes(), x.scalar_type());
  std::memcpy(out.data_ptr(), x.data_ptr(), static_cast<size_t>(x.numel()) * opdispatch::elementSize(x.scalar_type()));
  return out;
}

} // namespace

OPDISPATCH_LIBRARY(name_map, m) {
  m.def("check_bare", &check_bare);
  m.def("check_message", &check_message);
  m.def("check_value_bare", &check_value_bare);
  m.def("guards", &guards);
  m.def("grad_mode", &grad_mode);
  m.def("grad_enabled_in_kernel(Tensor x) -> bool");
  m.impl("grad_enabled_in_kernel", opdispatch::kCPU, &grad_enabled_in_kernel);
}

// An operator whose fake impl is in a Python module (PyTorch's
// m.set_python_module / impl_abstract_pystub), with a CPU kernel only.
OPDISPATCH_LIBRARY(name_map_stub, m) {
  m.set_python_module("name_map_fake_impls", "(see tests/test_name_map.py)");
  m.def("stub(Tensor x) -> Tensor");
  m.impl("stub", opdispatch::kCPU, &stub_cpu);
}
