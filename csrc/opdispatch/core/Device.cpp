// Device parsing and printing, and the device type -> dispatch key map.
#include <opdispatch/core/Device.h>

#include <atomic>
#include <mutex>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
struct DeviceTypeName {
  DeviceType type;
  const char* name;
};
constexpr DeviceTypeName kNames[] = {
#define OPDISPATCH_DEVICE_TYPE_NAME(name, number, str) {DeviceType::name, str},
    OPDISPATCH_FORALL_DEVICE_TYPES(OPDISPATCH_DEVICE_TYPE_NAME)
#undef OPDISPATCH_DEVICE_TYPE_NAME
};

std::string validTypes() {
  std::string s;
  for (const auto& n : kNames) {
    s += s.empty() ? "" : ", ";
    s += n.name;
  }
  return s;
}

// PrivateUse1's registered name: written once under the mutex, before the
// flag is published, and never changed afterwards, so readers that saw the
// flag read it without locking.
std::mutex gPrivateUse1Mutex;
std::string gPrivateUse1Name;
std::atomic<bool> gPrivateUse1Registered{false};

void checkIndex(int index, const std::string& what) {
  OPDISPATCH_CHECK_WITH(ArgumentValueError, index >= -1 && index < 128, "invalid device index ", index, " for ", what,
                        ": expected a number from 0 to 127 (or -1 for none)");
}
} // namespace

Device::Device(DeviceType type, DeviceIndex index) : type_(type), index_(index) { checkIndex(index, toString(type)); }

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string type_name = spec.substr(0, colon);
  bool found = false;
  for (const auto& n : kNames) {
    if (type_name == n.name) {
      type_ = n.type;
      found = true;
    }
  }
  if (!found && gPrivateUse1Registered.load(std::memory_order_acquire) && type_name == gPrivateUse1Name) {
    type_ = DeviceType::PrivateUse1;
    found = true;
  }
  OPDISPATCH_CHECK_WITH(ArgumentValueError, found, "unknown device '", spec, "'. Expected one of ", validTypes(),
                        ", optionally followed by :<index>");
  if (colon != std::string::npos) {
    std::string idx = spec.substr(colon + 1);
    bool digits = !idx.empty() && idx.size() <= 3 && idx.find_first_not_of("0123456789") == std::string::npos;
    OPDISPATCH_CHECK_WITH(ArgumentValueError, digits && std::stoi(idx) < 128, "invalid device index in '", spec,
                          "'; expected a number from 0 to 127 after ':'");
    index_ = static_cast<DeviceIndex>(std::stoi(idx));
  }
}

std::string Device::str() const {
  std::string s = toString(type_);
  if (has_index()) {
    s += ":" + std::to_string(index_);
  }
  return s;
}

const char* toString(DeviceType t) {
  if (t == DeviceType::PrivateUse1 && gPrivateUse1Registered.load(std::memory_order_acquire)) {
    return gPrivateUse1Name.c_str();
  }
  for (const auto& n : kNames) {
    if (n.type == t) {
      return n.name;
    }
  }
  return "unknown";
}

void register_privateuse1_backend(const std::string& backend_name) {
  std::lock_guard<std::mutex> lock(gPrivateUse1Mutex);
  if (gPrivateUse1Registered.load(std::memory_order_relaxed)) {
    OPDISPATCH_CHECK(backend_name == gPrivateUse1Name,
                     "rename_privateuse1_backend: the PrivateUse1 backend is "
                     "already named '",
                     gPrivateUse1Name, "'; it can be named once per process (got '", backend_name, "')");
    return;
  }
  bool valid = !backend_name.empty() && backend_name.find(':') == std::string::npos;
  for (const auto& n : kNames) {
    valid = valid && backend_name != n.name;
  }
  OPDISPATCH_CHECK_WITH(ArgumentValueError, valid, "rename_privateuse1_backend: '", backend_name,
                        "' cannot name a device type: "
                        "it must be non-empty, without ':', and none of ",
                        validTypes());
  gPrivateUse1Name = backend_name;
  gPrivateUse1Registered.store(true, std::memory_order_release);
}

std::string get_privateuse1_backend() { return toString(DeviceType::PrivateUse1); }

std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << toString(t); }
std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

DispatchKey backendKeyForDevice(DeviceType t) {
  switch (t) {
#define OPDISPATCH_DEVICE_TYPE_KEY(name, number, str) \
  case DeviceType::name:                              \
    return DispatchKey::name;
    OPDISPATCH_FORALL_DEVICE_TYPES(OPDISPATCH_DEVICE_TYPE_KEY)
#undef OPDISPATCH_DEVICE_TYPE_KEY
  }
  return DispatchKey::Undefined;
}

} // namespace opdispatch
