// forEachTensor: the one way to list the tensors an argument or result holds,
// whatever its representation — a typed C++ value or an IValue here, a Python
// object in the bindings (which add a TensorsOf specialisation). Key-set
// extraction, version bumps and the output alias check all use it.
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include <opdispatch/core/ArrayRef.h>
#include <opdispatch/core/IValue.h>
#include <opdispatch/core/Tensor.h>

namespace opdispatch {

/// TensorsOf<T>::visit(value, f) calls f(TensorImpl&) for each defined
/// tensor held by `value` of type T: a Tensor, an optional Tensor, a list of
/// (optional) tensors, an IValue holding one of those (or a generic list with
/// tensors). Other types hold none. Specialise it for a new representation.
template <class T, class = void>
struct TensorsOf {
  template <class F>
  static void visit(const T&, F&&) {}
};

/// Calls f(TensorImpl&) for each defined tensor held by `value` (see TensorsOf).
template <class T, class F>
void forEachTensor(const T& value, F&& f) {
  TensorsOf<std::decay_t<T>>::visit(value, f);
}

template <>
struct TensorsOf<Tensor> {
  template <class F>
  static void visit(const Tensor& t, F&& f) {
    if (TensorImpl* impl = t.unsafeGetTensorImpl()) {
      f(*impl);
    }
  }
};
template <>
struct TensorsOf<std::optional<Tensor>> {
  template <class F>
  static void visit(const std::optional<Tensor>& t, F&& f) {
    if (t) {
      forEachTensor(*t, f);
    }
  }
};
template <class E>
struct TensorsOf<std::vector<E>,
                 std::enable_if_t<std::is_same_v<E, Tensor> || std::is_same_v<E, std::optional<Tensor>>>> {
  template <class F>
  static void visit(const std::vector<E>& ts, F&& f) {
    for (const auto& t : ts) {
      forEachTensor(t, f);
    }
  }
};
template <>
struct TensorsOf<ArrayRef<Tensor>> {
  template <class F>
  static void visit(ArrayRef<Tensor> ts, F&& f) {
    for (const auto& t : ts) {
      forEachTensor(t, f);
    }
  }
};
template <>
struct TensorsOf<IValue> {
  template <class F>
  static void visit(const IValue& v, F&& f) {
    if (OPDISPATCH_LIKELY(v.isTensor())) {
      if (TensorImpl* impl = v.unsafeToTensorImpl()) {
        f(*impl);
      }
    } else if (v.isTensorList()) {
      forEachTensor(v.toTensorList(), f);
    } else if (v.isOptionalTensorList()) {
      forEachTensor(v.toOptionalTensorList(), f);
    } else if (v.isGenericList()) {
      for (const IValue& e : v.toGenericList()) {
        if (e.isTensor()) {
          forEachTensor(e, f);
        }
      }
    }
  }
};

/// Calls f(index, TensorImpl&) for each tensor of each of `values`, `index`
/// being the value's position (the argument index of a typed call).
template <class F, class... Ts>
void forEachTensorIndexed(F&& f, const Ts&... values) {
  uint32_t index = 0;
  ((forEachTensor(values, [&](TensorImpl& t) { f(index, t); }), ++index), ...);
}

/// Calls f(return_index, TensorImpl&) for each tensor of a typed kernel's
/// result: each element of a std::tuple is one return, anything else is return 0.
template <class Return, class F>
void forEachResultTensor(const Return& result, F&& f) {
  forEachTensor(result, [&](TensorImpl& t) { f(size_t(0), t); });
}
template <class... Ts, class F>
void forEachResultTensor(const std::tuple<Ts...>& result, F&& f) {
  std::apply(
      [&](const auto&... elems) {
        forEachTensorIndexed([&](uint32_t i, TensorImpl& t) { f(size_t(i), t); }, elems...);
      },
      result);
}

} // namespace opdispatch
