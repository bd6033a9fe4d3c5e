// PostKernelEffects: what the dispatcher does when a kernel returns — bump
// the version counters of mutated arguments, check that a custom op's outputs
// alias nothing — written once for every call form (Note [One call path]).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <opdispatch/core/SmallVector.h>
#include <opdispatch/core/TensorImpl.h>
#include <opdispatch/core/intrusive_ptr.h>
#include <opdispatch/dispatch/AnnotatedSchema.h>
#include <opdispatch/dispatch/KernelRef.h>
#include <opdispatch/dispatch/LocalDispatchKeySet.h>

namespace opdispatch {

/// Throws the output alias check's Error: return `return_index` of the
/// kernel `functor` (null: "kernel") of `schema` shares memory with argument
/// `other`, or with return `other` if `other_is_return`.
[[noreturn]] void throwOutputAliasError(const FunctionSchema& schema, const OperatorKernel* functor,
                                        size_t return_index, bool other_is_return, size_t other, bool same_tensor);

// Note [Post-kernel effects]
// Two rules apply around a kernel, whichever way the call came (Python,
// typed or boxed C++, redispatch) and whatever the kernel is:
// 1. Version counters of mutated arguments. Autograd checks that a tensor
//    saved for backward was not modified in place since; every in-place
//    write must therefore bump the tensor's version counter. PyTorch does it
//    in the ADInplaceOrView kernels, which run for every tensor because
//    ADInplaceOrView is always in its key sets. Here that key is only on
//    tensors that require grad (Note [Tensor key sets]), so the dispatcher
//    does it instead: when a kernel chosen for the Python key or a backend
//    key (or Undefined) returns, the version counters of the tensors passed
//    to the arguments the schema marks as written to (`Tensor(a!)`) are
//    bumped, unless ADInplaceOrView is excluded on the thread (as PyTorch's
//    ADInplaceOrView kernel does not run then) or the operator registers a
//    fallthrough kernel at ADInplaceOrView: it has no ADInplaceOrView kernel
//    in PyTorch's terms. PyTorch generates ADInplaceOrView kernels for the
//    in-place and out= operators only, so an operator of another kind that
//    writes an argument (_native_batch_norm_legit its running statistics)
//    bumps nothing there; od's built-in library registers that fallthrough
//    for those (defop). That is below every autograd
//    kernel, as ADInplaceOrView is, so an autograd kernel saving a mutated
//    tensor sees its new version. The Python key's kernel (a mode's or a
//    subclass's __torch_dispatch__) runs with the keys above Python excluded,
//    ADInplaceOrView among them, so the calls it makes bump nothing and the
//    call it handles bumps once when it returns: a wrapper subclass's own
//    counter moves, its inner tensors' do not, as in PyTorch 2.13. Kernels
//    never bump versions themselves.
// 2. Output aliasing (KernelFunction::checkOutputAliasing; custom_op asks for
//    it): no tensor result may share memory with an argument or another
//    result ("shares memory" is TensorImpl::sharesMemoryWith: the same
//    tensor, a view of it — meta tensors included — or overlapping storage
//    bytes). PyTorch wraps every custom_op kernel in a Python function for it
//    (torch/_library/custom_ops.py); checking here keeps the user's function as
//    the registered kernel, so a call runs no extra Python frame.
// The effects apply only when the call succeeds: a kernel that raises, returns
// the wrong number or types of results (those errors are part of calling a
// Python kernel) or fails the alias check bumps nothing, as in PyTorch, where
// both live inside the kernel. The table entry says which rules apply
// (KernelRef::Effects, computed at registration), so a call of an operator
// without mutated arguments or checks pays one branch.
//
// The argument tensors are read again after the kernel from a frame whose
// arguments the kernel can neither free nor rebind (a Python call, a typed
// call by const reference): nothing is recorded then. A frame whose kernel
// pops or takes its arguments (boxed, by-value typed) records them first,
// with strong references, so that a tensor the kernel frees is neither
// confused with a new one at the same address nor has its version bumped
// after it was freed.
// Note [The output alias check in the call]
// The check runs in the call unit's out-of-line effects path, on every call
// of a custom op, so what it costs is paid per call. It stores nothing: the
// visit of a result compares it with the argument tensors (the frame lists
// them again) and, from the second result tensor on, with the earlier
// results (the frame lists its results again, a cold path: most custom ops
// return one tensor). That visit is inlined at each place the frame's result
// walk calls it (OPDISPATCH_ALWAYS_INLINE_LAMBDA; left to itself the
// compiler calls it out of line, a frame's walk having up to four call
// sites). A frame whose arguments outlive the kernel (a Python call, a typed
// call by const reference) records no arguments: kRecordsArguments is false,
// and it holds no vector of them to build and destroy.
/// The post-kernel effects of one call (Note [Post-kernel effects]).
/// `kRecordsArguments`: whether the frame's kernel may free its arguments,
/// so that they are recorded before it runs (recordArgument).
template <bool kRecordsArguments>
class PostKernelEffects final {
 public:
  /// For a call that runs `kernel` (which has effects) under definition
  /// `schema` (null if it was removed meanwhile: then the effects are nothing).
  PostKernelEffects(const AnnotatedSchema* schema, const KernelRef& kernel)
      : schema_(schema),
        functor_(kernel.functor()),
        bumps_versions_(schema != nullptr && kernel.bumpsVersions() && !schema->mutable_arg_indices.empty()),
        checks_aliasing_(schema != nullptr && kernel.checksOutputAliasing()) {}
  PostKernelEffects(const PostKernelEffects&) = delete;
  PostKernelEffects& operator=(const PostKernelEffects&) = delete;

