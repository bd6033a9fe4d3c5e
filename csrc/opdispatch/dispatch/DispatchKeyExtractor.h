// The dispatch key set of typed (unboxed) call arguments: the union of the
// key sets of every Tensor, optional Tensor and Tensor list among them.
#pragma once

#include <exception>
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

/// The tensors a typed call passes to the arguments its schema marks as
/// written to; bumps their version counters when destroyed, unless by an
/// exception (the kernel failed). See Note [Version counters of mutated arguments].
class MutatedTensors {
 public:
  template <class... Args>
  MutatedTensors(const std::vector<uint32_t>* mutable_indices, const Args&... args) {
    if (mutable_indices == nullptr) {
      return;
    }
    uint32_t i = 0;
    (collect(*mutable_indices, i++, args), ...);
  }
  MutatedTensors(const MutatedTensors&) = delete;
  MutatedTensors& operator=(const MutatedTensors&) = delete;
  ~MutatedTensors() {
    if (std::uncaught_exceptions() > exceptions_) {
      return;
    }
    for (TensorImpl* t : tensors_) {
      t->bump_version();
    }
  }

 private:
  static bool isMutable(const std::vector<uint32_t>& indices, uint32_t i) {
    for (uint32_t m : indices) {
      if (m == i) {
        return true;
      }
    }
    return false;
  }
  void add(const Tensor& t) {
    if (t.defined()) {
      tensors_.push_back(t.unsafeGetTensorImpl());
    }
  }
  void collect(const std::vector<uint32_t>& indices, uint32_t i, const Tensor& t) {
    if (isMutable(indices, i)) {
      add(t);
    }
  }
  void collect(const std::vector<uint32_t>& indices, uint32_t i, const std::optional<Tensor>& t) {
    if (t && isMutable(indices, i)) {
      add(*t);
    }
  }
  void collect(const std::vector<uint32_t>& indices, uint32_t i, ArrayRef<Tensor> ts) {
    if (isMutable(indices, i)) {
      for (const auto& t : ts) {
        add(t);
      }
    }
  }
  void collect(const std::vector<uint32_t>& indices, uint32_t i, const std::vector<Tensor>& ts) {
    collect(indices, i, ArrayRef<Tensor>(ts));
  }
  template <class T>
  void collect(const std::vector<uint32_t>&, uint32_t, const T&) {}

  std::vector<TensorImpl*> tensors_;
  int exceptions_ = std::uncaught_exceptions();
};

} // namespace opdispatch::detail
