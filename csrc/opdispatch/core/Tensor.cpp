// Tensor accessors, views and factories.
#include <opdispatch/core/Tensor.h>

#include <sstream>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

TensorImpl* Tensor::impl() const {
  OPDISPATCH_CHECK(impl_.defined(), "this operation needs a defined tensor, but the tensor is undefined");
  return impl_.get();
}

void Tensor::checkItemSize(size_t n) const {
  OPDISPATCH_CHECK_TYPE(impl()->itemsize() == n, "data_ptr<T>() with sizeof(T) = ", n,
                        " on a tensor of dtype ", toPythonName(dtype()));
}

static int64_t wrapDim(int64_t d, int64_t ndim) {
  OPDISPATCH_CHECK_INDEX(d >= -ndim && d < ndim, "dimension ", d, " out of range for a tensor with ",
                         ndim, " dimensions (expected a value in [", -ndim, ", ", ndim - 1, "])");
  return d < 0 ? d + ndim : d;
}

int64_t Tensor::size(int64_t d) const { return sizes()[wrapDim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrapDim(d, dim())]; }

static size_t maxByteExtent(IntArrayRef sizes, IntArrayRef strides, int64_t offset, size_t itemsize) {
  int64_t last = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      return 0;
    }
    OPDISPATCH_CHECK_VALUE(strides[i] >= 0, "negative strides are not supported (stride ", strides[i],
                           " at dimension ", i, ")");
    last += (sizes[i] - 1) * strides[i];
  }
  return static_cast<size_t>(last + 1) * itemsize;
}

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const {
  TensorImpl* self = impl();
  OPDISPATCH_CHECK_VALUE(sizes.size() == strides.size(), "as_strided: got ", sizes.size(),
                         " sizes and ", strides.size(), " strides");
  if (self->has_storage()) {
    size_t need = maxByteExtent(sizes, strides, storage_offset, self->itemsize());
    OPDISPATCH_CHECK_INDEX(need <= self->storage()->nbytes(), "as_strided: the view needs ", need,
                           " bytes but the storage has ", self->storage()->nbytes());
  }
  auto view = make_intrusive<TensorImpl>(self->storage(), self->dtype(), self->device(), sizes.vec(),
                                         strides.vec(), storage_offset);
  view->set_version_counter(self->version_counter());
  return Tensor(std::move(view));
}

std::string Tensor::toString() const {
  if (!defined()) {
    return "Tensor(undefined)";
  }
  std::ostringstream ss;
  ss << "Tensor(sizes=[";
  for (size_t i = 0; i < sizes().size(); ++i) {
    ss << (i ? ", " : "") << sizes()[i];
  }
  ss << "], dtype=" << toPythonName(dtype()) << ", device=" << device() << ")";
  return ss.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.toString(); }

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  OPDISPATCH_CHECK_VALUE(elementSize(dtype) != 0, "empty: a defined dtype is needed");
  for (size_t i = 0; i < sizes.size(); ++i) {
    OPDISPATCH_CHECK_VALUE(sizes[i] >= 0, "empty: sizes must be >= 0, got ", sizes[i], " at dimension ", i);
  }
  intrusive_ptr<StorageImpl> storage;
  if (!device.is_meta()) {
    storage = StorageImpl::allocate(maxByteExtent(sizes, strides, 0, elementSize(dtype)));
  }
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, device, sizes.vec(), strides.vec(), 0));
}

Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  return empty_strided(sizes, contiguousStrides(sizes), dtype, device);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                 StorageImpl::Deleter deleter, void* ctx) {
  size_t nbytes = maxByteExtent(sizes, strides, 0, elementSize(dtype));
  auto storage = make_intrusive<StorageImpl>(data, nbytes, deleter, ctx);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, Device(), sizes.vec(), strides.vec(), 0));
}

} // namespace opdispatch
