// Tensor: the value type kernels take and return, a reference-counted handle
// to a TensorImpl (possibly undefined), plus the factory functions.
#pragma once

#include <string>

#include <opdispatch/core/TensorImpl.h>

namespace opdispatch {

class Tensor {
 public:
  /// An undefined tensor (no TensorImpl).
  Tensor() = default;
  explicit Tensor(intrusive_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_.defined(); }
  TensorImpl* unsafeGetTensorImpl() const { return impl_.get(); }
  const intrusive_ptr<TensorImpl>& getIntrusivePtr() const { return impl_; }
  /// Gives up the reference; pair with Tensor::reclaim.
  TensorImpl* unsafeReleaseTensorImpl() { return impl_.release(); }
  static Tensor reclaim(TensorImpl* impl) { return Tensor(intrusive_ptr<TensorImpl>::reclaim(impl)); }

  /// The key set used for dispatch; empty for an undefined tensor.
  DispatchKeySet key_set() const { return impl_ ? impl_->key_set() : DispatchKeySet(); }
  IntArrayRef sizes() const { return impl()->sizes(); }
  IntArrayRef strides() const { return impl()->strides(); }
  int64_t dim() const { return impl()->dim(); }
  int64_t numel() const { return impl()->numel(); }
  /// Size of dimension `d` (negative counts from the end). Throws IndexError.
  int64_t size(int64_t d) const;
  /// Stride of dimension `d` (negative counts from the end). Throws IndexError.
  int64_t stride(int64_t d) const;
  ScalarType dtype() const { return impl()->dtype(); }
  ScalarType scalar_type() const { return impl()->dtype(); }
  Device device() const { return impl()->device(); }
  bool is_meta() const { return impl()->device().is_meta(); }
  bool is_contiguous() const { return impl()->is_contiguous(); }
  int64_t storage_offset() const { return impl()->storage_offset(); }
  void* data_ptr() const { return impl()->data_ptr(); }
  /// Typed data pointer; throws TypeError unless sizeof(T) matches the dtype's size.
  template <class T>
  T* data_ptr() const {
    checkItemSize(sizeof(T));
    return static_cast<T*>(impl()->data_ptr());
  }

  bool requires_grad() const { return impl()->requires_grad(); }
  /// Throws Error for a dtype that cannot require grad.
  const Tensor& set_requires_grad(bool r) const {
    impl()->set_requires_grad(r);
    return *this;
  }
  uint32_t _version() const { return impl()->version(); }
  void bump_version() const { impl()->bump_version(); }

  /// Whether both handles name the same TensorImpl.
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }
  size_t use_count() const { return impl_.use_count(); }

  /// A view of this tensor's storage with new geometry; shares the storage
  /// and the version counter. Throws IndexError if the view reaches past
  /// the storage, ValueError/Error for a geometry TensorImpl refuses.
  Tensor as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const;

  /// "Tensor(sizes=[2, 3], dtype=float32, device=cpu)", or "Tensor(undefined)".
  std::string toString() const;

 private:
  TensorImpl* impl() const;
  void checkItemSize(size_t n) const;
  intrusive_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// The C++ type of a `Tensor[]` argument a kernel only reads. PyTorch: at::TensorList.
using TensorList = ArrayRef<Tensor>;

/// A new tensor with uninitialised memory (no memory on `meta`), C-order strides.
/// Throws ValueError for negative sizes, Error (RuntimeError) if its size
/// arithmetic overflows int64 (Note [Checked size arithmetic]) and
/// std::bad_alloc (MemoryError) if the memory cannot be allocated.
Tensor empty(IntArrayRef sizes, ScalarType dtype = ScalarType::Float, Device device = Device());
/// A new tensor with the given strides (in elements), uninitialised. Throws as empty().
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype = ScalarType::Float,
                     Device device = Device());
/// A tensor over memory the caller owns; `deleter(ctx, data)` runs when the
/// last tensor using it dies (may be null), or before from_blob throws for a
/// geometry it refuses (as empty_strided does).
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                 StorageImpl::Deleter deleter = nullptr, void* ctx = nullptr);

} // namespace opdispatch
