// AnnotatedKernel: a registered kernel with what is known about where it came
// from — the cold record an OperatorEntry or BackendFallbacks keeps per
// registration (calls read KernelRefs instead; Note [Hot dispatch table]).
#pragma once

#include <list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <opdispatch/core/DispatchKey.h>
#include <opdispatch/core/InternedString.h>
#include <opdispatch/dispatch/CppSignature.h>
#include <opdispatch/dispatch/KernelFunction.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {

struct AnnotatedKernel {
  AnnotatedKernel(KernelFunction k, std::optional<CppSignature> sig, std::unique_ptr<FunctionSchema> s,
                  InternedString d)
      : kernel(std::move(k)),
        cpp_signature(sig),
        inferred_function_schema(std::move(s)),
        debug(std::move(d)) {}
  KernelFunction kernel;
  /// The C++ signature of an unboxed kernel.
  std::optional<CppSignature> cpp_signature;
  /// The schema inferred from a typed C++ kernel, checked against the declared one.
  std::unique_ptr<FunctionSchema> inferred_function_schema;
  /// Where it was registered ("registered at file:line") or a debug name
  /// (one copy per text: Note [Interned debug strings]).
  InternedString debug;
  /// The key (runtime or alias) an OperatorEntry holds it at (Undefined for backend fallbacks).
  DispatchKey key = DispatchKey::Undefined;
};
/// Registered kernels, newest first (an OperatorEntry's: of all its keys; a fallback slot's: of one key); std::list so iterators and addresses stay valid.
using AnnotatedKernelContainer = std::list<AnnotatedKernel>;
using AnnotatedKernelContainerIterator = AnnotatedKernelContainer::iterator;

} // namespace opdispatch
