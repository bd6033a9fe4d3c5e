// TensorImpl construction, key sets and contiguity.
#include <opdispatch/core/TensorImpl.h>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

TensorImpl::TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, Device device,
                       std::vector<int64_t> sizes, std::vector<int64_t> strides,
                       int64_t storage_offset)
    : key_set_(backendKeyForDevice(device.type)),
      storage_(std::move(storage)),
      version_counter_(make_intrusive<VersionCounter>()),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      storage_offset_(storage_offset),
      dtype_(dtype),
      device_(device) {
  OPDISPATCH_CHECK_VALUE(sizes_.size() == strides_.size(), "a tensor needs one stride per dimension; got ",
                         sizes_.size(), " sizes and ", strides_.size(), " strides");
  OPDISPATCH_CHECK_VALUE(elementSize(dtype) != 0, "a tensor needs a defined dtype");
  OPDISPATCH_CHECK_VALUE(storage_offset >= 0, "storage_offset must be >= 0, got ", storage_offset);
  for (size_t i = 0; i < sizes_.size(); ++i) {
    OPDISPATCH_CHECK_VALUE(sizes_[i] >= 0, "tensor sizes must be >= 0, got ", sizes_[i],
                           " at dimension ", i);
    numel_ *= sizes_[i];
  }
  refreshContiguous();
}

TensorImpl::~TensorImpl() {
  if (owns_pyobj_ && pyobj_ != nullptr) {
    pyInterpreterHooks().decref(pyobj_);
  }
}

void* TensorImpl::data_ptr() const {
  OPDISPATCH_CHECK(storage_.defined(), "cannot access the data of a tensor on ", device_,
                   ": it has no storage (meta tensors, wrapper subclasses and fake tensors carry only metadata)");
  return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(itemsize());
}

void TensorImpl::set_requires_grad(bool requires_grad) {
  OPDISPATCH_CHECK(!requires_grad || isFloatingType(dtype_) || isComplexType(dtype_),
                   "only Tensors of floating point and complex dtype can require gradients, not opdispatch.",
                   toPythonName(dtype_));
  requires_grad_ = requires_grad;
  DispatchKey backend = backendKeyForDevice(device_.type);
  DispatchKeySet grad_keys = tensorKeySet(backend, true) - DispatchKeySet(backend);
  key_set_ = requires_grad ? key_set_ | grad_keys : key_set_ - grad_keys;
}

void TensorImpl::set_python_dispatch(bool enabled) {
  key_set_ = enabled ? key_set_ | python_ks : key_set_ - python_ks;
}

bool TensorImpl::sharesMemoryWith(const TensorImpl& other) const {
  if (this == &other || version_counter_ == other.version_counter_) {
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

void TensorImpl::refreshContiguous() {
  int64_t expected = 1;
  is_contiguous_ = true;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (sizes_[i] == 1) {
      continue;
    }
    if (strides_[i] != expected) {
      is_contiguous_ = numel_ == 0;
      return;
    }
    expected *= sizes_[i];
  }
}

std::vector<int64_t> contiguousStrides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    s *= sizes[i] > 1 ? sizes[i] : 1;
  }
  return strides;
}

} // namespace opdispatch
