// DispatchTable: an operator's computed kernel per runtime key, by value,
// with its mask of non-fallthrough keys — the only operator state a call
// reads besides the schema. Read lock-free; written under the registration lock.
#pragma once

#include <atomic>
#include <cstdint>

#include <opdispatch/core/DispatchKeySet.h>
#include <opdispatch/dispatch/KernelRef.h>

namespace opdispatch {

// Note [Hot dispatch table]
// A call needs, for the highest key of its masked key set, the kernel's entry
// points, its functor and its effects flags: a KernelRef (four words). The
// table holds them by value, so a call makes no dependent load into the
// registration records (AnnotatedKernel: debug strings, inferred schemas),
// which stay in OperatorEntry's cold lists.
//
// Calls never lock and a call racing a (de)registration must see a whole
// entry, old or new. Four words cannot be stored atomically, so the table is
// double-buffered: readers read the buffer `version_` selects, then check
// that `version_` did not change meanwhile (else read again); a writer (under
// the registration lock) fills the other buffer — a copy of the live one with
// the changed entries — and publishes it by incrementing `version_`. Writers
// never touch the buffer readers are directed to, so a stalled writer cannot
// hold readers up; a reader retries only when a writer completed a
// publication during its read (lock-free). The fallthrough mask sits in the
// same buffer, so one read gives a mask and an entry from the same table.
//
// The table owns nothing and has nothing to reclaim. What a call can still be
// using after a registration is the functor of an overwritten entry, owned
// by its retired AnnotatedKernel (a separate object), which the Reclaimer
// frees once no call that read the old table version can still run it (Note
// [Reclaiming retired kernels]).
class DispatchTable final {
 public:
  /// Every entry `initial` (not a fallthrough), every key in the mask.
  explicit DispatchTable(KernelRef initial);
  DispatchTable(const DispatchTable&) = delete;
  DispatchTable& operator=(const DispatchTable&) = delete;

  /// The entry of the highest key of `ks` & the non-fallthrough keys (the
  /// Undefined entry for an empty set), into `*kernel`; returns that masked
  /// key set (what the kernel receives). Lock-free.
  DispatchKeySet lookup(DispatchKeySet ks, KernelRef* kernel) const {
    for (;;) {
      const uint64_t version = version_.load(std::memory_order_acquire);
      const Buffer& b = buffers_[version & 1];
      const DispatchKeySet masked = ks & DispatchKeySet(DispatchKeySet::RAW,
                                                        b.non_fallthrough.load(std::memory_order_relaxed));
      // Field by field: a whole-struct copy here stalls on store forwarding.
      const Slot& s = b.slots[masked.getDispatchTableIndex()];
      *kernel = KernelRef(s.functor.load(std::memory_order_relaxed), s.boxed.load(std::memory_order_relaxed),
                          s.unboxed.load(std::memory_order_relaxed), s.effects.load(std::memory_order_relaxed));
      std::atomic_thread_fence(std::memory_order_acquire);
      if (OPDISPATCH_LIKELY(version_.load(std::memory_order_relaxed) == version)) {
        return masked;
      }
    }
  }
  /// The entry of table index `index` (0 for Undefined, else a runtime key's value). Lock-free.
  KernelRef entry(int index) const;
  /// The keys whose entry is not a fallthrough. Lock-free.
  DispatchKeySet nonFallthroughKeys() const;

  /// A batch of changes (registration lock held): starts from the live table,
  /// publishes all changes at once. Destroying an Update unpublished drops it.
  class Update final {
   public:
    explicit Update(DispatchTable& table);
    Update(const Update&) = delete;
    Update& operator=(const Update&) = delete;
    /// Sets entry `index` (and its fallthrough bit; index 0 has none).
    void set(int index, KernelRef k);
    /// Makes the changes visible to calls.
    void publish();

   private:
    DispatchTable& table_;
    uint64_t version_;
  };

 private:
  struct Slot {
    std::atomic<OperatorKernel*> functor;
    std::atomic<KernelRef::BoxedKernelFunction*> boxed;
    std::atomic<void*> unboxed;
    std::atomic<uint32_t> effects;
  };
  struct Buffer {
    std::atomic<uint64_t> non_fallthrough;
    Slot slots[kDispatchTableSize];
  };
  static KernelRef read(const Slot& s) {
    return KernelRef(s.functor.load(std::memory_order_relaxed), s.boxed.load(std::memory_order_relaxed),
                     s.unboxed.load(std::memory_order_relaxed), s.effects.load(std::memory_order_relaxed));
  }

  std::atomic<uint64_t> version_{0};
  Buffer buffers_[2];
};

} // namespace opdispatch
