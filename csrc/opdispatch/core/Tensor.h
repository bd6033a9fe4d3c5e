// Tensor: the value type kernels take and return, a reference-counted handle
// to a TensorImpl (possibly undefined), plus the factory functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include <opdispatch/core/Scalar.h>
#include <opdispatch/core/TensorAccessor.h>
#include <opdispatch/core/TensorImpl.h>
#include <opdispatch/core/TensorOptions.h>

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
  /// dim(), by ATen's older name.
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl()->numel(); }
  /// Size of dimension `d` (negative counts from the end). Throws IndexError.
  int64_t size(int64_t d) const;
  /// Stride of dimension `d` (negative counts from the end). Throws IndexError.
  int64_t stride(int64_t d) const;
  ScalarType dtype() const { return impl()->dtype(); }
  ScalarType scalar_type() const { return impl()->dtype(); }
  Device device() const { return impl()->device(); }
  bool is_meta() const { return impl()->device().is_meta(); }
  bool is_cpu() const { return impl()->device().is_cpu(); }
  /// Always kStrided: opdispatch has strided tensors only.
  Layout layout() const {
    impl();  // an undefined tensor throws, as for every other property
    return kStrided;
  }
  /// This tensor's dtype, device, layout and requires_grad, for making others
  /// like it (`empty(sizes, x.options())`). PyTorch: TensorBase::options.
  TensorOptions options() const {
    return TensorOptions().dtype(dtype()).device(device()).layout(kStrided).requires_grad(requires_grad());
  }
  bool is_contiguous() const { return impl()->is_contiguous(); }
  int64_t storage_offset() const { return impl()->storage_offset(); }
  void* data_ptr() const { return impl()->data_ptr(); }
  /// Typed data pointer; throws TypeError unless sizeof(T) matches the dtype's size.
  template <class T>
  T* data_ptr() const {
    checkItemSize(sizeof(T));
    return static_cast<T*>(impl()->data_ptr());
  }
  /// The data for reading and for writing, by ATen's names (checked as data_ptr<T>()).
  template <class T>
  const T* const_data_ptr() const {
    return data_ptr<T>();
  }
  template <class T>
  T* mutable_data_ptr() const {
    return data_ptr<T>();
  }
  const void* const_data_ptr() const { return data_ptr(); }
  void* mutable_data_ptr() const { return data_ptr(); }
  /// Indexed access to the elements: `t.accessor<float, 2>()[i][j]`. Throws
  /// Error unless the tensor has N dimensions, and as data_ptr<T>() does.
  template <class T, size_t N>
  TensorAccessor<T, N> accessor() const {
    checkAccessorDim(N);
    return TensorAccessor<T, N>(data_ptr<T>(), sizes().data(), strides().data());
  }
  /// The value of a one-element tensor with memory, converted to T. Throws
  /// Error for another number of elements or a tensor without data (meta).
  /// (PyTorch reads it through the _local_scalar_dense operator; this reads the memory.)
  template <class T>
  T item() const {
    Scalar value = itemScalar();
    if constexpr (std::is_same_v<T, bool>) {
      return value.toBool();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(value.toLong());
    } else {
      return static_cast<T>(value.toDouble());
    }
  }
  /// The value of a one-element tensor as a Scalar (see item<T>()).
  Scalar item() const { return itemScalar(); }

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

  // --- ATen's computing methods ------------------------------------------------
  // Each is a call of a built-in `od` operator through the dispatcher (so
  // modes, autograd and Meta kernels apply), defined in
  // dispatch/TensorMethods.cpp. The `od` operators are registered by the
  // Python package: called before `import opdispatch` they throw Error saying so.

  /// This tensor if contiguous, else a contiguous copy (od::contiguous).
  Tensor contiguous() const;
  Tensor clone() const;
  /// This tensor in `dtype` (itself if it has it; od::to.dtype).
  Tensor to(ScalarType dtype) const;
  Tensor view(IntArrayRef size) const;
  Tensor reshape(IntArrayRef shape) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(IntArrayRef dims) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor select(int64_t dim, int64_t index) const;
  /// Elements start .. start+length-1 of dimension `dim`, a view (od::slice.Tensor).
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  /// The entries of dimension `dim` at the positions in the 1-D int32/int64 `index`, a copy (od::index_select).
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor sum() const;
  Tensor sum(IntArrayRef dim, bool keepdim = false) const;
  Tensor neg() const;
  Tensor mm(const Tensor& mat2) const;
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor mul(const Tensor& other) const;
  Tensor div(const Tensor& other) const;
  /// Division rounded as `rounding_mode` says: "trunc", "floor", or none (true
  /// division). Throws Error for another mode (od::div.Tensor_mode / Scalar_mode).
  Tensor div(const Tensor& other, std::optional<std::string_view> rounding_mode) const;
  Tensor div(const Scalar& other, std::optional<std::string_view> rounding_mode) const;
  /// div(other), by ATen's other name.
  Tensor true_divide(const Tensor& other) const { return div(other); }
  /// The largest (smallest) entry of each slice along `dim` and its index, as
  /// (values, indices); the first index among equal entries (od::max.dim / min.dim).
  std::tuple<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;
  std::tuple<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  /// The index of the largest entry along `dim`, or in the flattened tensor
  /// when `dim` is none, as int64 (od::argmax).
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  /// Running sums / products along `dim`; integral and bool inputs give int64
  /// unless `dtype` is given (od::cumsum / od::cumprod).
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  /// to(dtype), by ATen's older name.
  Tensor toType(ScalarType dtype) const { return to(dtype); }
  /// select(0, index): entry `index` (negative counts from the end) of the
  /// first dimension, a view. PyTorch: Tensor::operator[](int64_t).
  Tensor operator[](int64_t index) const { return select(0, index); }
  /// Each element raised to `exponent`, with PyTorch's type promotion
  /// (od::pow.Tensor_Scalar / od::pow.Tensor_Tensor). PyTorch: Tensor::pow.
  Tensor pow(const Scalar& exponent) const;
  Tensor pow(const Tensor& exponent) const;
  /// pow in place; throws Error when the result's dtype cannot be written to
  /// this tensor's (an integral tensor, a float exponent) (od::pow_.Scalar /
  /// od::pow_.Tensor). PyTorch: Tensor::pow_.
  const Tensor& pow_(const Scalar& exponent) const;
  const Tensor& pow_(const Tensor& exponent) const;
  /// The smallest integral value >= each element; integral tensors are
  /// returned as they are (od::ceil). PyTorch: Tensor::ceil.
  Tensor ceil() const;
  /// The elementwise minimum (maximum) of this tensor and `other`, broadcast
  /// and promoted (od::min.other / od::max.other). PyTorch: Tensor::min(other), Tensor::max(other).
  Tensor min(const Tensor& other) const;
  Tensor max(const Tensor& other) const;
  const Tensor& fill_(const Scalar& value) const;
  const Tensor& zero_() const;
  const Tensor& copy_(const Tensor& src, bool non_blocking = false) const;
  const Tensor& add_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& sub_(const Tensor& other, const Scalar& alpha = 1) const;
  const Tensor& mul_(const Tensor& other) const;
  const Tensor& div_(const Tensor& other) const;
  const Tensor& operator+=(const Tensor& other) const { return add_(other); }
  const Tensor& operator-=(const Tensor& other) const { return sub_(other); }
  const Tensor& operator*=(const Tensor& other) const { return mul_(other); }
  const Tensor& operator/=(const Tensor& other) const { return div_(other); }
  const Tensor& operator+=(const Scalar& other) const;
  const Tensor& operator-=(const Scalar& other) const;
  const Tensor& operator*=(const Scalar& other) const;
  const Tensor& operator/=(const Scalar& other) const;

 private:
  TensorImpl* impl() const;
  void checkItemSize(size_t n) const;
  void checkAccessorDim(size_t n) const;
  Scalar itemScalar() const;
  intrusive_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

/// ATen's `c10::optional` is `std::optional`; kernels ported with the name map spell it opdispatch::optional.
using std::nullopt;
using std::optional;

// Arithmetic operators, as ATen's: od::add/sub/mul/div (Tensor and Scalar
// overloads) and od::neg through the dispatcher (dispatch/TensorMethods.cpp).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a);

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
/// A contiguous tensor of `sizes` over memory the caller owns and keeps
/// alive for as long as the tensor (no copy, nothing freed), of `options`'
/// dtype (float32 unless set); requires_grad if `options` asks. Throws Error
/// for a device other than cpu, and as empty() for sizes it refuses.
/// PyTorch: at::from_blob(void* data, IntArrayRef sizes, const TensorOptions& options).
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});

} // namespace opdispatch
