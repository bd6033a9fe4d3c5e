// The dispatch key set of typed (unboxed) call arguments: the union of the
// key sets of every Tensor, optional Tensor and Tensor list among them.
#pragma once

#include <optional>
#include <vector>

#include <opdispatch/core/ArrayRef.h>
#include <opdispatch/core/Tensor.h>

namespace opdispatch::detail {

struct MultiDispatchKeySet {
  DispatchKeySet ts;
  void operator()(const Tensor& x) { ts = ts | x.key_set(); }
  void operator()(const std::optional<Tensor>& x) {
    if (x) {
      ts = ts | x->key_set();
    }
  }
  void operator()(ArrayRef<Tensor> xs) {
    for (const auto& x : xs) {
      ts = ts | x.key_set();
    }
  }
  void operator()(const std::vector<Tensor>& xs) { (*this)(ArrayRef<Tensor>(xs)); }
  void operator()(const std::vector<std::optional<Tensor>>& xs) {
    for (const auto& x : xs) {
      (*this)(x);
    }
  }
  template <class T>
  void operator()(const T&) {}
};

template <class... Args>
inline DispatchKeySet multiDispatchKeySet(const Args&... args) {
  MultiDispatchKeySet v;
  (v(args), ...);
  return v.ts;
}

} // namespace opdispatch::detail
