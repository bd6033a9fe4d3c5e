// A device plugin in C++: the PrivateUse1 device, renamed "hostmem" from
// Python, whose memory is ordinary host memory. It gives the device what a
// backend must have (a factory and copies to and from the CPU) and two
// computing kernels, and sends every other operator to a boxed fallback that
// runs the operator's CPU kernel over the same bytes. The structure is that
// of PyTorch's out-of-tree device example (OpenReg) under the name map.
#include <opdispatch/library.h>

#include <atomic>
#include <cstring>

namespace {

constexpr opdispatch::DeviceType kDevice = opdispatch::DeviceType::PrivateUse1;
std::atomic<int64_t> gKernelCalls{0};

/// A CPU tensor over the bytes of a device tensor `t` (which the caller keeps alive).
opdispatch::Tensor hostAlias(const opdispatch::Tensor& t) {
  return opdispatch::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.scalar_type());
}

/// A device tensor with the values of the contiguous CPU tensor `t`.
opdispatch::Tensor toDevice(const opdispatch::Tensor& t) {
  opdispatch::Tensor c = t.contiguous();
  opdispatch::Tensor out = opdispatch::empty(c.sizes(), c.scalar_type(), opdispatch::Device(kDevice, 0));
  std::memcpy(out.data_ptr(), c.data_ptr(), static_cast<size_t>(c.numel()) * opdispatch::elementSize(c.scalar_type()));
  return out;
}

opdispatch::Tensor empty_memory_format(opdispatch::IntArrayRef size, std::optional<opdispatch::ScalarType> dtype,
                                       std::optional<int64_t> /*layout*/, std::optional<opdispatch::Device> device,
                                       std::optional<bool> /*pin_memory*/, std::optional<int64_t> /*memory_format*/) {
  ++gKernelCalls;
  int8_t index = device && device->has_index() ? device->index() : 0;
  return opdispatch::empty(size, dtype.value_or(opdispatch::kFloat), opdispatch::Device(kDevice, index));
}

// cpu -> device, device -> cpu and device -> device: same sizes and dtype.
opdispatch::Tensor& copy_(opdispatch::Tensor& self, const opdispatch::Tensor& src, bool /*non_blocking*/) {
  ++gKernelCalls;
  OPDISPATCH_CHECK(self.sizes() == src.sizes(), "hostmem copy_: sizes differ: ", self.sizes(), " and ", src.sizes());
  OPDISPATCH_CHECK(self.scalar_type() == src.scalar_type(), "hostmem copy_: dtypes differ");
  opdispatch::Tensor dst = self.is_cpu() ? self : hostAlias(self);
  dst.copy_(src.is_cpu() ? src : hostAlias(src)); // the CPU kernel of od::copy_ moves the bytes
  return self;
}

opdispatch::Tensor add(const opdispatch::Tensor& self, const opdispatch::Tensor& other,
                       const opdispatch::Scalar& alpha) {
  ++gKernelCalls;
  return toDevice(hostAlias(self).add(hostAlias(other), alpha));
}

opdispatch::Tensor mul(const opdispatch::Tensor& self, const opdispatch::Tensor& other) {
  ++gKernelCalls;
  return toDevice(hostAlias(self) * hostAlias(other));
}

// Every other operator: its tensor arguments become CPU aliases, the CPU
// kernel runs, and tensor results come back to the device.
void cpu_fallback(const opdispatch::OperatorHandle& op, opdispatch::Stack* stack) {
  ++gKernelCalls;
  const size_t num_arguments = op.schema().arguments().size();
  std::vector<opdispatch::Tensor> keep; // the device tensors the aliases point into
  for (size_t i = stack->size() - num_arguments; i < stack->size(); ++i) {
    opdispatch::IValue& arg = (*stack)[i];
    if (arg.isTensor() && arg.toTensor().device().type() == kDevice) {
      keep.push_back(arg.toTensor());
      arg = opdispatch::IValue(hostAlias(keep.back()));
    }
  }
  op.redispatchBoxed(opdispatch::DispatchKeySet(opdispatch::DispatchKey::CPU), stack);
  const size_t num_returns = op.schema().returns().size();
  for (size_t i = stack->size() - num_returns; i < stack->size(); ++i) {
    if ((*stack)[i].isTensor()) {
      (*stack)[i] = opdispatch::IValue(toDevice((*stack)[i].toTensor()));
    }
  }
}

int64_t kernel_calls() { return gKernelCalls.load(); }

} // namespace

OPDISPATCH_LIBRARY_IMPL(od, PrivateUse1, m) {
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("copy_", copy_);
  m.impl("add.Tensor", add);
  m.impl("mul.Tensor", mul);
}

OPDISPATCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(opdispatch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

OPDISPATCH_LIBRARY(hostmem, m) { m.def("kernel_calls() -> int", kernel_calls); }
