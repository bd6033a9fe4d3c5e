// The dispatch key set of call arguments: the union of the key sets of every
// tensor among them (forEachTensor lists them), for typed values and IValues.
#pragma once

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

/// keySetOf for an IValue that is not a Tensor (lists). Out of line: see keySetOf<IValue>.
DispatchKeySet keySetOfNonTensor(const IValue& value);

/// A Tensor inline, anything else out of line: a closure over an accumulator
/// that reaches an out-of-line list walk keeps the accumulator in memory for
/// the whole argument loop of a boxed call.
template <>
inline DispatchKeySet keySetOf<IValue>(const IValue& value) {
  if (OPDISPATCH_LIKELY(value.isTensor())) {
    const TensorImpl* t = value.unsafeToTensorImpl();
    return t != nullptr ? t->key_set() : DispatchKeySet();
  }
  return keySetOfNonTensor(value);
}

/// The key set of the tensors among `args`.
template <class... Args>
DispatchKeySet multiDispatchKeySet(const Args&... args) {
  return (DispatchKeySet() | ... | keySetOf(args));
}

} // namespace opdispatch::detail
