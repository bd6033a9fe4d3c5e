// StorageImpl allocation, growth and release.
#include <opdispatch/core/Storage.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include <opdispatch/core/CheckedArithmetic.h>
#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace {
/// `nbytes` bytes aligned to 64 bytes; throws std::bad_alloc.
void* alignedAllocate(size_t nbytes) {
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
  return data;
}

void freeAligned(void*, void* data) { std::free(data); }
} // namespace

StorageImpl::~StorageImpl() {
  // Every export holds a reference to its storage, so no retired memory is left here.
  if (deleter_) {
    deleter_(ctx_, data_);
  }
}

intrusive_ptr<StorageImpl> StorageImpl::allocate(size_t nbytes) {
  return make_intrusive<StorageImpl>(alignedAllocate(nbytes), nbytes, freeAligned, nullptr);
}

void StorageImpl::grow(size_t nbytes) {
  OPDISPATCH_CHECK(resizable_,
                   "Trying to resize storage that is not resizable (its memory belongs to a NumPy "
                   "array: from_numpy, from_dlpack); resize a clone() instead");
  OPDISPATCH_INTERNAL_ASSERT(nbytes > nbytes_, "StorageImpl::grow to ", nbytes, " bytes from ", nbytes_);
  Retired* retired = exports_ > 0 ? new Retired{data_, deleter_, ctx_, exports_, retired_} : nullptr;
  void* grown = nullptr;
  try {
    grown = alignedAllocate(nbytes);
  } catch (...) {
    delete retired;
    throw;
  }
  if (nbytes_ > 0) {
    std::memcpy(grown, data_, nbytes_);
  }
  if (retired != nullptr) {
    retired_ = retired;
  } else if (deleter_) {
    deleter_(ctx_, data_);
  }
  data_ = grown;
  nbytes_ = nbytes;
  deleter_ = freeAligned;
  ctx_ = nullptr;
  exports_ = 0;
}

void* StorageImpl::exportData() {
  ++exports_;
  return data_;
}

void StorageImpl::releaseExport(void* data) {
  if (data == data_) {
    OPDISPATCH_INTERNAL_ASSERT(exports_ > 0, "StorageImpl::releaseExport without an export");
    --exports_;
    return;
  }
  // Live buffers have distinct addresses, so `data` names one retired buffer.
  for (Retired** link = &retired_; *link != nullptr; link = &(*link)->next) {
    Retired* r = *link;
    if (r->data == data) {
      if (--r->exports == 0) {
        *link = r->next;
        if (r->deleter) {
          r->deleter(r->ctx, r->data);
        }
        delete r;
      }
      return;
    }
  }
  OPDISPATCH_INTERNAL_ASSERT(false, "StorageImpl::releaseExport of memory it never exported");
}

} // namespace opdispatch
