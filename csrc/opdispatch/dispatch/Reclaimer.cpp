// Reclaimer: the epochs, thread slots and membarrier of Note [Reclaiming
// retired kernels].
#include <opdispatch/dispatch/Reclaimer.h>

#include <algorithm>
#include <thread>

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace opdispatch {

namespace detail {

// Calls fence until the Reclaimer finds membarrier working (its constructor
// runs before any call or retire() reads the epoch).
std::atomic<uint64_t> gCallEpoch{kEpochStep | kCallsFenceBit};

} // namespace detail

namespace {

#if defined(__linux__) && defined(__NR_membarrier)
/// Whether membarrier(PRIVATE_EXPEDITED) works here (registered for this process).
bool registerMembarrier() {
  long supported = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
    return false;
  }
  return syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}
/// A full fence on every running thread of the process (with calls fencing
/// themselves, a fence here pairs with theirs). False if it cannot be had:
/// then nothing may be freed.
bool fenceAllThreads() {
  if ((detail::gCallEpoch.load(std::memory_order_relaxed) & detail::kCallsFenceBit) != 0) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return true;
  }
  if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
    return true;
  }
  // A forked child may have lost the registration: register again.
  return registerMembarrier() && syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}
#else
bool registerMembarrier() { return false; }
bool fenceAllThreads() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return true;
}
#endif

} // namespace

/// Removes the thread's slot from the Reclaimer when the thread exits (its
/// TLS, the slot included, is freed then).
struct ThreadSlotOwner {
  ~ThreadSlotOwner() { Reclaimer::singleton().unregisterThread(&tls_call_state.epoch); }
};

Reclaimer::Reclaimer() {
  // Before any call can use the compiler-barrier path (calls read the epoch
  // once the singleton exists: registerCallEpochThread creates it first).
  if (registerMembarrier()) {
    detail::gCallEpoch.fetch_and(~detail::kCallsFenceBit, std::memory_order_relaxed);
  }
}

Reclaimer& Reclaimer::singleton() {
  // Never destroyed: threads may exit (unregistering) after static destructors ran.
  static Reclaimer* reclaimer = new Reclaimer();
  return *reclaimer;
}

void detail::registerCallEpochThread() {
  Reclaimer& r = Reclaimer::singleton();
  // Quiescent before the Reclaimer can read it.
  tls_call_state.epoch.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(r.mutex_);
    r.threads_.push_back(&tls_call_state.epoch);
  }
  static thread_local ThreadSlotOwner owner;
  (void)owner;
}

void Reclaimer::unregisterThread(std::atomic<uint64_t>* slot) {
  std::lock_guard<std::mutex> lock(mutex_);
  threads_.erase(std::remove(threads_.begin(), threads_.end(), slot), threads_.end());
}

void Reclaimer::retire(void* p, void (*deleter)(void*)) {
  std::lock_guard<std::mutex> lock(mutex_);
  // p was unlinked before this: a call that announces a later epoch cannot reach it.
  retired_.push_back({p, deleter, detail::gCallEpoch.load(std::memory_order_seq_cst)});
}

void Reclaimer::reclaimIfDue() {
  if (pending() >= kBatch) {
    reclaim();
  }
}

size_t Reclaimer::reclaim() {
  std::vector<Retired> freeable;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (retired_.empty()) {
      return 0;
    }
    // Calls announcing from now on see everything retired so far unlinked.
    const uint64_t now = detail::gCallEpoch.fetch_add(detail::kEpochStep, std::memory_order_seq_cst) +
                         detail::kEpochStep;
    // Makes every running call's announcement visible before the slots are read.
    if (!fenceAllThreads()) {
      return 0;
    }
    uint64_t oldest = now;
    for (const std::atomic<uint64_t>* slot : threads_) {
      const uint64_t e = slot->load(std::memory_order_acquire);
      if (e != 0) {
        oldest = std::min(oldest, e);
      }
    }
    auto still_visible = std::partition(retired_.begin(), retired_.end(),
                                        [&](const Retired& r) { return r.epoch >= oldest; });
    freeable.assign(still_visible, retired_.end());
    retired_.erase(still_visible, retired_.end());
  }
  for (const Retired& r : freeable) {
    r.deleter(r.object);
  }
  return freeable.size();
}

void Reclaimer::drain(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    reclaim();
    if (pending() == 0) {
      return;
    }
    if (drain_gave_up_.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= deadline) {
      break;
    }
    std::this_thread::yield();
  }
  drain_gave_up_.store(true, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  retired_.clear();  // (abandoned: a leak, never a deleter run after its code is gone)
}

size_t Reclaimer::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return retired_.size();
}

} // namespace opdispatch
