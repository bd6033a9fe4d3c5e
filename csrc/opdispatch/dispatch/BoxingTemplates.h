// The templates that turn typed C++ kernels into boxed ones and back:
// IValue -> C++ argument conversion, C++ result -> IValue, the functor
// wrappers for functions and lambdas, make_boxed_from_unboxed_functor, and
// BoxedKernelWrapper (a typed call of a boxed kernel).
// PyTorch: make_boxed_from_unboxed_functor.h, WrapFunctionIntoFunctor.h,
// boxing.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <opdispatch/core/FunctionTraits.h>
#include <opdispatch/core/IValue.h>
#include <opdispatch/core/Stack.h>
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

// Note [Tensor& kernel parameters]
// A kernel writes to an argument its schema marks `Tensor(a!)` through a
// non-const `Tensor&` parameter (in-place and out= kernels). Called boxed, the
// parameter is bound to the Tensor held by the argument's IValue on the stack:
// that Tensor shares its TensorImpl with the caller's tensor, so writes to the
// data (and changes to sizes) are the caller's, as in PyTorch. Rebinding the
// parameter (`out = other`) changes only the stack's copy. Called typed, the
// parameter is the caller's Tensor itself. No other parameter may be a
// non-const reference: the kernel would write to a temporary.

/// The IValue tag(s) a boxed kernel's argument of C++ type T must have,
/// checked by the boxed entry before the kernel runs (Tensor, int, float,
/// bool: the common ones); Other: the conversion checks (ivalue_to_arg).
enum class BoxedArgKind : uint8_t { Tensor, Int, Double, Bool, Other };
template <class T>
constexpr BoxedArgKind boxedArgKind() {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    return BoxedArgKind::Tensor;
  } else if constexpr (std::is_same_v<D, int64_t>) {
    return BoxedArgKind::Int;
  } else if constexpr (std::is_same_v<D, double>) {
    return BoxedArgKind::Double;
  } else if constexpr (std::is_same_v<D, bool>) {
    return BoxedArgKind::Bool;
  } else {
    return BoxedArgKind::Other;
  }
}
/// Whether `v` can be read as an argument of kind K (a float argument takes an int).
template <BoxedArgKind K>
bool holdsBoxedArgKind(const IValue& v) {
  if constexpr (K == BoxedArgKind::Tensor) {
    return v.isTensor();
  } else if constexpr (K == BoxedArgKind::Int) {
    return v.isInt();
  } else if constexpr (K == BoxedArgKind::Double) {
    return v.isDouble() || v.isInt();
  } else if constexpr (K == BoxedArgKind::Bool) {
    return v.isBool();
  } else {
    return true;
  }
}
/// Throws TypeError: argument `index` of a boxed call of `op` holds `v`, not a `kind`.
[[noreturn]] void throwBoxedArgumentTypeError(const OperatorHandle& op, size_t index, const IValue& v,
                                              BoxedArgKind kind);

/// The argument for a kernel parameter of type Param, read from `v` (an
/// IValue on the stack, argument `index` of `op`, which outlives the kernel
/// call and is dropped after it: see Note [Boxed arguments are taken, not
/// copied]). Throws TypeError naming the operator and the argument if `v`
/// holds another type.
template <class Param>
decltype(auto) argFromStack(const OperatorHandle& op, size_t index, IValue& v) {
  static_assert(!std::is_lvalue_reference_v<Param> || std::is_const_v<std::remove_reference_t<Param>> ||
                    std::is_same_v<Param, Tensor&>,
                "opdispatch: a kernel parameter is a value or a const reference; only Tensor& (an argument the "
                "schema marks Tensor(a!)) may be a non-const reference");
  constexpr BoxedArgKind kind = boxedArgKind<Param>();
  if (OPDISPATCH_UNLIKELY(!holdsBoxedArgKind<kind>(v))) {
    throwBoxedArgumentTypeError(op, index, v, kind);
  }
  if constexpr (std::is_same_v<Param, Tensor&>) {
    // The IValue is not const (it is on the stack), so neither is its Tensor.
    return v.unsafeToTensorRef();
  } else if constexpr (std::is_same_v<Param, Tensor>) {
    return std::move(v.unsafeToTensorRef());
  } else if constexpr (kind == BoxedArgKind::Tensor) {
    return static_cast<const Tensor&>(v.unsafeToTensorRef());
  } else if constexpr (kind == BoxedArgKind::Int) {
    return v.unsafeToInt();
  } else if constexpr (kind == BoxedArgKind::Double) {
    return v.unsafeToDouble();
  } else if constexpr (kind == BoxedArgKind::Bool) {
    return v.unsafeToBool();
  } else {
    return ivalue_to_arg<std::decay_t<Param>>::call(v);
  }
}

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

template <class T>
struct is_tuple : std::false_type {};
template <class... Ts>
struct is_tuple<std::tuple<Ts...>> : std::true_type {};

/// What a kernel returning Return has returned, held by value: references
/// (`Tensor&`, `std::tuple<Tensor&, Tensor&>`) become copies of the Tensor
/// handles, so the result outlives the arguments it may refer to.
template <class Return>
struct owned_return {
  using type = std::decay_t<Return>;
};
template <class... Ts>
struct owned_return<std::tuple<Ts...>> {
  using type = std::tuple<std::decay_t<Ts>...>;
};
template <class Return>
using owned_return_t = typename owned_return<std::decay_t<Return>>::type;

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
using WrapFunctionIntoFunctor =
    WrapFunctionIntoFunctor_<FuncPtr, typename infer_function_traits_t<typename FuncPtr::FuncPtrType>::return_type,
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

