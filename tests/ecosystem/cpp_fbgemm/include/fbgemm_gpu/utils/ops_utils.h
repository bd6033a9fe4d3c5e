// Port of pytorch/FBGEMM, fbgemm_gpu/include/fbgemm_gpu/utils/ops_utils.h:
// FBGEMM's registration macros, as upstream with the name map (torch::/c10::
// -> opdispatch::, TORCH_ -> OPDISPATCH_).
#pragma once

#include <opdispatch/library.h>

////////////////////////////////////////////////////////////////////////////////
/// Op Dispatch Macros
////////////////////////////////////////////////////////////////////////////////

#define FBGEMM_OP_DISPATCH(DISPATCH_KEY, EXPORT_NAME, FUNC_NAME)               \
  OPDISPATCH_LIBRARY_IMPL(fbgemm, DISPATCH_KEY, m) {                           \
    m.impl(                                                                    \
        EXPORT_NAME,                                                           \
        opdispatch::dispatch(opdispatch::DispatchKey::DISPATCH_KEY, OPDISPATCH_FN(FUNC_NAME))); \
  }

#define DISPATCH_TO_CUDA(name, function) \
  m.impl(name, opdispatch::dispatch(opdispatch::DispatchKey::CUDA, OPDISPATCH_FN(function)))

#define DISPATCH_TO_CPU(name, function) \
  m.impl(name, opdispatch::dispatch(opdispatch::DispatchKey::CPU, OPDISPATCH_FN(function)))

#define DISPATCH_TO_QUANTIZED_CPU(name, function) \
  m.impl(                                         \
      name,                                       \
      opdispatch::dispatch(opdispatch::DispatchKey::QuantizedCPU, OPDISPATCH_FN(function)))

#define DISPATCH_TO_META(name, function) \
  m.impl(name, opdispatch::dispatch(opdispatch::DispatchKey::Meta, OPDISPATCH_FN(function)))

#define DISPATCH_TO_AUTOGRAD(name, function) \
  m.impl(name, opdispatch::dispatch(opdispatch::DispatchKey::Autograd, OPDISPATCH_FN(function)))

#define DISPATCH_TO_AUTOGRAD_CPU(name, function) \
  m.impl(                                        \
      name,                                      \
      opdispatch::dispatch(opdispatch::DispatchKey::AutogradCPU, OPDISPATCH_FN(function)))

#define DISPATCH_TO_AUTOGRAD_CUDA(name, function) \
  m.impl(                                         \
      name,                                       \
      opdispatch::dispatch(opdispatch::DispatchKey::AutogradCUDA, OPDISPATCH_FN(function)))
