// Port of pytorch/pytorch
// test/cpp_extensions/open_registration_extension/torch_openreg/csrc/aten/native/Minimal.cpp
// with the name map. Memory of the device is host memory, so copies are
// memcpy (contiguous tensors, as the original's basic use case), and the CPU
// fallback runs an operator on CPU tensors over the same bytes (the
// original's at::native::cpu_fallback copies to the CPU and back).
#include "native/Minimal.h"

#include <atomic>
#include <cstring>
#include <vector>

namespace opdispatch::native::openreg {

namespace {
std::atomic<int64_t> gKernelCalls{0};

constexpr opdispatch::DeviceType kDevice = opdispatch::DeviceType::PrivateUse1;

/// A CPU tensor over the bytes of an openreg tensor (which the caller keeps alive).
opdispatch::Tensor cpuAlias(const opdispatch::Tensor& t) {
  OPDISPATCH_CHECK(t.device().type() == kDevice, "Only support openreg device.");
  return opdispatch::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.scalar_type());
}

/// An openreg tensor with the contents of the CPU tensor `t`.
opdispatch::Tensor toDevice(const opdispatch::Tensor& t) {
  OPDISPATCH_CHECK(t.is_contiguous(), "openreg fallback: only contiguous results are supported");
  opdispatch::Tensor out = opdispatch::empty(t.sizes(), t.scalar_type(), opdispatch::Device(kDevice, 0));
  std::memcpy(out.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()) * opdispatch::elementSize(t.scalar_type()));
  return out;
}
} // namespace

int64_t kernel_calls() { return gKernelCalls.load(); }
void count_kernel_call() { ++gKernelCalls; }

opdispatch::Tensor empty_memory_format(opdispatch::IntArrayRef size, std::optional<opdispatch::ScalarType> dtype_opt,
                                       std::optional<int64_t> /*layout_opt*/,
                                       std::optional<opdispatch::Device> device_opt,
                                       std::optional<bool> /*pin_memory_opt*/,
                                       std::optional<int64_t> /*memory_format_opt*/) {
  count_kernel_call();
  opdispatch::Device device = device_opt.value_or(opdispatch::Device(kDevice, 0));
  OPDISPATCH_CHECK(device.type() == kDevice, "openreg empty: expected an openreg device, got ", device);
  return opdispatch::empty(size, dtype_opt.value_or(opdispatch::ScalarType::Float),
                           opdispatch::Device(kDevice, device.has_index() ? device.index() : 0));
}

opdispatch::Tensor view(const opdispatch::Tensor& self, opdispatch::IntArrayRef size) {
  count_kernel_call();
  OPDISPATCH_CHECK(self.is_contiguous(), "openreg view: only contiguous tensors");
  int64_t numel = 1;
  for (int64_t s : size) {
    numel *= s;
  }
  OPDISPATCH_CHECK(numel == self.numel(), "shape '", size, "' is invalid for input of size ", self.numel());
  std::vector<int64_t> strides(size.size(), 1);
  for (size_t i = size.size(); i-- > 1;) {
    strides[i - 1] = strides[i] * size[i];
  }
  return self.as_strided(size, strides, 0);
}

// The original's _copy_from: cpu <-> openreg, same sizes and dtype, contiguous.
opdispatch::Tensor& copy_(opdispatch::Tensor& self, const opdispatch::Tensor& src, bool /*non_blocking*/) {
  count_kernel_call();
  OPDISPATCH_CHECK(self.device().is_cpu() || self.device().type() == kDevice,
                   "Dummy test only allows copy from cpu -> dummy device.");
  OPDISPATCH_CHECK(src.device().is_cpu() || src.device().type() == kDevice,
                   "Dummy test only allows copy from cpu -> dummy device.");
  OPDISPATCH_CHECK(self.sizes() == src.sizes());
  OPDISPATCH_CHECK(self.scalar_type() == src.scalar_type());
  OPDISPATCH_CHECK(self.is_contiguous() && src.is_contiguous());
  std::memcpy(self.data_ptr(), src.data_ptr(),
              static_cast<size_t>(src.numel()) * opdispatch::elementSize(src.scalar_type()));
  return self;
}

// Note [CPU Fallback Algorithm], as the original: (1) openreg tensor
// arguments become CPU tensors (here: aliases of the same bytes), (2) the
// operator runs on them, (3) tensor results go back to the device.
void cpu_fallback(const opdispatch::OperatorHandle& op, opdispatch::Stack* stack) {
  count_kernel_call();
  const size_t n = op.schema().arguments().size();
  OPDISPATCH_CHECK(stack->size() >= n, "openreg fallback: ", op.operator_name(), " expects ", n, " arguments");
  std::vector<opdispatch::Tensor> keep_alive;
  for (size_t i = stack->size() - n; i < stack->size(); ++i) {
    opdispatch::IValue& arg = (*stack)[i];
    if (arg.isTensor() && arg.toTensor().defined() && arg.toTensor().device().type() == kDevice) {
      keep_alive.push_back(arg.toTensor());
      arg = opdispatch::IValue(cpuAlias(keep_alive.back()));
    }
  }
  const size_t base = stack->size() - n;
  op.callBoxed(stack);
  for (size_t i = base; i < stack->size(); ++i) {
    opdispatch::IValue& ret = (*stack)[i];
    if (ret.isTensor() && ret.toTensor().defined() && !keep_alive.empty()) {
      ret = opdispatch::IValue(toDevice(ret.toTensor()));
    }
  }
}

} // namespace opdispatch::native::openreg
