// Tensor accessors, views and factories.
#include <opdispatch/core/Tensor.h>

#include <cmath>
#include <cstdint>
#include <sstream>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

TensorImpl* Tensor::impl() const {
  OPDISPATCH_CHECK(impl_.defined(), "this operation needs a defined tensor, but the tensor is undefined");
  return impl_.get();
}

void Tensor::checkItemSize(size_t n) const {
  OPDISPATCH_CHECK_TYPE(impl()->itemsize() == n, "data_ptr<T>() with sizeof(T) = ", n, " on a tensor of dtype ",
                        toPythonName(dtype()));
}

void Tensor::checkAccessorDim(size_t n) const {
  OPDISPATCH_CHECK(static_cast<size_t>(dim()) == n, "TensorAccessor expected ", n, " dims but tensor has ", dim());
}

namespace {
/// The float16 value with IEEE binary16 bits `h` as a double.
double halfToDouble(uint16_t h) {
  int exponent = (h >> 10) & 0x1f;
  double mantissa = h & 0x3ff;
  double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                     : exponent == 31 ? (mantissa == 0 ? INFINITY : NAN)
                                      : std::ldexp(mantissa + 1024, exponent - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}
} // namespace

Scalar Tensor::itemScalar() const {
  OPDISPATCH_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  OPDISPATCH_CHECK(!is_meta(),
                   "item() of a meta tensor: it has no data (Tensor.item() cannot be called on meta "
                   "tensors)");
  const void* p = data_ptr();
  switch (scalar_type()) {
    case ScalarType::Bool:
      return Scalar(*static_cast<const bool*>(p));
    case ScalarType::Byte:
      return Scalar(*static_cast<const uint8_t*>(p));
    case ScalarType::Char:
      return Scalar(*static_cast<const int8_t*>(p));
    case ScalarType::Short:
      return Scalar(*static_cast<const int16_t*>(p));
    case ScalarType::Int:
      return Scalar(*static_cast<const int32_t*>(p));
    case ScalarType::Long:
      return Scalar(*static_cast<const int64_t*>(p));
    case ScalarType::Half:
      return Scalar(halfToDouble(*static_cast<const uint16_t*>(p)));
    case ScalarType::Float:
      return Scalar(*static_cast<const float*>(p));
    case ScalarType::Double:
      return Scalar(*static_cast<const double*>(p));
    default:
      break;
  }
  throw TypeError(detail::str("item() of a ", toPythonName(scalar_type()),
                              " tensor: opdispatch's C++ Scalar holds ints, floats and bools only"));
}

static int64_t wrapDim(int64_t d, int64_t ndim) {
  OPDISPATCH_CHECK_INDEX(d >= -ndim && d < ndim, "dimension ", d, " out of range for a tensor with ", ndim,
                         " dimensions (expected a value in [", -ndim, ", ", ndim - 1, "])");
  return d < 0 ? d + ndim : d;
}

int64_t Tensor::size(int64_t d) const { return sizes()[wrapDim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides()[wrapDim(d, dim())]; }

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) const {
  TensorImpl* self = impl();
  // The TensorImpl checks the geometry and that it stays inside the storage.
  auto view = make_intrusive<TensorImpl>(self->storage(), self->dtype(), self->device(), sizes, strides,
                                         storage_offset);
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
  int64_t nbytes = computeStorageNbytes(sizes, strides, 0, dtype);
  intrusive_ptr<StorageImpl> storage;
  if (!device.is_meta()) {
    storage = StorageImpl::allocate(static_cast<size_t>(nbytes));
  }
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, device, sizes, strides, 0));
}

Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  return empty_strided(sizes, contiguousStrides(sizes), dtype, device);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, StorageImpl::Deleter deleter,
                 void* ctx) {
  int64_t nbytes = 0;
  try {
    nbytes = computeStorageNbytes(sizes, strides, 0, dtype);
  } catch (...) {
    if (deleter) {
      deleter(ctx, data);
    }
    throw;
  }
  auto storage = make_intrusive<StorageImpl>(data, static_cast<size_t>(nbytes), deleter, ctx);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, Device(), sizes, strides, 0));
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options) {
  OPDISPATCH_CHECK(options.device().is_cpu(),
                   "from_blob(): opdispatch wraps host memory only, so the device must be "
                   "cpu; got ",
                   options.device());
  Tensor t = from_blob(data, sizes, contiguousStrides(sizes), options.dtype());
  if (options.requires_grad()) {
    t.set_requires_grad(true);
  }
  return t;
}

} // namespace opdispatch
