// TensorImpl construction (with the checks of its geometry), key sets and contiguity.
#include <opdispatch/core/TensorImpl.h>

#include <algorithm>
#include <sstream>

#include <opdispatch/core/CheckedArithmetic.h>
#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
/// "[2, 3]", for messages.
std::string listString(IntArrayRef v) {
  std::ostringstream ss;
  ss << "[";
  for (size_t i = 0; i < v.size(); ++i) {
    ss << (i ? ", " : "") << v[i];
  }
  ss << "]";
  return ss.str();
}
} // namespace

TensorImpl::TensorImpl(intrusive_ptr<StorageImpl> storage, ScalarType dtype, Device device, IntArrayRef sizes,
                       IntArrayRef strides, int64_t storage_offset)
    : key_set_(backendKeyForDevice(device.type())),
      storage_(std::move(storage)),
      storage_offset_(storage_offset),
      dtype_(dtype),
      device_(device) {
  int64_t nbytes = computeStorageNbytes(sizes, strides, storage_offset_, dtype_, &numel_);
  OPDISPATCH_CHECK_INDEX(!storage_.defined() || static_cast<uint64_t>(nbytes) <= storage_->nbytes(),
                         "a tensor with sizes ", listString(sizes), ", strides ", listString(strides),
                         " and storage_offset ", storage_offset_, " (dtype ", toPythonName(dtype_), ") reaches byte ",
                         nbytes, " of its storage, which has ", storage_->nbytes(), " bytes");
  // The ranks are equal (computeStorageNbytes checked them).
  int64_t* geometry = inline_geometry_;
  if (sizes.size() > kInlineDims) {
    geometry = new int64_t[2 * sizes.size()];
    heap_geometry_ = geometry;
  }
  std::copy(sizes.begin(), sizes.end(), geometry);
  std::copy(strides.begin(), strides.end(), geometry + sizes.size());
  dim_ = sizes.size();
  refreshContiguous();
}

void TensorImpl::set_storage_keep_dtype(intrusive_ptr<StorageImpl> storage) {
  if (storage.defined()) {
    int64_t nbytes = computeStorageNbytes(sizes(), strides(), storage_offset_, dtype_);
    OPDISPATCH_CHECK_INDEX(static_cast<uint64_t>(nbytes) <= storage->nbytes(), "a tensor with sizes ",
                           listString(sizes()), ", strides ", listString(strides()), " and storage_offset ",
                           storage_offset_, " (dtype ", toPythonName(dtype_), ") reaches byte ", nbytes,
                           " of the new storage, which has ", storage->nbytes(), " bytes");
  }
  storage_ = std::move(storage);
}

void TensorImpl::resize(IntArrayRef sizes, IntArrayRef strides) {
  int64_t nbytes = computeStorageNbytes(sizes, strides, storage_offset_, dtype_);
  if (storage_.defined() && static_cast<uint64_t>(nbytes) > storage_->nbytes()) {
    storage_->grow(static_cast<size_t>(nbytes));
  }
  set_sizes_and_strides(sizes, strides, storage_offset_);
}

void TensorImpl::set_sizes_and_strides(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  int64_t numel = 0;
  int64_t nbytes = computeStorageNbytes(sizes, strides, storage_offset, dtype_, &numel);
  OPDISPATCH_CHECK_INDEX(!storage_.defined() || static_cast<uint64_t>(nbytes) <= storage_->nbytes(),
                         "a tensor with sizes ", listString(sizes), ", strides ", listString(strides),
                         " and storage_offset ", storage_offset, " (dtype ", toPythonName(dtype_), ") reaches byte ",
                         nbytes, " of its storage, which has ", storage_->nbytes(), " bytes");
  // Copied before the old geometry is freed: `sizes` and `strides` may point into it.
  std::vector<int64_t> geometry(sizes.begin(), sizes.end());
  geometry.insert(geometry.end(), strides.begin(), strides.end());
  int64_t* target = inline_geometry_;
  if (sizes.size() > kInlineDims) {
    target = new int64_t[2 * sizes.size()];  // before anything changes: new may throw
  }
  if (dim_ > kInlineDims) {
    delete[] heap_geometry_;
  }
  if (sizes.size() > kInlineDims) {
    heap_geometry_ = target;
  }
  std::copy(geometry.begin(), geometry.end(), target);
  dim_ = sizes.size();
  numel_ = numel;
  storage_offset_ = storage_offset;
  refreshContiguous();
}

bool TensorImpl::handOffLastReference() {
  if (!owns_pyobj_ || pyobj_ == nullptr) {
    return false;
  }
  owns_pyobj_ = false;
  adoptFirstReference();  // the object's reference: it owns this TensorImpl again
  pyInterpreterHooks().decref(pyobj_);
  return true;
}

TensorImpl::~TensorImpl() {
  if (VersionCounter* vc = version_counter_.load(std::memory_order_acquire)) {
    intrusive_ptr<VersionCounter>::reclaim(vc);
  }
  if (dim_ > kInlineDims) {
    delete[] heap_geometry_;
  }
}

