// The out-of-line part of key-set extraction: lists among a boxed call's arguments.
#include <opdispatch/dispatch/DispatchKeyExtractor.h>

namespace opdispatch::detail {

DispatchKeySet keySetOfNonTensors(const IValue* values, const std::vector<uint32_t>& indices) {
  DispatchKeySet ks;
  for (uint32_t i : indices) {
    if (!values[i].isTensor()) {
      ks = ks | keySetOf(values[i]);
    }
  }
  return ks;
}

} // namespace opdispatch::detail
