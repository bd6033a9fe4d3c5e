// TensorImpl: a strided view of a Storage (none for `meta`) with a dtype, a
// device, its DispatchKeySet, a requires_grad bit, a version counter and the
// two slots the Python layer uses.
//
// Note [TensorImpl layout]
// A tensor subclass object (a wrapper subclass made per operator call) is a
// TensorImpl made and freed per call, so a TensorImpl is one allocation in
// the common case: its sizes and strides are stored inline up to
// kInlineDims dimensions (one heap array of both beyond), and its version
// counter is made only when first needed: by an in-place bump, or when a
// view or another tensor shares it. Until then the tensor's version is 0 and
// no other tensor shares its counter (sharesMemoryWith relies on this). The
// counter is published with a compare-exchange, so two threads making views
// of one tensor at once still share one counter.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include <opdispatch/core/ArrayRef.h>
#include <opdispatch/core/Device.h>
#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/core/PyInterpreter.h>
#include <opdispatch/core/ScalarType.h>
#include <opdispatch/core/Storage.h>
#include <opdispatch/core/intrusive_ptr.h>

namespace opdispatch {

/// Counts in-place modifications; shared by a tensor and its views.
struct VersionCounter final : intrusive_ptr_target {
  std::atomic<uint32_t> version{0};
};

// Note [Tensor key sets]
// A tensor's key set is its backend key; plus ADInplaceOrView and the
// backend's Autograd* key only while it requires grad, so a call on plain
// tensors skips autograd without visiting it (PyTorch keeps the autograd key
// always and checks inside); plus Python and PythonTLSSnapshot for a Python
// subclass that handles dispatch itself.
class TensorImpl final : public intrusive_ptr_target {
 public:
  /// `storage` is null for a tensor without data (always on `meta`; a
  /// wrapper subclass or fake tensor on any device). `strides` are in
  /// elements and must have as many entries as `sizes`. Checks the geometry
  /// (computeStorageNbytes; Note [Checked size arithmetic]): throws
  /// ValueError for a bad rank, size, stride, offset or dtype, Error for
  /// arithmetic that overflows int64, IndexError if the elements reach past
  /// the storage.
  TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, Device device, IntArrayRef sizes,
             IntArrayRef strides, int64_t storage_offset);
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;
  ~TensorImpl() override;

  DispatchKeySet key_set() const { return key_set_; }
  IntArrayRef sizes() const { return IntArrayRef(geometry(), dim_); }
  IntArrayRef strides() const { return IntArrayRef(geometry() + dim_, dim_); }
  int64_t dim() const { return static_cast<int64_t>(dim_); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }
  size_t itemsize() const { return elementSize(dtype_); }
  bool has_storage() const { return storage_.defined(); }
  const intrusive_ptr<StorageImpl>& storage() const { return storage_; }
  /// Uses `storage` (null: none) from now on, keeping the sizes, strides,
  /// offset and dtype. Throws IndexError if the elements reach past it (as
  /// the constructor does). PyTorch: TensorImpl::set_storage_keep_dtype.
  void set_storage_keep_dtype(intrusive_ptr<StorageImpl> storage);
  /// Gives the tensor `sizes` and `strides` (in elements, one per size),
  /// keeping its storage offset, and grows its storage (StorageImpl::grow)
  /// when the elements reach past it; a smaller tensor keeps the storage as
  /// it is. Throws as computeStorageNbytes does for a bad geometry, and what
  /// StorageImpl::grow throws (Error for a storage that is not resizable);
  /// the tensor's geometry is unchanged then (a grown storage stays grown). PyTorch: resize_impl_cpu_
  /// (aten/src/ATen/native/Resize.h).
  void resize(IntArrayRef sizes, IntArrayRef strides);
  /// Gives this tensor new sizes, strides (in elements, as many as sizes) and
  /// storage offset, keeping its storage, dtype and version counter: what an
  /// in-place view operator (transpose_, as_strided_, ...) does. Checks the
  /// geometry as the constructor does (ValueError, Error, IndexError) and
  /// leaves the tensor as it was when it throws. Not synchronised: as in
  /// PyTorch, no other thread may use the tensor meanwhile. PyTorch:
  /// TensorImpl::set_sizes_and_strides.
  void set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  /// Address of element 0. Throws on a tensor with no storage (meta, wrapper subclasses).
  void* data_ptr() const;
  bool is_contiguous() const { return is_contiguous_; }

  bool requires_grad() const { return requires_grad_; }
  /// Sets requires_grad and updates the key set (Note [Tensor key sets]).
  /// Throws Error (RuntimeError, as PyTorch) for a dtype that is not floating or complex.
  void set_requires_grad(bool requires_grad);
  /// Adds or removes the Python keys (a subclass that handles dispatch).
  void set_python_dispatch(bool enabled);

