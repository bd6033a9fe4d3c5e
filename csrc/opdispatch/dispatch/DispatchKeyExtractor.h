// The dispatch key set of call arguments: the union of the key sets of every
// tensor among them (forEachTensor lists them), for typed values and IValues.
#pragma once

#include <cstdint>
#include <vector>

#include <opdispatch/Macros.h>
#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/IValue.h>
#include <opdispatch/dispatch/ArgumentTensors.h>

namespace opdispatch::detail {

/// The key set of the tensors `value` holds (forEachTensor).
template <class T>
DispatchKeySet keySetOf(const T& value) {
  DispatchKeySet ks;
  forEachTensor(value, [&](TensorImpl& t) { ks = ks | t.key_set(); });
  return ks;
}

/// The key set of the tensors held by the values of `values` at `indices`
/// that are not Tensors (lists). Out of line: see keySetOfIndexed.
DispatchKeySet keySetOfNonTensors(const IValue* values, const std::vector<uint32_t>& indices);

/// The key set of the tensors held by `values[i]` for each i in `indices`
/// (a boxed call's tensor-like arguments). Tensors are read inline; lists, if
/// any, after the loop and out of line: a call inside the loop (or a closure
/// over the accumulator reaching one) made the compiler keep the accumulator
/// in memory, a store-forwarding chain through every iteration.
inline DispatchKeySet keySetOfIndexed(const IValue* values, const std::vector<uint32_t>& indices) {
  DispatchKeySet ks;
  bool has_lists = false;
  for (uint32_t i : indices) {
    const IValue& v = values[i];
    if (OPDISPATCH_LIKELY(v.isTensor())) {
      if (const TensorImpl* t = v.unsafeToTensorImpl()) {
        ks = ks | t->key_set();
      }
    } else {
      has_lists = true;
    }
  }
  if (OPDISPATCH_UNLIKELY(has_lists)) {
    ks = ks | keySetOfNonTensors(values, indices);
  }
  return ks;
}

/// The key set of the tensors among `args`.
template <class... Args>
DispatchKeySet multiDispatchKeySet(const Args&... args) {
  return (DispatchKeySet() | ... | keySetOf(args));
}

} // namespace opdispatch::detail
