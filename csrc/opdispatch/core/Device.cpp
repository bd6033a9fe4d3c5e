// Device parsing and printing.
#include <opdispatch/core/Device.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
struct DeviceTypeName {
  DeviceType type;
  const char* name;
};
constexpr DeviceTypeName kNames[] = {
    {DeviceType::CPU, "cpu"},
    {DeviceType::CUDA, "cuda"},
    {DeviceType::Meta, "meta"},
    {DeviceType::PrivateUse1, "privateuseone"},
};
} // namespace

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string type_name = spec.substr(0, colon);
  bool found = false;
  for (const auto& n : kNames) {
    if (type_name == n.name) {
      type = n.type;
      found = true;
    }
  }
  OPDISPATCH_CHECK_VALUE(found, "unknown device '", spec,
                         "'; expected one of cpu, cuda, meta, privateuseone, optionally "
                         "followed by :<index>");
  if (colon != std::string::npos) {
    std::string idx = spec.substr(colon + 1);
    bool digits = !idx.empty() && idx.size() <= 3 &&
                  idx.find_first_not_of("0123456789") == std::string::npos;
    OPDISPATCH_CHECK_VALUE(digits && std::stoi(idx) < 128, "invalid device index in '", spec,
                           "'; expected a number from 0 to 127 after ':'");
    index = static_cast<int8_t>(std::stoi(idx));
  }
}

std::string Device::str() const {
  std::string s = toString(type);
  if (has_index()) {
    s += ":" + std::to_string(index);
  }
  return s;
}

const char* toString(DeviceType t) {
  for (const auto& n : kNames) {
    if (n.type == t) {
      return n.name;
    }
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

DispatchKey backendKeyForDevice(DeviceType t) {
  switch (t) {
    case DeviceType::CPU:
      return DispatchKey::CPU;
    case DeviceType::CUDA:
      return DispatchKey::CUDA;
    case DeviceType::Meta:
      return DispatchKey::Meta;
    case DeviceType::PrivateUse1:
      return DispatchKey::PrivateUse1;
  }
  return DispatchKey::Undefined;
}

} // namespace opdispatch
