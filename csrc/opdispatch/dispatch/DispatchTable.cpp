// DispatchTable: the double-buffered publication of Note [Hot dispatch table].
#include <opdispatch/dispatch/DispatchTable.h>

namespace opdispatch {

namespace {
constexpr uint64_t kAllKeys = DispatchKeySet(DispatchKeySet::FULL).raw_repr();
} // namespace

DispatchTable::DispatchTable(KernelRef initial) {
  for (Buffer& b : buffers_) {
    b.non_fallthrough.store(kAllKeys, std::memory_order_relaxed);
    for (Slot& s : b.slots) {
      s.functor.store(initial.functor(), std::memory_order_relaxed);
      s.boxed.store(initial.boxedFunction(), std::memory_order_relaxed);
      s.unboxed.store(initial.unboxedFunction(), std::memory_order_relaxed);
      s.effects.store(initial.effects(), std::memory_order_relaxed);
    }
  }
  version_.store(0, std::memory_order_release);
}

KernelRef DispatchTable::entry(int index) const {
  for (;;) {
    const uint64_t version = version_.load(std::memory_order_acquire);
    KernelRef k = read(buffers_[version & 1].slots[index]);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (version_.load(std::memory_order_relaxed) == version) {
      return k;
    }
  }
}

DispatchKeySet DispatchTable::nonFallthroughKeys() const {
  const uint64_t version = version_.load(std::memory_order_acquire);
  return DispatchKeySet(DispatchKeySet::RAW, buffers_[version & 1].non_fallthrough.load(std::memory_order_relaxed));
}

DispatchTable::Update::Update(DispatchTable& table)
    : table_(table),
      version_(table.version_.load(std::memory_order_relaxed)) {
  // A reader that sees any store below must also see that `version_` moved on
  // from the version that directed it to this buffer (it then reads again).
  std::atomic_thread_fence(std::memory_order_release);
  const Buffer& live = table_.buffers_[version_ & 1];
  Buffer& next = table_.buffers_[(version_ + 1) & 1];
  next.non_fallthrough.store(live.non_fallthrough.load(std::memory_order_relaxed), std::memory_order_relaxed);
  for (int i = 0; i < kDispatchTableSize; ++i) {
    KernelRef k = read(live.slots[i]);
    Slot& s = next.slots[i];
    s.functor.store(k.functor(), std::memory_order_relaxed);
    s.boxed.store(k.boxedFunction(), std::memory_order_relaxed);
    s.unboxed.store(k.unboxedFunction(), std::memory_order_relaxed);
    s.effects.store(k.effects(), std::memory_order_relaxed);
  }
}

void DispatchTable::Update::set(int index, KernelRef k) {
  Buffer& next = table_.buffers_[(version_ + 1) & 1];
  Slot& s = next.slots[index];
  s.functor.store(k.functor(), std::memory_order_relaxed);
  s.boxed.store(k.boxedFunction(), std::memory_order_relaxed);
  s.unboxed.store(k.unboxedFunction(), std::memory_order_relaxed);
  s.effects.store(k.effects(), std::memory_order_relaxed);
  if (index > 0) {
    const uint64_t bit = DispatchKeySet(static_cast<DispatchKey>(index)).raw_repr();
    const uint64_t mask = next.non_fallthrough.load(std::memory_order_relaxed);
    next.non_fallthrough.store(k.isFallthrough() ? (mask & ~bit) : (mask | bit), std::memory_order_relaxed);
  }
}

void DispatchTable::Update::publish() { table_.version_.store(version_ + 1, std::memory_order_release); }

} // namespace opdispatch
