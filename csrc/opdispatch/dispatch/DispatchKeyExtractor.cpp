// The out-of-line part of key-set extraction: lists among a boxed call's arguments, and
// tensor positions that do not fit in the schema.
#include <opdispatch/dispatch/DispatchKeyExtractor.h>

namespace opdispatch::detail {

DispatchKeySet keySetOfIndexedOutOfLine(const IValue* values, const std::vector<uint32_t>& indices) {
  DispatchKeySet ks;
  for (uint32_t i : indices) {
    ks = ks | keySetOf(values[i]);
  }
  return ks;
}

} // namespace opdispatch::detail
