// RegistrationHandleRAII: undoes one registration (def, impl, fallback or
// library) when destroyed.
#pragma once

#include <functional>
#include <utility>

namespace opdispatch {

class RegistrationHandleRAII final {
 public:
  RegistrationHandleRAII() = default;
  explicit RegistrationHandleRAII(std::function<void()> on_destruction) : onDestruction_(std::move(on_destruction)) {}
  RegistrationHandleRAII(const RegistrationHandleRAII&) = delete;
  RegistrationHandleRAII& operator=(const RegistrationHandleRAII&) = delete;
  RegistrationHandleRAII(RegistrationHandleRAII&& o) noexcept : onDestruction_(std::move(o.onDestruction_)) {
    o.onDestruction_ = nullptr;
  }
  RegistrationHandleRAII& operator=(RegistrationHandleRAII&& o) noexcept {
    reset();
    onDestruction_ = std::move(o.onDestruction_);
    o.onDestruction_ = nullptr;
    return *this;
  }
  ~RegistrationHandleRAII() { reset(); }

  /// Undoes the registration now (idempotent).
  void reset() {
    if (onDestruction_) {
      auto f = std::move(onDestruction_);
      onDestruction_ = nullptr;
      f();
    }
  }

 private:
  std::function<void()> onDestruction_;
};

} // namespace opdispatch
