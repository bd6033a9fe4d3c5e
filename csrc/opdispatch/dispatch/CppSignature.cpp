// Readable names of C++ kernel signatures.
#include <opdispatch/dispatch/CppSignature.h>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace opdispatch {

std::string CppSignature::name() const {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(signature_.name(), nullptr, nullptr, &status),
                                                   std::free);
  return status == 0 && demangled ? std::string(demangled.get()) : std::string(signature_.name());
}

} // namespace opdispatch
