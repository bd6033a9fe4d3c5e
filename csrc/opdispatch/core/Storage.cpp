// StorageImpl allocation and release.
#include <opdispatch/core/Storage.h>

#include <cstdlib>
#include <new>

#include <opdispatch/core/CheckedArithmetic.h>

namespace opdispatch {

StorageImpl::~StorageImpl() {
  if (deleter_) {
    deleter_(ctx_, data_);
  }
}

intrusive_ptr<StorageImpl> StorageImpl::allocate(size_t nbytes) {
  constexpr size_t kAlignment = 64;
  size_t padded = 0;
  if (addOverflows(nbytes, kAlignment - 1, &padded)) {
    throw std::bad_alloc();
  }
  size_t rounded = padded / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (data == nullptr) {
    throw std::bad_alloc();
  }
  return make_intrusive<StorageImpl>(data, nbytes, [](void*, void* d) { std::free(d); }, nullptr);
}

} // namespace opdispatch
