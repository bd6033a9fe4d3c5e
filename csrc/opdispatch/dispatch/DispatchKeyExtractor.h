// The dispatch key set of typed (unboxed) call arguments: the union of the
// key sets of every tensor among them (forEachTensor lists them).
#pragma once

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/dispatch/ArgumentTensors.h>

namespace opdispatch::detail {

template <class... Args>
DispatchKeySet multiDispatchKeySet(const Args&... args) {
  DispatchKeySet ks;
  auto add = [&](TensorImpl& t) { ks = ks | t.key_set(); };
  (forEachTensor(args, add), ...);
  return ks;
}

} // namespace opdispatch::detail
