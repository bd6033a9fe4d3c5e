// The templates that turn typed C++ kernels into boxed ones and back:
// IValue -> C++ argument conversion, C++ result -> IValue, the functor
// wrappers for functions and lambdas, and make_boxed_from_unboxed_functor.
// PyTorch: make_boxed_from_unboxed_functor.h, WrapFunctionIntoFunctor.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <opdispatch/core/IValue.h>
#include <opdispatch/core/Stack.h>
#include <opdispatch/dispatch/FunctionTraits.h>
#include <opdispatch/dispatch/OperatorKernel.h>
#include <opdispatch/schema/InferSchema.h>

namespace opdispatch {
class OperatorHandle;

namespace detail {

// --- IValue -> C++ -----------------------------------------------------------

/// ivalue_to_arg<T>::call(v): the value of C++ type T (decayed) held by `v`,
/// as a reference into `v` where possible. Throws TypeError on a mismatch.
template <class T>
struct ivalue_to_arg {
  static_assert(dependent_false<T>::value, "opdispatch: unsupported kernel argument type");
};
template <>
struct ivalue_to_arg<Tensor> {
  static const Tensor& call(const IValue& v) { return v.toTensor(); }
};
template <>
struct ivalue_to_arg<int64_t> {
  static int64_t call(const IValue& v) { return v.toInt(); }
};
template <>
struct ivalue_to_arg<double> {
  static double call(const IValue& v) { return v.toDouble(); }
};
template <>
struct ivalue_to_arg<bool> {
  static bool call(const IValue& v) { return v.toBool(); }
};
template <>
struct ivalue_to_arg<std::string> {
  static const std::string& call(const IValue& v) { return v.toStringRef(); }
};
template <>
struct ivalue_to_arg<std::string_view> {
  static std::string_view call(const IValue& v) { return v.toStringRef(); }
};
template <>
struct ivalue_to_arg<Scalar> {
  static Scalar call(const IValue& v) { return v.toScalar(); }
};
template <>
struct ivalue_to_arg<ScalarType> {
  static ScalarType call(const IValue& v) { return v.toScalarType(); }
};
template <>
struct ivalue_to_arg<Device> {
  static Device call(const IValue& v) { return v.toDevice(); }
};
template <>
struct ivalue_to_arg<IValue> {
  static const IValue& call(const IValue& v) { return v; }
};
template <>
struct ivalue_to_arg<std::vector<int64_t>> {
  static const std::vector<int64_t>& call(const IValue& v) { return v.toIntList(); }
};
template <>
struct ivalue_to_arg<ArrayRef<int64_t>> {
  static ArrayRef<int64_t> call(const IValue& v) { return v.toIntList(); }
};
template <>
struct ivalue_to_arg<std::vector<double>> {
  static const std::vector<double>& call(const IValue& v) { return v.toDoubleList(); }
};
template <>
struct ivalue_to_arg<ArrayRef<double>> {
  static ArrayRef<double> call(const IValue& v) { return v.toDoubleList(); }
};
template <>
struct ivalue_to_arg<std::vector<bool>> {
  static const std::vector<bool>& call(const IValue& v) { return v.toBoolList(); }
};
template <>
struct ivalue_to_arg<std::vector<Tensor>> {
  static const std::vector<Tensor>& call(const IValue& v) { return v.toTensorList(); }
};
template <>
struct ivalue_to_arg<ArrayRef<Tensor>> {
  static ArrayRef<Tensor> call(const IValue& v) { return v.toTensorList(); }
};
template <>
struct ivalue_to_arg<std::vector<std::optional<Tensor>>> {
  static const std::vector<std::optional<Tensor>>& call(const IValue& v) { return v.toOptionalTensorList(); }
};
template <>
struct ivalue_to_arg<std::vector<std::string>> {
  static std::vector<std::string> call(const IValue& v) {
    std::vector<std::string> out;
    for (const auto& e : v.toGenericList()) {
      out.push_back(e.toStringRef());
    }
    return out;
  }
};
template <class T>
struct ivalue_to_arg<std::optional<T>> {
  static std::optional<T> call(const IValue& v) {
    if (v.isNone()) {
      return std::nullopt;
    }
    return std::optional<T>(ivalue_to_arg<T>::call(v));
  }
};

/// An owned C++ value of type T from an IValue (for results of boxed calls).
template <class T>
std::decay_t<T> ivalueTo(const IValue& v) {
  return std::decay_t<T>(ivalue_to_arg<std::decay_t<T>>::call(v));
}

// --- C++ -> IValue -----------------------------------------------------------

/// Pushes a kernel's result(s) onto the stack: nothing for void, one IValue
/// per element for std::tuple, one IValue otherwise.
template <class Return>
struct push_outputs {
  static void call(Return&& out, Stack* stack) { stack->emplace_back(IValue(std::forward<Return>(out))); }
};
template <class... Ts>
struct push_outputs<std::tuple<Ts...>> {
  static void call(std::tuple<Ts...>&& out, Stack* stack) {
    std::apply([&](auto&&... elems) { (stack->emplace_back(IValue(std::move(elems))), ...); }, std::move(out));
  }
};

/// Reads a boxed call's results back into a C++ value of type Return.
template <class Return>
struct pop_return {
  static Return call(Stack& stack) { return ivalueTo<Return>(stack.at(0)); }
};
template <>
struct pop_return<void> {
  static void call(Stack&) {}
};
template <class... Ts>
struct pop_return<std::tuple<Ts...>> {
  static std::tuple<Ts...> call(Stack& stack) { return callImpl(stack, std::index_sequence_for<Ts...>()); }
  template <size_t... I>
  static std::tuple<Ts...> callImpl(Stack& stack, std::index_sequence<I...>) {
    return std::tuple<Ts...>(ivalueTo<Ts>(stack.at(I))...);
  }
};

// --- functor wrappers ----------------------------------------------------------

/// A kernel functor that calls a function known at compile time.
template <class FuncPtr, class Return, class ParamList>
struct WrapFunctionIntoFunctor_;
template <class FuncPtr, class Return, class... Params>
struct WrapFunctionIntoFunctor_<FuncPtr, Return, typelist<Params...>> final : OperatorKernel {
  Return operator()(Params... args) { return (*FuncPtr::func_ptr())(std::forward<Params>(args)...); }
};
template <class FuncPtr>
using WrapFunctionIntoFunctor = WrapFunctionIntoFunctor_<
    FuncPtr, typename infer_function_traits_t<typename FuncPtr::FuncPtrType>::return_type,
    typename infer_function_traits_t<typename FuncPtr::FuncPtrType>::parameter_types>;

/// A kernel functor holding a callable (function pointer or lambda) at run time.
template <class Callable, class Return, class ParamList>
struct WrapFunctionIntoRuntimeFunctor_;
template <class Callable, class Return, class... Params>
struct WrapFunctionIntoRuntimeFunctor_<Callable, Return, typelist<Params...>> final : OperatorKernel {
  explicit WrapFunctionIntoRuntimeFunctor_(Callable&& c) : callable_(std::move(c)) {}
  Return operator()(Params... args) { return callable_(std::forward<Params>(args)...); }
  Callable callable_;
};
template <class Callable>
using WrapFunctionIntoRuntimeFunctor =
    WrapFunctionIntoRuntimeFunctor_<Callable, typename infer_function_traits_t<Callable>::return_type,
                                    typename infer_function_traits_t<Callable>::parameter_types>;

// --- unboxed entry point ----------------------------------------------------------

/// The unboxed entry stored in a KernelFunction:
/// `Return call(OperatorKernel*, DispatchKeySet, Params...)` where Params are
/// the functor's parameters without a leading DispatchKeySet.
template <class KernelFunctor, class FuncType = typename infer_function_traits_t<KernelFunctor>::func_type,
          bool WithKeyset = takes_keyset<FuncType>::value>
struct wrap_kernel_functor_unboxed;
template <class KernelFunctor, class Return, class... Params>
struct wrap_kernel_functor_unboxed<KernelFunctor, Return(Params...), false> {
  static Return call(OperatorKernel* functor, DispatchKeySet, Params... args) {
    return (*static_cast<KernelFunctor*>(functor))(std::forward<Params>(args)...);
  }
};
template <class KernelFunctor, class Return, class Keyset, class... Params>
struct wrap_kernel_functor_unboxed<KernelFunctor, Return(Keyset, Params...), true> {
  static Return call(OperatorKernel* functor, DispatchKeySet ks, Params... args) {
    return (*static_cast<KernelFunctor*>(functor))(ks, std::forward<Params>(args)...);
  }
};

// --- boxed entry point ------------------------------------------------------------

/// The boxed entry made from a typed functor: reads the arguments from the
/// top of the stack, calls the functor, replaces the arguments by the results.
template <class KernelFunctor>
struct make_boxed_from_unboxed_functor {
  using FuncType = remove_keyset_t<typename infer_function_traits_t<KernelFunctor>::func_type>;
  using Traits = function_traits<FuncType>;
  using Return = typename Traits::return_type;
  static constexpr size_t kNumArgs = Traits::number_of_parameters;

  static void call(OperatorKernel* functor, const OperatorHandle&, DispatchKeySet ks, Stack* stack) {
    callImpl(functor, ks, stack, typename Traits::parameter_types(), std::make_index_sequence<kNumArgs>());
  }

 private:
  template <class... Params, size_t... I>
  static void callImpl(OperatorKernel* functor, DispatchKeySet ks, Stack* stack, typelist<Params...>,
                       std::index_sequence<I...>) {
    IValue* args = stack->data() + (stack->size() - kNumArgs);
    (void)args;
    if constexpr (std::is_void_v<Return>) {
      wrap_kernel_functor_unboxed<KernelFunctor>::call(functor, ks,
                                                       ivalue_to_arg<std::decay_t<Params>>::call(args[I])...);
      drop(*stack, kNumArgs);
    } else {
      std::decay_t<Return> out = wrap_kernel_functor_unboxed<KernelFunctor>::call(
          functor, ks, ivalue_to_arg<std::decay_t<Params>>::call(args[I])...);
      drop(*stack, kNumArgs);
      push_outputs<std::decay_t<Return>>::call(std::move(out), stack);
    }
  }
};

} // namespace detail
} // namespace opdispatch
