// An ADInplaceOrView kernel for relu_: the layer that records in-place
// modifications. It redispatches to the backend kernel (CPU or Meta) with the
// keys below ADInplaceOrView, then bumps the tensor's version counter, as
// PyTorch's generated ADInplaceOrView kernels do.
//
// Like every ADInplaceOrView kernel it only runs when the key is in the call's
// key set: for tensors that require grad (the autograd fallback redispatches
// to it), or inside an IncludeDispatchKeyGuard(DispatchKey::ADInplaceOrView).
// Plain tensors go straight to the backend kernel (DESIGN.md, "Tensor").
#include "myext.h"

namespace myext {
namespace {

Tensor reluInplaceADInplaceOrView(opdispatch::DispatchKeySet ks, const Tensor& x) {
  // A typed handle: looked up once, valid for the life of the process.
  static const auto op = opdispatch::Dispatcher::singleton()
                             .findSchemaOrThrow(qualified("relu_"), "")
                             .typed<Tensor(const Tensor&)>();
  Tensor out = op.redispatch(ks & opdispatch::after_ADInplaceOrView_keyset, x);
  x.bump_version();
  return out;
}

} // namespace
} // namespace myext

OPDISPATCH_LIBRARY_IMPL(OPDISPATCH_EXAMPLE_NS, ADInplaceOrView, m) {
  m.impl("relu_", OPDISPATCH_FN(myext::reluInplaceADInplaceOrView));
}
