// CppSignature: the C++ function type of an unboxed kernel, so a typed call
// can check it matches the registered kernels. PyTorch: c10::impl::CppSignature.
#pragma once

#include <string>
#include <typeindex>

#include <opdispatch/core/FunctionTraits.h>

namespace opdispatch {

class CppSignature final {
 public:
  /// The signature of `FuncType` (function type, pointer, functor or lambda),
  /// leading DispatchKeySet removed.
  template <class FuncType>
  static CppSignature make() {
    using plain = detail::remove_keyset_t<typename detail::infer_function_traits_t<FuncType>::func_type>;
    return CppSignature(std::type_index(typeid(plain)));
  }
  /// Demangled function type, e.g. "opdispatch::Tensor (opdispatch::Tensor const&)".
  std::string name() const;
  bool operator==(const CppSignature& o) const { return signature_ == o.signature_; }
  bool operator!=(const CppSignature& o) const { return !(*this == o); }

 private:
  explicit CppSignature(std::type_index s) : signature_(s) {}
  std::type_index signature_;
};

} // namespace opdispatch
