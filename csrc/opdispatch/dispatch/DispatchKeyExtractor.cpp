// The out-of-line part of key-set extraction: lists inside IValues.
#include <opdispatch/dispatch/DispatchKeyExtractor.h>

namespace opdispatch::detail {

DispatchKeySet keySetOfNonTensor(const IValue& value) {
  DispatchKeySet ks;
  forEachTensor(value, [&](TensorImpl& t) { ks = ks | t.key_set(); });
  return ks;
}

} // namespace opdispatch::detail
