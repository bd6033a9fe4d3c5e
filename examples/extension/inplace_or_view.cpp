// An ADInplaceOrView kernel for relu_: a kernel that redispatches. It is the
// layer where in-place and view bookkeeping happens in PyTorch; here it shows
// the pattern: take the call's key set first, do this layer's work, and call
// the backend kernel (CPU or Meta) with the keys below this one. The version
// counter of the mutated tensor needs no code: the dispatcher bumps it when
// the backend kernel returns (Note [Post-kernel effects]).
//
// Like every ADInplaceOrView kernel it only runs when the key is in the call's
// key set: for tensors that require grad (the autograd fallback redispatches
// to it), or inside an IncludeDispatchKeyGuard(DispatchKey::ADInplaceOrView).
// Plain tensors go straight to the backend kernel (docs/architecture.rst, "Dispatch keys").
#include "myext.h"

namespace myext {
namespace {

Tensor reluInplaceADInplaceOrView(opdispatch::DispatchKeySet ks, const Tensor& x) {
  // A typed handle: looked up once, valid for the life of the process.
  static const auto op =
      opdispatch::Dispatcher::singleton().findSchemaOrThrow(qualified("relu_"), "").typed<Tensor(const Tensor&)>();
  return op.redispatch(ks & opdispatch::after_ADInplaceOrView_keyset, x);
}

} // namespace
} // namespace myext

OPDISPATCH_LIBRARY_IMPL(OPDISPATCH_EXAMPLE_NS, ADInplaceOrView, m) {
  m.impl("relu_", OPDISPATCH_FN(myext::reluInplaceADInplaceOrView));
}
