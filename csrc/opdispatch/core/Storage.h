// StorageImpl: reference-counted bytes with a deleter, so a tensor can own
// memory opdispatch allocated, a NumPy buffer, or a DLPack capsule.
#pragma once

#include <cstddef>

#include <opdispatch/core/intrusive_ptr.h>

namespace opdispatch {

// Note [Growing a storage and the arrays that view it]
// resize_ grows a storage in place, as PyTorch's resize_bytes_cpu does: new
// memory, the old bytes copied to its start, every tensor sharing the
// storage (views too) reads the new memory from then on. NumPy arrays made
// from tensors (kernel arrays, numpy(), and arrays a kernel derives from
// them) point at the memory they were made for, so each one *exports* that
// buffer (exportData) and releases it when it dies (releaseExport). A grown
// storage keeps its old buffer while exports of it live, and frees it when
// the last one is released: such an array never sees freed memory; it keeps
// the values as they were at the resize and no longer shares memory with the
// tensor. (PyTorch refuses instead to resize a storage numpy() exported;
// opdispatch's own kernels, repr and indexing go through numpy(), so that
// rule would freeze nearly every storage. A storage whose memory belongs to
// a NumPy array — from_numpy, from_dlpack — is not resizable, as PyTorch's.)
// Exports, releases and grow run under one lock the caller holds: the GIL in
// the Python layer, which makes every array.
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

  /// Whether grow() may replace the memory (PyTorch: StorageImpl::resizable).
  bool resizable() const { return resizable_; }
  void set_resizable(bool resizable) { resizable_ = resizable; }

  /// Grows the storage to `nbytes` (more than nbytes()): new memory aligned
  /// to 64 bytes, holding the old bytes first and uninitialised ones after.
  /// The old memory is freed now, or when its last export is released (Note
  /// [Growing a storage and the arrays that view it]). Throws Error if the
  /// storage is not resizable, std::bad_alloc if the memory cannot be had;
  /// the storage is unchanged then. PyTorch: resize_bytes_cpu.
  void grow(size_t nbytes);

  /// Records that an array views the current memory; returns data(). Each
  /// call is paired with one releaseExport(data) when the array dies.
  void* exportData();
  /// Releases one export of `data` (a value exportData returned), freeing
  /// that memory if grow() replaced it and this was its last export.
  void releaseExport(void* data);

 private:
  /// Memory grow() replaced while exports of it live.
  struct Retired {
    void* data;
    Deleter deleter;
    void* ctx;
    size_t exports;
    Retired* next;
  };

  void* data_;
  size_t nbytes_;
  Deleter deleter_;
  void* ctx_;
  size_t exports_ = 0;  ///< live exports of data_
  Retired* retired_ = nullptr;
  bool resizable_ = true;
};

} // namespace opdispatch