// Note [Boxed arguments are taken, not copied]
// The boxed entry of a typed kernel drops its arguments from the stack once
// the kernel returns, so the stack's references are the kernel's to take:
// a by-value Tensor parameter is moved out of its IValue (which keeps its
// tag, holding an undefined tensor, until it is dropped), as PyTorch's
// make_boxed_from_unboxed_functor moves its IValues. A copy would add a
// reference count increment on the way in and a decrement on the way out
// (atomic read-modify-writes, the bulk of a boxed call's cost). The
// dispatcher reads no argument after a boxed kernel: the post-kernel effects
// record what they need before it (Note [Post-kernel effects]). A kernel that
// throws leaves the arguments on the stack, a moved-from one undefined.
//
// A single result takes the first argument's slot (its IValue is released
// first) and the other arguments are dropped: the stack never grows, so the
// result needs no capacity check, and the end of the stack is written once.

/// The boxed entry made from a typed functor: reads the arguments from the
/// top of the stack, calls the functor, replaces the arguments by the results.
template <class KernelFunctor>
struct make_boxed_from_unboxed_functor {
  using FuncType = remove_keyset_t<typename infer_function_traits_t<KernelFunctor>::func_type>;
  using Traits = function_traits<FuncType>;
  using Return = typename Traits::return_type;
  static constexpr size_t kNumArgs = Traits::number_of_parameters;

  static void call(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    callImpl(functor, op, ks, stack, typename Traits::parameter_types(), std::make_index_sequence<kNumArgs>());
  }

 private:
  template <class... Params, size_t... I>
  static void callImpl(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks, Stack* stack,
                       typelist<Params...>, std::index_sequence<I...>) {
    IValue* args = stack->data() + (stack->size() - kNumArgs);
    (void)args;
    (void)op;
    if constexpr (std::is_void_v<Return>) {
      wrap_kernel_functor_unboxed<KernelFunctor>::call(functor, ks, argFromStack<Params>(op, I, args[I])...);
      drop(*stack, kNumArgs);
    } else {
      // Copied out before the arguments are dropped: a Tensor& result refers to one of them.
      owned_return_t<Return> out = wrap_kernel_functor_unboxed<KernelFunctor>::call(
          functor, ks, argFromStack<Params>(op, I, args[I])...);
      if constexpr (kNumArgs > 0 && !is_tuple<owned_return_t<Return>>::value) {
        args[0] = IValue(std::move(out));
        drop(*stack, kNumArgs - 1);
      } else {
        drop(*stack, kNumArgs);
        push_outputs<owned_return_t<Return>>::call(std::move(out), stack);
      }
    }
  }
};

// --- typed call of a boxed kernel --------------------------------------------------

template <class T>
struct is_tuple_of_mutable_tensor_refs : std::false_type {};
template <class... Ts>
struct is_tuple_of_mutable_tensor_refs<std::tuple<Ts...>>
    : std::bool_constant<(sizeof...(Ts) > 0) && (std::is_same_v<Ts, Tensor&> && ...)> {};

/// Calls a boxed kernel with typed arguments: boxes them, calls, and unboxes
/// the results. A kernel returning `Tensor&` returns one of its arguments, so
/// that argument is the result, as in PyTorch (boxing.h, BoxedKernelWrapper):
/// the first one when it is a `Tensor&` (in-place ops, `add_(Tensor(a!) self,
/// ...) -> Tensor(a!)`), else the last one (out= ops, `add.out(..., *,
/// Tensor(a!) out) -> Tensor(a!)`); `std::tuple<Tensor&, ...>` of N is the last
/// N arguments. Other results are read from the stack.
template <class FuncType>
struct BoxedKernelWrapper;
template <class Return, class... Args>
struct BoxedKernelWrapper<Return(Args...)> {
  static constexpr size_t kNumArgs = sizeof...(Args);

  template <class Kernel>
  static Return call(const Kernel& kernel, const OperatorHandle& op, DispatchKeySet ks, Args... args) {
    Stack stack;
    stack.reserve(kNumArgs);
    push(stack, args...);
    kernel.callBoxed(op, ks, &stack);
    if constexpr (std::is_same_v<Return, Tensor&>) {
      static_assert(kNumArgs > 0, "a kernel returning Tensor& returns one of its Tensor& arguments");
      using First = std::tuple_element_t<0, std::tuple<Args...>>;
      using Last = std::tuple_element_t<kNumArgs - 1, std::tuple<Args...>>;
      static_assert(std::is_same_v<First, Tensor&> || std::is_same_v<Last, Tensor&>,
                    "a kernel returning Tensor& takes the tensor it returns as its first (in-place) or last "
                    "(out=) parameter, a Tensor&");
      auto refs = std::forward_as_tuple(args...);
      if constexpr (std::is_same_v<First, Tensor&>) {
        return std::get<0>(refs);
      } else {
        return std::get<kNumArgs - 1>(refs);
      }
    } else if constexpr (is_tuple_of_mutable_tensor_refs<Return>::value) {
      constexpr size_t kNumOuts = std::tuple_size_v<Return>;
      static_assert(kNumOuts <= kNumArgs, "a kernel returning std::tuple<Tensor&...> returns its last arguments");
      return lastArguments(std::forward_as_tuple(args...), std::make_index_sequence<kNumOuts>());
    } else {
      return pop_return<Return>::call(stack);
    }
  }

 private:
  template <class Refs, size_t... I>
  static Return lastArguments(Refs refs, std::index_sequence<I...>) {
    constexpr size_t first = kNumArgs - sizeof...(I);
    static_assert(((std::is_same_v<std::tuple_element_t<first + I, Refs>, Tensor&>) && ...),
                  "a kernel returning std::tuple<Tensor&...> takes those tensors as its last parameters, Tensor&");
    return Return(std::get<first + I>(refs)...);
  }
};

} // namespace detail
} // namespace opdispatch
