// Schema inference from a C++ kernel's signature, and the comparison of an
// inferred schema with the declared one. PyTorch: infer_schema.h.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <opdispatch/core/ArrayRef.h>
#include <opdispatch/core/FunctionTraits.h>
#include <opdispatch/core/IValue.h>
#include <opdispatch/schema/FunctionSchema.h>

namespace opdispatch {
namespace detail {

/// The schema type of a (decayed) C++ kernel parameter or return type.
/// PyTorch: infer_schema.h, make_boxed_from_unboxed_functor.h (assert_is_valid_input_type).
template <class T>
struct cpp_type_to_schema_type {
  static constexpr bool kNarrowInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  static_assert(!kNarrowInt,
                "opdispatch: a kernel argument or return of schema type int is int64_t (not int, "
                "long, int32_t or another integer type)");
  static_assert(!std::is_same_v<T, float>, "opdispatch: a kernel argument or return of schema type float is double");
  static_assert(!std::is_same_v<T, const char*>,
                "opdispatch: a kernel argument or return of schema type str is std::string or std::string_view");
  static_assert(kNarrowInt || std::is_same_v<T, float> || std::is_same_v<T, const char*> || dependent_false<T>::value,
                "opdispatch: this C++ type cannot be a kernel argument or return; use Tensor (Tensor& for an "
                "argument the kernel writes to), int64_t, double, bool, std::string, std::string_view, Scalar, "
                "ScalarType, Device, IValue, std::optional<T>, std::vector<T> or ArrayRef<T> (IntArrayRef, "
                "TensorList) of these, or a std::tuple of them as the return");
};
#define OPDISPATCH_SCHEMA_TYPE(CppType, Kind)                   \
  template <>                                                   \
  struct cpp_type_to_schema_type<CppType> {                     \
    static TypePtr call() { return Type::get(TypeKind::Kind); } \
  };
OPDISPATCH_SCHEMA_TYPE(Tensor, Tensor)
OPDISPATCH_SCHEMA_TYPE(int64_t, Int)
OPDISPATCH_SCHEMA_TYPE(double, Float)
OPDISPATCH_SCHEMA_TYPE(bool, Bool)
OPDISPATCH_SCHEMA_TYPE(std::string, Str)
OPDISPATCH_SCHEMA_TYPE(std::string_view, Str)
OPDISPATCH_SCHEMA_TYPE(Scalar, Scalar)
OPDISPATCH_SCHEMA_TYPE(ScalarType, ScalarType)
OPDISPATCH_SCHEMA_TYPE(Device, Device)
OPDISPATCH_SCHEMA_TYPE(IValue, Any)
#undef OPDISPATCH_SCHEMA_TYPE
template <class T>
struct cpp_type_to_schema_type<std::optional<T>> {
  static TypePtr call() { return Type::optionalOf(cpp_type_to_schema_type<T>::call()); }
};
template <class T>
struct cpp_type_to_schema_type<std::vector<T>> {
  static TypePtr call() { return Type::listOf(cpp_type_to_schema_type<T>::call()); }
};
template <class T>
struct cpp_type_to_schema_type<ArrayRef<T>> {
  static TypePtr call() { return Type::listOf(cpp_type_to_schema_type<T>::call()); }
};

using TypeGetter = TypePtr (*)();

template <class T>
constexpr TypeGetter typeGetter() {
  return &cpp_type_to_schema_type<std::decay_t<T>>::call;
}

template <class Return>
struct return_type_getters {
  static constexpr std::array<TypeGetter, 1> value = {typeGetter<Return>()};
};
template <>
struct return_type_getters<void> {
  static constexpr std::array<TypeGetter, 0> value = {};
};
template <class... Ts>
struct return_type_getters<std::tuple<Ts...>> {
  static constexpr std::array<TypeGetter, sizeof...(Ts)> value = {typeGetter<Ts>()...};
};

/// Builds the unnamed schema `(T0 _0, T1 _1) -> R _0` (non-template, keeps headers light).
std::unique_ptr<FunctionSchema> makeInferredSchema(const TypeGetter* args, size_t num_args, const TypeGetter* returns,
                                                   size_t num_returns);

template <class FuncType>
struct infer_schema_impl;
template <class Return, class... Args>
struct infer_schema_impl<Return(Args...)> {
  static std::unique_ptr<FunctionSchema> call() {
    static constexpr std::array<TypeGetter, sizeof...(Args)> args = {typeGetter<Args>()...};
    const auto& rets = return_type_getters<std::decay_t<Return>>::value;
    return makeInferredSchema(args.data(), args.size(), rets.data(), rets.size());
  }
};

} // namespace detail

/// The schema of a kernel with C++ type `FuncType` (a function type, noexcept
/// or not; a leading DispatchKeySet parameter is ignored). Arguments and
/// returns are named _0, _1, ...; a std::tuple return gives several returns.
/// References are dropped: a `Tensor&` parameter is a `Tensor` argument, and
/// the declared schema's alias annotations (`Tensor(a!)`) are accepted for it
/// (findSchemaDifferences compares types only), as in PyTorch.
template <class FuncType>
std::unique_ptr<FunctionSchema> inferFunctionSchema() {
  using Plain = typename detail::infer_function_traits_t<FuncType>::func_type;
  return detail::infer_schema_impl<detail::remove_keyset_t<Plain>>::call();
}

/// Why `inferred` (from a C++ kernel) cannot serve `declared`, or nullopt if
/// it can: argument/return counts and types must match, with SymInt accepting
/// int and Layout/MemoryFormat accepting int. PyTorch: findSchemaDifferences.
std::optional<std::string> findSchemaDifferences(const FunctionSchema& declared, const FunctionSchema& inferred);

} // namespace opdispatch
