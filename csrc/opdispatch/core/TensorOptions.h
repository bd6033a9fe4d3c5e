// TensorOptions: the dtype, device, layout and requires_grad a new tensor gets,
// as ATen kernels pass them (`x.options()`, `dtype(kFloat).device(kCPU)`),
// with Layout and MemoryFormat. PyTorch: c10/core/TensorOptions.h.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include <opdispatch/core/Device.h>
#include <opdispatch/core/ScalarType.h>

namespace opdispatch {

/// How a tensor's elements are laid out. opdispatch has strided tensors only.
/// Numbered as PyTorch's c10::Layout (kStrided = 0).
enum class Layout : int8_t { Strided = 0 };
constexpr Layout kStrided = Layout::Strided;
std::ostream& operator<<(std::ostream& os, Layout layout);

/// A requested memory layout of a new tensor's strides, numbered as PyTorch's
/// c10::MemoryFormat (schemas' `MemoryFormat?` arguments carry these numbers).
enum class MemoryFormat : int8_t { Contiguous = 0, Preserve = 1, ChannelsLast = 2, ChannelsLast3d = 3 };

/// Options of a new tensor; each unset field takes its default when read
/// (float32, cpu, strided, no grad). The setters return a modified copy, so
/// options chain: `TensorOptions().dtype(kDouble).device(kCPU)`.
class TensorOptions {
 public:
  TensorOptions() = default;
  /* implicit */ TensorOptions(ScalarType dtype) : dtype_(dtype) {}  // NOLINT: as ATen, `empty(sizes, kFloat)`
  /* implicit */ TensorOptions(Device device) : device_(device) {}    // NOLINT
  /* implicit */ TensorOptions(DeviceType type) : device_(Device(type)) {}  // NOLINT
  /* implicit */ TensorOptions(Layout layout) : layout_(layout) {}    // NOLINT

  TensorOptions dtype(std::optional<ScalarType> dtype) const {
    TensorOptions r = *this;
    r.dtype_ = dtype;
    return r;
  }
  TensorOptions device(std::optional<Device> device) const {
    TensorOptions r = *this;
    r.device_ = device;
    return r;
  }
  TensorOptions device(DeviceType type, DeviceIndex index = -1) const { return device(Device(type, index)); }
  TensorOptions layout(std::optional<Layout> layout) const {
    TensorOptions r = *this;
    r.layout_ = layout;
    return r;
  }
  TensorOptions requires_grad(std::optional<bool> requires_grad) const {
    TensorOptions r = *this;
    r.requires_grad_ = requires_grad;
    return r;
  }
  TensorOptions memory_format(std::optional<MemoryFormat> format) const {
    TensorOptions r = *this;
    r.memory_format_ = format;
    return r;
  }

  /// The dtype (float32 unless set). PyTorch returns a caffe2::TypeMeta here; a ScalarType serves the same uses.
  ScalarType dtype() const { return dtype_.value_or(kFloat); }
  Device device() const { return device_.value_or(Device(kCPU)); }
  Layout layout() const { return layout_.value_or(kStrided); }
  bool requires_grad() const { return requires_grad_.value_or(false); }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  std::optional<Device> device_opt() const { return device_; }
  std::optional<Layout> layout_opt() const { return layout_; }
  std::optional<bool> requires_grad_opt() const { return requires_grad_; }
  std::optional<MemoryFormat> memory_format_opt() const { return memory_format_; }
  bool has_dtype() const { return dtype_.has_value(); }
  bool has_device() const { return device_.has_value(); }
  /// Same dtype and device (what ATen's checkSameType compares).
  bool type_equal(const TensorOptions& other) const {
    return dtype() == other.dtype() && device().type() == other.device().type();
  }

 private:
  std::optional<ScalarType> dtype_;
  std::optional<Device> device_;
  std::optional<Layout> layout_;
  std::optional<bool> requires_grad_;
  std::optional<MemoryFormat> memory_format_;
};

/// `dtype(kFloat).device(kCPU)`: the free functions start a chain, as ATen's do.
inline TensorOptions dtype(ScalarType dtype) { return TensorOptions().dtype(dtype); }
inline TensorOptions device(Device device) { return TensorOptions().device(device); }
inline TensorOptions device(DeviceType type, DeviceIndex index = -1) { return TensorOptions().device(type, index); }
inline TensorOptions layout(Layout layout) { return TensorOptions().layout(layout); }
inline TensorOptions requires_grad(bool requires_grad = true) { return TensorOptions().requires_grad(requires_grad); }

/// "TensorOptions(dtype=float32, device=cpu, layout=Strided, requires_grad=false)".
std::ostream& operator<<(std::ostream& os, const TensorOptions& options);

} // namespace opdispatch
