// Compile-time facts about kernel functions: their return and parameter
// types (for function pointers, functors and lambdas), and the type list
// helpers the boxing templates use.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>

#include <opdispatch/core/DispatchKeySet.h>

namespace opdispatch::detail {

/// false, but only once T is known: for static_asserts in unsupported template cases.
template <class T>
struct dependent_false : std::false_type {};

template <class... Ts>
struct typelist {
  static constexpr size_t size = sizeof...(Ts);
};

/// function_traits<Return(Args...)>: return_type, parameter_types, number_of_parameters.
template <class FuncType>
struct function_traits;
template <class Return, class... Args>
struct function_traits<Return(Args...)> {
  using func_type = Return(Args...);
  using return_type = Return;
  using parameter_types = typelist<Args...>;
  static constexpr size_t number_of_parameters = sizeof...(Args);
};

/// Traits of a function pointer, a functor or a lambda.
template <class T, class = void>
struct infer_function_traits {
  using type = typename infer_function_traits<decltype(&T::operator())>::type;
};
template <class Return, class... Args>
struct infer_function_traits<Return(Args...)> {
  using type = function_traits<Return(Args...)>;
};
template <class Return, class... Args>
struct infer_function_traits<Return (*)(Args...)> {
  using type = function_traits<Return(Args...)>;
};
template <class Class, class Return, class... Args>
struct infer_function_traits<Return (Class::*)(Args...)> {
  using type = function_traits<Return(Args...)>;
};
template <class Class, class Return, class... Args>
struct infer_function_traits<Return (Class::*)(Args...) const> {
  using type = function_traits<Return(Args...)>;
};
// noexcept is part of a function's type (C++17); the traits drop it, so a
// noexcept kernel has the signature and schema of its plain twin.
template <class Return, class... Args>
struct infer_function_traits<Return(Args...) noexcept> {
  using type = function_traits<Return(Args...)>;
};
template <class Return, class... Args>
struct infer_function_traits<Return (*)(Args...) noexcept> {
  using type = function_traits<Return(Args...)>;
};
template <class Class, class Return, class... Args>
struct infer_function_traits<Return (Class::*)(Args...) noexcept> {
  using type = function_traits<Return(Args...)>;
};
template <class Class, class Return, class... Args>
struct infer_function_traits<Return (Class::*)(Args...) const noexcept> {
  using type = function_traits<Return(Args...)>;
};
template <class T>
using infer_function_traits_t = typename infer_function_traits<T>::type;

/// Whether a kernel's first parameter is the DispatchKeySet (so it can redispatch).
template <class FuncType>
struct takes_keyset : std::false_type {};
template <class Return, class First, class... Rest>
struct takes_keyset<Return(First, Rest...)> : std::is_same<DispatchKeySet, std::decay_t<First>> {};

/// The function type with a leading DispatchKeySet parameter removed: the
/// signature callers use and the one the schema is inferred from.
template <class FuncType, bool = takes_keyset<FuncType>::value>
struct remove_keyset {
  using type = FuncType;
};
template <class Return, class First, class... Rest>
struct remove_keyset<Return(First, Rest...), true> {
  using type = Return(Rest...);
};
template <class FuncType>
using remove_keyset_t = typename remove_keyset<FuncType>::type;

/// A function pointer known at compile time (OPDISPATCH_FN(f)), so calls to
/// it can be inlined into the kernel wrapper.
template <class FuncType, FuncType* kFuncPtr>
struct CompileTimeFunctionPointer {
  using FuncPtrType = FuncType*;
  static constexpr FuncType* func_ptr() { return kFuncPtr; }
};
template <class T>
struct is_compile_time_function_pointer : std::false_type {};
template <class FuncType, FuncType* func_ptr>
struct is_compile_time_function_pointer<CompileTimeFunctionPointer<FuncType, func_ptr>> : std::true_type {};

} // namespace opdispatch::detail

/// Wraps a function so the dispatcher knows its address at compile time:
/// `m.impl("foo", OPDISPATCH_FN(foo_cpu))`. PyTorch: TORCH_FN.
#define OPDISPATCH_FN(func)                                                                                         \
  (::opdispatch::detail::CompileTimeFunctionPointer<std::remove_pointer_t<std::remove_reference_t<decltype(func)>>, \
                                                    func>())
