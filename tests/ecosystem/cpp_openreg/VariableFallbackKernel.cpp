// Port of Ascend/pytorch torch_npu/csrc/aten/VariableFallbackKernel.cpp with
// the name map: a device plugin's AutogradPrivateUse1 fallthrough, which
// replaces opdispatch's default autograd fallback for the key (as PyTorch's
// is replaced): operators without an autograd kernel skip autograd on the
// device.
#include <opdispatch/library.h>

namespace {

// Register fallthrough for Autograd backends dispatch keys
// (Ascend) OPDISPATCH_LIBRARY_IMPL
OPDISPATCH_LIBRARY_IMPL(_, AutogradPrivateUse1, m) {
  m.fallback(opdispatch::CppFunction::makeFallthrough());
}

} // namespace
