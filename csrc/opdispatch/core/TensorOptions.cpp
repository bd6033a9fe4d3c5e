// Printing of Layout and TensorOptions.
#include <opdispatch/core/TensorOptions.h>

namespace opdispatch {

std::ostream& operator<<(std::ostream& os, Layout layout) {
  switch (layout) {
    case Layout::Strided:
      return os << "Strided";
  }
  return os << "UNKNOWN_LAYOUT";
}

std::ostream& operator<<(std::ostream& os, const TensorOptions& options) {
  return os << "TensorOptions(dtype=" << toPythonName(options.dtype()) << ", device=" << options.device()
            << ", layout=" << options.layout() << ", requires_grad=" << (options.requires_grad() ? "true" : "false")
            << ")";
}

} // namespace opdispatch