  /// Records tensor `t` of argument `index` before the kernel runs, for a
  /// frame whose kernel may free its arguments (see the Note). Call it for
  /// every tensor of every argument; it keeps those a rule needs.
  void recordArgument(uint32_t index, TensorImpl& t) {
    static_assert(kRecordsArguments, "this frame's arguments outlive the kernel: nothing is recorded");
    if (checks_aliasing_ || (bumps_versions_ && isMutable(index))) {
      recorded_.push_back({index, intrusive_ptr<TensorImpl>(&t)});
    }
  }
  /// f(index, TensorImpl&) for each recorded argument tensor.
  template <class F>
  void forEachRecordedArgument(F&& f) const {
    static_assert(kRecordsArguments, "this frame's arguments outlive the kernel: nothing is recorded");
    for (const Argument& a : recorded_) {
      f(a.index, *a.tensor);
    }
  }
  /// Whether the results must be shown to checkResults.
  bool checksResults() const { return checks_aliasing_; }
  /// The output alias check, after the kernel returned: each tensor that
  /// `forEachResult(f)` lists (f(return index, TensorImpl&), results in
  /// order) against the argument tensors `forEachArgument(f)` lists
  /// (f(index, TensorImpl&)), then against the earlier tensors of the
  /// returns before the last (so the tensors of the last return, a list, are
  /// not compared with each other). Throws Error (RuntimeError) naming the
  /// operator, the kernel, the return and the first argument or return (in
  /// that order) it shares memory with. See Note [The output alias check in the call].
  template <class ForEachResult, class ForEachArgument>
  OPDISPATCH_ALWAYS_INLINE void checkResults(const ForEachResult& forEachResult,
                                             const ForEachArgument& forEachArgument) const {
    size_t position = 0;
    forEachResult([&](size_t return_index, const TensorImpl& t) OPDISPATCH_ALWAYS_INLINE_LAMBDA {
      forEachArgument([&](uint32_t index, const TensorImpl& a) {
        if (t.sharesMemoryWith(a)) {
          throwOutputAliases(return_index, false, index, &t == &a);
        }
      });
      if (OPDISPATCH_UNLIKELY(position != 0)) {
        checkEarlierResults(forEachResult, position, return_index, t);
      }
      ++position;
    });
  }
  /// The call succeeded: bumps the versions of the mutated argument tensors
  /// among those `forEachArgument(f)` lists.
  template <class ForEachArgument>
  OPDISPATCH_ALWAYS_INLINE void commit(const ForEachArgument& forEachArgument) {
    if (bumps_versions_ && !tls_local_dispatch_key_set().excluded_.has(DispatchKey::ADInplaceOrView)) {
      forEachArgument([&](uint32_t index, TensorImpl& t) {
        if (isMutable(index)) {
          t.bump_version();
        }
      });
    }
  }

 private:
  bool isMutable(uint32_t index) const {
    for (uint32_t m : schema_->mutable_arg_indices) {
      if (m == index) {
        return true;
      }
    }
    return false;
  }
  /// Compares result tensor `t` (of return `return_index`, the
  /// `position`-th tensor forEachResult lists) with the tensors listed
  /// before it whose return is not the last.
  template <class ForEachResult>
  OPDISPATCH_NOINLINE void checkEarlierResults(const ForEachResult& forEachResult, size_t position, size_t return_index,
                                               const TensorImpl& t) const {
    const size_t num_returns = schema_->num_returns;
    size_t earlier = 0;
    forEachResult([&](size_t earlier_return, const TensorImpl& u) {
      if (earlier++ < position && earlier_return + 1 < num_returns && t.sharesMemoryWith(u)) {
        throwOutputAliases(return_index, true, earlier_return, &t == &u);
      }
    });
  }
  [[noreturn]] void throwOutputAliases(size_t return_index, bool other_is_return, size_t other,
                                       bool same_tensor) const {
    throwOutputAliasError(schema_->schema, functor_, return_index, other_is_return, other, same_tensor);
  }

  const AnnotatedSchema* schema_;
  /// The kernel's functor (for the alias check's message), or null.
  OperatorKernel* functor_;
  bool bumps_versions_;
  bool checks_aliasing_;
  struct Argument {
    uint32_t index;
    intrusive_ptr<TensorImpl> tensor;
  };
  /// The arguments recordArgument kept (only a frame that records has them).
  struct NoArguments {};
  std::conditional_t<kRecordsArguments, SmallVector<Argument, 6>, NoArguments> recorded_;
};

} // namespace opdispatch
