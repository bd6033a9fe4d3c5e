// Device: where a tensor lives. `cpu` has memory, `meta` has none (shapes
// only), `cuda` is a name without memory here, `privateuseone` is for
// out-of-tree backends.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include <opdispatch/core/DispatchKey.h>

namespace opdispatch {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2, PrivateUse1 = 3 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1; ///< -1: no index given.

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  /// Parses "cpu", "cuda", "cuda:1", "meta", "privateuseone".
  /// Throws ValueError naming the string and the valid device types.
  explicit Device(const std::string& spec);

  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool has_index() const { return index >= 0; }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_meta() const { return type == DeviceType::Meta; }
  std::string str() const;
};

const char* toString(DeviceType t);
std::ostream& operator<<(std::ostream& os, const Device& d);
/// The backend dispatch key of a device type: cpu -> CPU, cuda -> CUDA,
/// meta -> Meta, privateuseone -> PrivateUse1.
DispatchKey backendKeyForDevice(DeviceType t);

} // namespace opdispatch