VersionCounter& TensorImpl::counter() const {
  VersionCounter* vc = version_counter_.load(std::memory_order_acquire);
  if (vc == nullptr) {
    VersionCounter* fresh = make_intrusive<VersionCounter>().release();
    if (version_counter_.compare_exchange_strong(vc, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) {
      vc = fresh;
    } else {
      intrusive_ptr<VersionCounter>::reclaim(fresh);  // another thread made one first: share that (vc)
    }
  }
  return *vc;
}

intrusive_ptr<VersionCounter> TensorImpl::version_counter() const { return intrusive_ptr<VersionCounter>(&counter()); }

void TensorImpl::set_version_counter(intrusive_ptr<VersionCounter> vc) {
  OPDISPATCH_CHECK(vc.defined(), "set_version_counter needs a version counter");
  if (VersionCounter* old = version_counter_.exchange(vc.release(), std::memory_order_acq_rel)) {
    intrusive_ptr<VersionCounter>::reclaim(old);
  }
}

void* TensorImpl::data_ptr() const {
  OPDISPATCH_CHECK(storage_.defined(), "cannot access the data of a tensor on ", device_,
                   ": it has no storage (meta tensors, wrapper subclasses and fake tensors carry only metadata)");
  // Fits int64: Note [Checked size arithmetic], invariant 2.
  return static_cast<char*>(storage_->data()) + storage_offset_ * static_cast<int64_t>(itemsize());
}

void TensorImpl::set_requires_grad(bool requires_grad) {
  OPDISPATCH_CHECK(!requires_grad || isFloatingType(dtype_) || isComplexType(dtype_),
                   "only Tensors of floating point and complex dtype can require gradients, not opdispatch.",
                   toPythonName(dtype_));
  requires_grad_ = requires_grad;
  DispatchKey backend = backendKeyForDevice(device_.type());
  DispatchKeySet grad_keys = tensorKeySet(backend, true) - DispatchKeySet(backend);
  key_set_ = requires_grad ? key_set_ | grad_keys : key_set_ - grad_keys;
}

void TensorImpl::set_python_dispatch(bool enabled) { key_set_ = enabled ? key_set_ | python_ks : key_set_ - python_ks; }

void TensorImpl::refreshContiguous() {
  IntArrayRef sizes = this->sizes();
  IntArrayRef strides = this->strides();
  int64_t expected = 1;
  is_contiguous_ = true;
  for (int64_t i = dim() - 1; i >= 0; --i) {
    if (sizes[i] == 1) {
      continue;
    }
    if (strides[i] != expected) {
      is_contiguous_ = numel_ == 0;
      return;
    }
    expected *= sizes[i]; // bounded by the product of the nonzero sizes: Note [Checked size arithmetic]
  }
}

std::vector<int64_t> contiguousStrides(IntArrayRef sizes) {
  std::vector<int64_t> strides(sizes.size());
  contiguousStrides(sizes, strides.data());
  return strides;
}

void contiguousStrides(IntArrayRef sizes, int64_t* strides) {
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    OPDISPATCH_CHECK(!mulOverflows(s, sizes[i] > 1 ? sizes[i] : 1, &s), "the contiguous strides of sizes ",
                     listString(sizes), " overflow int64 (the product of the sizes must be less than 2**63)");
  }
}

int64_t computeStorageNbytes(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset, ScalarType dtype,
                             int64_t* numel) {
  OPDISPATCH_CHECK_VALUE(sizes.size() == strides.size(), "a tensor needs one stride per dimension; got ", sizes.size(),
                         " sizes and ", strides.size(), " strides");
  auto itemsize = static_cast<int64_t>(elementSize(dtype));
  OPDISPATCH_CHECK_VALUE(dtype != ScalarType::BFloat16, kNoBFloat16Tensors);
  OPDISPATCH_CHECK_VALUE(itemsize != 0, "a tensor needs a defined dtype");
  OPDISPATCH_CHECK_VALUE(storage_offset >= 0, "storage_offset must be >= 0, got ", storage_offset);
  bool empty = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    OPDISPATCH_CHECK_VALUE(sizes[i] >= 0, "tensor sizes must be >= 0, got ", sizes[i], " at dimension ", i);
    OPDISPATCH_CHECK_VALUE(strides[i] >= 0, "negative strides are not supported (stride ", strides[i], " at dimension ",
                           i, ")");
    empty = empty || sizes[i] == 0;
  }
  auto overflow = [&](const char* what) {
    return Error(detail::str("the ", what, " of a tensor with sizes ", listString(sizes), ", strides ",
                             listString(strides), ", storage_offset ", storage_offset, " and dtype ",
                             toPythonName(dtype), " overflows int64 (Storage size calculation overflowed)"));
  };
  int64_t product = 1;
  if (nonzeroProductOverflows(sizes, &product)) {
    throw overflow("number of elements");
  }
  int64_t offset_bytes = 0;
  if (mulOverflows(storage_offset, itemsize, &offset_bytes)) {
    throw overflow("byte offset");
  }
  if (numel != nullptr) {
    *numel = empty ? 0 : product;
  }
  if (empty) {
    return 0;
  }
  int64_t nbytes = 0;
  if (storageNbytesOverflows(sizes, strides, storage_offset, itemsize, &nbytes)) {
    throw overflow("byte extent");
  }
  return nbytes;
}

} // namespace opdispatch
