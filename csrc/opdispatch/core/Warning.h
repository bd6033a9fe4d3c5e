// C++ warnings (PyTorch: c10::Warning, c10::warn, c10::WarningHandler and
// c10::WarningUtils in c10/util/Exception.h) and the OPDISPATCH_WARN /
// OPDISPATCH_WARN_ONCE macros that issue them. A warning goes to the calling
// thread's handler: by default one that prints it to stderr; a call from
// Python installs one that turns it into a Python warning when the call
// returns (csrc/python/PyWarningHandler.h).
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

/// Where a warning was issued: the function, file and line of the macro.
/// PyTorch: c10::SourceLocation.
struct SourceLocation {
  const char* function;
  const char* file;
  uint32_t line;
};

/// One warning: its category, where it was issued, its message, and whether a
/// handler should show the message as it is (`verbatim`) rather than append
/// the C++ location to it. PyTorch: c10::Warning.
class Warning {
 public:
  /// The categories, mapped to Python's UserWarning and DeprecationWarning.
  class UserWarning {};
  class DeprecationWarning {};
  using warning_variant_t = std::variant<UserWarning, DeprecationWarning>;

  Warning(warning_variant_t type, const SourceLocation& source_location, std::string msg, bool verbatim)
      : type_(type),
        source_location_(source_location),
        msg_(std::move(msg)),
        verbatim_(verbatim) {}

  warning_variant_t type() const { return type_; }
  const SourceLocation& source_location() const { return source_location_; }
  const std::string& msg() const { return msg_; }
  bool verbatim() const { return verbatim_; }

 private:
  warning_variant_t type_;
  SourceLocation source_location_;
  std::string msg_;
  bool verbatim_;
};

using UserWarning = Warning::UserWarning;
using DeprecationWarning = Warning::DeprecationWarning;

/// Receives the warnings issued on the threads it is installed on. The base
/// class prints "Warning: <msg> (function <f>)" after the file and line to
/// stderr. PyTorch: c10::WarningHandler.
class WarningHandler {
 public:
  virtual ~WarningHandler() = default;
  virtual void process(const Warning& warning);
};

/// Passes `warning` to the calling thread's handler. PyTorch: c10::warn.
void warn(const Warning& warning);

namespace WarningUtils {

/// Installs `handler` for the calling thread (nullptr: the stderr handler).
/// The caller keeps it alive while it is installed. PyTorch:
/// c10::WarningUtils::set_warning_handler (thread-local there too).
void set_warning_handler(WarningHandler* handler) noexcept;
/// The calling thread's handler (never null).
WarningHandler* get_warning_handler() noexcept;

/// Installs a handler for its lifetime, then the previous one again.
/// PyTorch: c10::WarningUtils::WarningHandlerGuard.
class WarningHandlerGuard {
 public:
  explicit WarningHandlerGuard(WarningHandler* new_handler) : prev_handler_(get_warning_handler()) {
    set_warning_handler(new_handler);
  }
  WarningHandlerGuard(const WarningHandlerGuard&) = delete;
  WarningHandlerGuard& operator=(const WarningHandlerGuard&) = delete;
  ~WarningHandlerGuard() { set_warning_handler(prev_handler_); }

 private:
  WarningHandler* prev_handler_;
};

/// With warn-always set (process-wide), OPDISPATCH_WARN_ONCE warns on every
/// call, so tests can see its warning. PyTorch: c10::WarningUtils::set_warnAlways
/// (torch.set_warn_always from Python).
void set_warnAlways(bool setting) noexcept;
bool get_warnAlways() noexcept;

/// Sets warn-always for its lifetime, then the previous setting again.
/// PyTorch: c10::WarningUtils::WarnAlways.
class WarnAlways {
 public:
  explicit WarnAlways(bool setting = true) : prev_setting_(get_warnAlways()) { set_warnAlways(setting); }
  WarnAlways(const WarnAlways&) = delete;
  WarnAlways& operator=(const WarnAlways&) = delete;
  ~WarnAlways() { set_warnAlways(prev_setting_); }

 private:
  bool prev_setting_;
};

} // namespace WarningUtils

} // namespace opdispatch

#define OPDISPATCH_WARN_WITH(warning_t, ...)                                                                   \
  ::opdispatch::warn(::opdispatch::Warning(warning_t(), {__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, \
                                           ::opdispatch::detail::str(__VA_ARGS__), false))

/// Issues a UserWarning whose message is the arguments concatenated with
/// operator<< (as OPDISPATCH_CHECK's). From Python it surfaces as a
/// UserWarning "<msg> (Triggered internally at <file>:<line>.)" when the call
/// returns. PyTorch: TORCH_WARN.
#define OPDISPATCH_WARN(...) OPDISPATCH_WARN_WITH(::opdispatch::UserWarning, __VA_ARGS__)
/// OPDISPATCH_WARN as a DeprecationWarning. PyTorch: TORCH_WARN_DEPRECATION.
#define OPDISPATCH_WARN_DEPRECATION(...) OPDISPATCH_WARN_WITH(::opdispatch::DeprecationWarning, __VA_ARGS__)

/// OPDISPATCH_WARN the first time this line runs in the process (every time
/// while warn-always is set). PyTorch: TORCH_WARN_ONCE.
#define OPDISPATCH_WARN_ONCE(...)                                                                 \
  if (::opdispatch::WarningUtils::get_warnAlways()) {                                             \
    OPDISPATCH_WARN(__VA_ARGS__);                                                                 \
  } else {                                                                                        \
    [[maybe_unused]] static const bool OPDISPATCH_CONCAT(opdispatch_warn_once_, __LINE__) = [&] { \
      OPDISPATCH_WARN(__VA_ARGS__);                                                               \
      return true;                                                                                \
    }();                                                                                          \
  }
