// Device: where a tensor lives. `cpu` has memory, `meta` has none (shapes
// only); the other device types (cuda, xpu, privateuseone, ...) are names
// whose tensors dispatch to their backend key (their memory, if any, is on
// the host here).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <opdispatch/core/DispatchKey.h>

namespace opdispatch {

/// The device types: each one's name is its backend DispatchKey's name, its
/// number is PyTorch's (c10/core/DeviceType.h), its string is what
/// `Device("...")`, `opdispatch.device` and `Library.impl` device types accept.
// clang-format off
#define OPDISPATCH_FORALL_DEVICE_TYPES(_)                                                                      \
  _(CPU, 0, "cpu")                                                                                           \
  _(CUDA, 1, "cuda") _(HIP, 6, "hip") _(MAIA, 8, "maia") _(XLA, 9, "xla") _(XPU, 12, "xpu") _(MPS, 13, "mps") \
  _(Meta, 14, "meta") _(HPU, 15, "hpu") _(VE, 16, "ve") _(Lazy, 17, "lazy") _(IPU, 18, "ipu")                \
  _(MTIA, 19, "mtia") _(PrivateUse1, 20, "privateuseone")
// clang-format on

enum class DeviceType : int8_t {
#define OPDISPATCH_DEFINE_DEVICE_TYPE(name, number, str) name = number,
  OPDISPATCH_FORALL_DEVICE_TYPES(OPDISPATCH_DEFINE_DEVICE_TYPE)
#undef OPDISPATCH_DEFINE_DEVICE_TYPE
};

// kCPU, kCUDA, ...: PyTorch's short names (`m.impl("foo", kCPU, &foo_cpu)`).
#define OPDISPATCH_DEFINE_DEVICE_TYPE_CONSTANT(name, number, str) constexpr DeviceType k##name = DeviceType::name;
OPDISPATCH_FORALL_DEVICE_TYPES(OPDISPATCH_DEFINE_DEVICE_TYPE_CONSTANT)
#undef OPDISPATCH_DEFINE_DEVICE_TYPE_CONSTANT

/// A device index; -1 means none given. PyTorch: c10::DeviceIndex.
using DeviceIndex = int8_t;

class Device {
 public:
  constexpr Device() = default;
  /// Throws ValueError unless `index` is -1 (none) or in [0, 127].
  Device(DeviceType type, DeviceIndex index = -1);
  /// Parses "cpu", "cuda", "cuda:1", "xpu", "privateuseone", ... (see
  /// OPDISPATCH_FORALL_DEVICE_TYPES). Throws ValueError naming the string and
  /// the valid device types.
  explicit Device(const std::string& spec);

  DeviceType type() const { return type_; }
  DeviceIndex index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  bool is_meta() const { return type_ == DeviceType::Meta; }
  bool is_xpu() const { return type_ == DeviceType::XPU; }
  bool is_privateuseone() const { return type_ == DeviceType::PrivateUse1; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  /// "cpu", "cuda:1", ...
  std::string str() const;

 private:
  DeviceType type_ = DeviceType::CPU;
  DeviceIndex index_ = -1;
};

/// The device type's string: "cpu", "cuda", "privateuseone", ...
const char* toString(DeviceType t);
std::ostream& operator<<(std::ostream& os, DeviceType t);
std::ostream& operator<<(std::ostream& os, const Device& d);
/// Gives PrivateUse1 a device-type name of its own (an out-of-tree device
/// plugin calls it once, e.g. "openreg"): afterwards Device parses the name
/// (and still "privateuseone") and prints it. Calling it again with the same
/// name is a no-op; a different name, an existing device-type name or an
/// empty one throws. PyTorch: c10::register_privateuse1_backend.
void register_privateuse1_backend(const std::string& backend_name);
/// PrivateUse1's device-type name: the registered one, else "privateuseone".
/// PyTorch: c10::get_privateuse1_backend.
std::string get_privateuse1_backend();

/// The backend dispatch key of a device type: cpu -> CPU, xpu -> XPU,
/// privateuseone -> PrivateUse1, ... PyTorch: torch::dispatch(DeviceType, f).
DispatchKey backendKeyForDevice(DeviceType t);

} // namespace opdispatch
