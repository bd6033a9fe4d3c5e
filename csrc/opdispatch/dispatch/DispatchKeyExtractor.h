// The dispatch key set of call arguments: the union of the key sets of every
// tensor among them (forEachTensor lists them), for typed values and IValues.
#pragma once

#include <cstdint>
#include <vector>

#include <opdispatch/Macros.h>
#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/IValue.h>
#include <opdispatch/dispatch/AnnotatedSchema.h>
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
/// (Tensors and lists). Out of line: see keySetOfIndexed.
DispatchKeySet keySetOfIndexedOutOfLine(const IValue* values, const std::vector<uint32_t>& indices);

/// The key set of the tensors held by `values[i]` for each tensor-like
/// position i of `schema` (a boxed call's arguments, `values` the first), the
/// positions read from `summary` (Note [Boxed call summary]), which is
/// `schema`'s or not valid(). Tensors are read inline; lists, None, and
/// positions that do not fit after the loop and out of line: a call inside
/// the loop (or a closure over the accumulator reaching one) made the
/// compiler keep the accumulator in memory, a store-forwarding chain through
/// every iteration.
inline DispatchKeySet keySetOfIndexed(const IValue* values, BoxedCallSummary summary, const AnnotatedSchema& schema) {
  DispatchKeySet ks;
  bool out_of_line = !summary.valid();
  uint64_t positions = summary.packedPositions();
  for (uint32_t k = summary.numPositions(); k > 0; --k, positions >>= 8) {
    const IValue& v = values[positions & 0xff];
    if (OPDISPATCH_LIKELY(v.isTensor())) {
      if (const TensorImpl* t = v.unsafeToTensorImpl()) {
        ks = ks | t->key_set();
      }
    } else {
      out_of_line = true;
    }
  }
  if (OPDISPATCH_UNLIKELY(out_of_line)) {
    ks = ks | keySetOfIndexedOutOfLine(values, schema.tensor_arg_indices);
  }
  return ks;
}

/// The key set of the tensors among `args`.
template <class... Args>
DispatchKeySet multiDispatchKeySet(const Args&... args) {
  return (DispatchKeySet() | ... | keySetOf(args));
}

} // namespace opdispatch::detail
