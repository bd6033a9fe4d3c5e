// KernelFunction: one registered kernel — a boxed entry point, optionally an
// unboxed (typed) one, and the functor state both use (owned). Also the
// fallthrough marker and the "ambiguous autogradother" kernel. Calls go
// through its KernelRef (the dispatch table holds those).
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/FunctionTraits.h>
#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/BoxingTemplates.h>
#include <opdispatch/dispatch/KernelRef.h>
#include <opdispatch/dispatch/OperatorKernel.h>

namespace opdispatch {

class OperatorHandle;

class KernelFunction final {
 public:
  /// The boxed calling convention: arguments on top of the stack, replaced by the results.
  using BoxedKernelFunction = KernelRef::BoxedKernelFunction;
  /// A plain boxed function, as users write them.
  using BoxedFunction = void(const OperatorHandle& op, Stack* stack);
  using BoxedFunctionWithKeyset = void(const OperatorHandle& op, DispatchKeySet ks, Stack* stack);

  /// An invalid (empty) kernel.
  KernelFunction() = default;

  bool isValid() const { return boxed_kernel_func_ != nullptr; }
  /// Whether this is the "skip this key" marker (see makeFallthrough).
  bool isFallthrough() const { return ref().isFallthrough(); }
  bool hasUnboxedKernel() const { return unboxed_kernel_func_ != nullptr; }
  /// Whether `k` is a kernel made by makeFromBoxedFunctor<KernelFunctor> (in
  /// the same shared library as the caller).
  template <class KernelFunctor>
  static bool isBoxedFunctor(const KernelRef& k) {
    return k.boxedFunction() == &boxedFunctor<KernelFunctor>;
  }
  OperatorKernel* functor() const { return functor_.get(); }

  /// The entry points and functor, with `effects` (KernelRef::Effects) for the dispatcher.
  KernelRef ref(uint32_t effects = KernelRef::kNoEffects) const {
    return KernelRef(functor_.get(), boxed_kernel_func_, unboxed_kernel_func_, effects);
  }
  /// Calls with arguments on `stack` (no dispatch: this kernel, whatever `ks` says).
  void callBoxed(const OperatorHandle& op, DispatchKeySet ks, Stack* stack) const { ref().callBoxed(op, ks, stack); }

  /// Whether the dispatcher checks that this kernel's tensor results share
  /// memory with no argument and no other result (Note [Post-kernel effects]).
  bool checksOutputAliasing() const { return checks_output_aliasing_; }
  /// Asks for that check on every call (opdispatch.library.custom_op's kernels do).
  KernelFunction&& checkOutputAliasing() && {
    checks_output_aliasing_ = true;
    return std::move(*this);
  }

  // --- construction -------------------------------------------------------------

  template <BoxedFunction* func>
  static KernelFunction makeFromBoxedFunction() {
    return KernelFunction(nullptr, &boxedWithoutKeyset<func>, nullptr);
  }
  template <BoxedFunctionWithKeyset* func>
  static KernelFunction makeFromBoxedFunctionWithKeyset() {
    return KernelFunction(nullptr, &boxedWithKeyset<func>, nullptr);
  }
  /// `f` has `void operator()(const OperatorHandle&, DispatchKeySet, Stack*)`.
  template <class KernelFunctor>
  static KernelFunction makeFromBoxedFunctor(std::unique_ptr<KernelFunctor> f) {
    static_assert(std::is_base_of_v<OperatorKernel, KernelFunctor>, "a boxed functor derives from OperatorKernel");
    return KernelFunction(intrusive_ptr<OperatorKernel>(f.release()), &boxedFunctor<KernelFunctor>, nullptr);
  }
  /// The marker meaning "skip this key and use the next one" (PyTorch: makeFallthrough).
  static KernelFunction makeFallthrough();
  /// The kernel that raises when AutogradOther would pick a
  /// CompositeImplicitAutograd kernel although one of its backends has a kernel.
  static KernelFunction makeAmbiguousAutogradOther();

  /// A typed functor deriving from OperatorKernel.
  template <class KernelFunctor>
  static KernelFunction makeFromUnboxedFunctor(std::unique_ptr<KernelFunctor> f) {
    static_assert(std::is_base_of_v<OperatorKernel, KernelFunctor>, "a typed functor derives from OperatorKernel");
    return KernelFunction(intrusive_ptr<OperatorKernel>(f.release()),
                          &detail::make_boxed_from_unboxed_functor<KernelFunctor>::call,
                          reinterpret_cast<void*>(&detail::wrap_kernel_functor_unboxed<KernelFunctor>::call));
  }
  /// A function known at compile time: makeFromUnboxedFunction(OPDISPATCH_FN(f)).
  template <class FuncPtr>
  static KernelFunction makeFromUnboxedFunction(FuncPtr) {
    return makeFromUnboxedFunctor(std::make_unique<detail::WrapFunctionIntoFunctor<FuncPtr>>());
  }
  /// A function pointer known at run time.
  template <class FuncType>
  static KernelFunction makeFromUnboxedRuntimeFunction(FuncType* func) {
    return makeFromUnboxedFunctor(std::make_unique<detail::WrapFunctionIntoRuntimeFunctor<FuncType*>>(std::move(func)));
  }
  /// A lambda or other callable object (it may hold state).
  template <class Lambda>
  static KernelFunction makeFromUnboxedLambda(Lambda&& lambda) {
    using L = std::decay_t<Lambda>;
    return makeFromUnboxedFunctor(
        std::make_unique<detail::WrapFunctionIntoRuntimeFunctor<L>>(L(std::forward<Lambda>(lambda))));
  }

  /// "boxed unboxed " / "fallthrough " for dumpState.
  std::string dumpState() const;

 private:
  KernelFunction(intrusive_ptr<OperatorKernel> functor, BoxedKernelFunction* boxed, void* unboxed)
      : functor_(std::move(functor)),
        boxed_kernel_func_(boxed),
        unboxed_kernel_func_(unboxed) {}

  template <BoxedFunction* func>
  static void boxedWithoutKeyset(OperatorKernel*, const OperatorHandle& op, DispatchKeySet, Stack* stack) {
    func(op, stack);
  }
  template <BoxedFunctionWithKeyset* func>
  static void boxedWithKeyset(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    func(op, ks, stack);
  }
  template <class KernelFunctor>
  static void boxedFunctor(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    (*static_cast<KernelFunctor*>(functor))(op, ks, stack);
  }

  intrusive_ptr<OperatorKernel> functor_;
  BoxedKernelFunction* boxed_kernel_func_ = nullptr;
  void* unboxed_kernel_func_ = nullptr;
  bool checks_output_aliasing_ = false;
};

} // namespace opdispatch
