// Port of pytorch/pytorch
// test/cpp_extensions/open_registration_extension/torch_openreg/csrc/aten/native/Minimal.h
// with the name map (at::/c10:: -> opdispatch::). The device's memory is host
// memory (the original's OpenReg runtime also allocates on the host), so the
// kernels are memcpy and plain loops in place of the runtime's calls.
#pragma once

#include <optional>

#include <opdispatch/library.h>

namespace opdispatch::native::openreg {

// opdispatch has no C++ Layout or MemoryFormat type: their schema arguments
// take int64_t, as findSchemaDifferences accepts.
opdispatch::Tensor empty_memory_format(opdispatch::IntArrayRef size, std::optional<opdispatch::ScalarType> dtype_opt,
                                       std::optional<int64_t> layout_opt,
                                       std::optional<opdispatch::Device> device_opt,
                                       std::optional<bool> pin_memory_opt,
                                       std::optional<int64_t> memory_format_opt);

opdispatch::Tensor view(const opdispatch::Tensor& self, opdispatch::IntArrayRef size);

opdispatch::Tensor& copy_(opdispatch::Tensor& self, const opdispatch::Tensor& src, bool non_blocking);

void cpu_fallback(const opdispatch::OperatorHandle& op, opdispatch::Stack* stack);

/// How many times a kernel of this device ran (the test's probe, as the
/// original extension's custom_add_called counter).
int64_t kernel_calls();
void count_kernel_call();

} // namespace opdispatch::native::openreg
