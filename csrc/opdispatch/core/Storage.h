// StorageImpl: reference-counted bytes with a deleter, so a tensor can own
// memory opdispatch allocated, a NumPy buffer, or a DLPack capsule.
#pragma once

#include <cstddef>

#include <opdispatch/core/intrusive_ptr.h>

namespace opdispatch {

class StorageImpl final : public intrusive_ptr_target {
 public:
  /// Called once when the storage dies: `deleter(ctx, data)`.
  using Deleter = void (*)(void* ctx, void* data);

  /// Wraps memory someone else owns; `deleter` (may be null) releases it.
  StorageImpl(void* data, size_t nbytes, Deleter deleter, void* ctx)
      : data_(data),
        nbytes_(nbytes),
        deleter_(deleter),
        ctx_(ctx) {}
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
  ~StorageImpl() override;

  /// Allocates `nbytes` bytes aligned to 64 bytes, uninitialised. Throws
  /// std::bad_alloc (Python MemoryError) if the memory cannot be had.
  static intrusive_ptr<StorageImpl> allocate(size_t nbytes);

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

 private:
  void* data_;
  size_t nbytes_;
  Deleter deleter_;
  void* ctx_;
};

} // namespace opdispatch
