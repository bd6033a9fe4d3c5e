#include <opdispatch/core/Warning.h>

#include <opdispatch/dispatch/ThreadCallState.h>

#include <atomic>
#include <iostream>

namespace opdispatch {

namespace {
WarningHandler* baseHandler() {
  static WarningHandler base;
  return &base;
}
std::atomic<bool> warn_always{false};
} // namespace

void WarningHandler::process(const Warning& warning) {
  const SourceLocation& loc = warning.source_location();
  std::cerr << detail::str("[W ", loc.file, ":", loc.line, "] Warning: ", warning.msg(), " (function ", loc.function,
                           ")\n")
            << std::flush;
}

void warn(const Warning& warning) { WarningUtils::get_warning_handler()->process(warning); }

namespace WarningUtils {

void set_warning_handler(WarningHandler* handler) noexcept { tls_call_state.warning_handler = handler; }

WarningHandler* get_warning_handler() noexcept {
  WarningHandler* handler = tls_call_state.warning_handler;
  return handler != nullptr ? handler : baseHandler();
}

void set_warnAlways(bool setting) noexcept { warn_always.store(setting, std::memory_order_relaxed); }

bool get_warnAlways() noexcept { return warn_always.load(std::memory_order_relaxed); }

} // namespace WarningUtils

} // namespace opdispatch