  uint32_t version() const {
    VersionCounter* vc = version_counter_.load(std::memory_order_acquire);
    return vc != nullptr ? vc->version.load(std::memory_order_relaxed) : 0;
  }
  void bump_version() { counter().version.fetch_add(1, std::memory_order_relaxed); }
  /// The counter, made now if this tensor has none yet (Note [TensorImpl layout]).
  intrusive_ptr<VersionCounter> version_counter() const;
  /// Shares `vc` (not null) from now on.
  void set_version_counter(intrusive_ptr<VersionCounter> vc);

  /// Whether writing through one tensor may change the other: the same
  /// TensorImpl, a shared version counter (a view, also of a meta tensor), or
  /// storages whose bytes overlap (e.g. two NumPy views of one buffer).
  /// Inline: the output alias check runs it per result and argument on every
  /// call of a custom op (Note [The output alias check in the call]).
  bool sharesMemoryWith(const TensorImpl& other) const {
    VersionCounter* vc = version_counter_.load(std::memory_order_acquire);
    if (this == &other || (vc != nullptr && vc == other.version_counter_.load(std::memory_order_acquire))) {
      return true;
    }
    if (!storage_.defined() || !other.storage_.defined()) {
      return false;
    }
    if (storage_ == other.storage_) {
      return true;
    }
    const char* a = static_cast<const char*>(storage_->data());
    const char* b = static_cast<const char*>(other.storage_->data());
    return storage_->nbytes() > 0 && other.storage_->nbytes() > 0 && a < b + other.storage_->nbytes() &&
           b < a + storage_->nbytes();
  }

  /// The Python object wrapping this tensor, or null: a borrowed pointer,
  /// read and written only with the GIL held, cleared when the wrapper dies.
  void* pyobj() const { return pyobj_; }
  void set_pyobj(void* obj) { pyobj_ = obj; }
  /// Whether this TensorImpl holds a strong reference to pyobj() (a tensor
  /// subclass object kept alive while only C++ holds the tensor; the object
  /// then borrows its TensorImpl). GIL held. See Note [Preserving tensor
  /// subclass objects] in csrc/python/PythonTensor.cpp.
  bool owns_pyobj() const { return owns_pyobj_; }
  void set_owns_pyobj(bool owns) { owns_pyobj_ = owns; }
  /// Autograd state owned by the Python layer (grad, grad_fn, ...).
  OwnedPyObject& autograd_meta() { return autograd_meta_; }

 protected:
  /// When the last C++ owner lets go of a TensorImpl that owns its Python
  /// object, the object takes the TensorImpl back (one reference) and is
  /// released: it usually dies and its deallocation deletes the TensorImpl,
  /// but a finalizer that keeps the object keeps it whole. See Note
  /// [Preserving tensor subclass objects] in csrc/python/PythonTensor.cpp.
  bool handOffLastReference() override;

 private:
  /// Dimensions whose sizes and strides are stored inline (Note [TensorImpl layout]).
  static constexpr size_t kInlineDims = 5;

  /// The sizes, then the strides.
  const int64_t* geometry() const { return dim_ <= kInlineDims ? inline_geometry_ : heap_geometry_; }
  VersionCounter& counter() const;
  void refreshContiguous();

  DispatchKeySet key_set_;
  intrusive_ptr<StorageImpl> storage_;
  /// Owned reference, or null until needed (Note [TensorImpl layout]).
  mutable std::atomic<VersionCounter*> version_counter_{nullptr};
  size_t dim_ = 0;
  union {
    int64_t inline_geometry_[2 * kInlineDims];
    int64_t* heap_geometry_;  // owned (new[]), while dim_ > kInlineDims
  };
  int64_t storage_offset_ = 0;
  int64_t numel_ = 1;
  ScalarType dtype_;
  Device device_;
  bool requires_grad_ = false;
  bool is_contiguous_ = true;
  void* pyobj_ = nullptr;
  bool owns_pyobj_ = false;
  OwnedPyObject autograd_meta_;
};

/// Row-major (C-order) strides, in elements, for `sizes` (a size of 0 or 1
/// counts as 1, as PyTorch). Throws Error if a stride does not fit int64.
std::vector<int64_t> contiguousStrides(IntArrayRef sizes);
/// The same, written to `strides` (room for sizes.size() values).
void contiguousStrides(IntArrayRef sizes, int64_t* strides);

/// The bytes of storage the elements of a tensor of this geometry reach,
/// (storage_offset + 1 + sum((size_i - 1) * stride_i)) * itemsize, or 0 if it
/// has no elements; `*numel` (if given) gets the number of elements. Throws
/// ValueError if ranks differ, for a negative size, stride or offset and an
/// undefined dtype; Error (RuntimeError, as PyTorch's "Storage size
/// calculation overflowed") if numel, a contiguous stride, the byte offset or
/// the byte extent does not fit int64. See Note [Checked size arithmetic].
/// PyTorch: at::detail::computeStorageNbytes.
int64_t computeStorageNbytes(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, ScalarType dtype,
                             int64_t* numel = nullptr);

} // namespace opdispatch
