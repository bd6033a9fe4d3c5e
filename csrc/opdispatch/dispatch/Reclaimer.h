// Reclaimer: frees what registrations retire (kernels, schemas, operator
// entries) once no call can still be using it, without calls taking a lock.
// CallGuard marks a call; Reclaimer::retire hands over what a call may see.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include <opdispatch/Macros.h>
#include <opdispatch/dispatch/ThreadCallState.h>

namespace opdispatch {

// Note [Reclaiming retired kernels]
// Calls read the dispatch table and the schema without a lock, so a call may
// be running a kernel (or reading a schema) at the moment another thread
// deregisters it. Deregistration therefore unlinks and *retires* such objects
// here; they are freed once every call that could have seen them returned.
//
// The scheme is epoch-based reclamation with per-thread announcements, in
// the flavour of user-space RCU (liburcu's "memb" flavour):
// - A global epoch counter, never 0. A call (CallGuard, outermost call of a
//   thread only: nested calls and redispatches are covered by it) stores the
//   epoch it read into its thread's slot (ThreadCallState::epoch, Note [The
//   call's thread-local block]) on entry, and 0 ("quiescent") on exit, with
//   release order. A thread's first call registers the slot (it starts as
//   kUnregisteredEpoch, so the same compare that finds a call outermost
//   finds the thread new).
// - retire(p) records p with the epoch current when it was unlinked.
// - reclaim() advances the epoch, then reads every thread's slot: p may be
//   freed iff every slot is 0 or greater than p's epoch. A call that can
//   still use p read the table before p was unlinked, so it announced an
//   epoch <= p's (and the announcement is visible to reclaim(): see below).
//   A slot with a newer epoch, or 0, cannot hold p.
// - The announcement must be ordered before the call's reads of the table
//   (a store followed by loads: only a full fence orders them). A fence on
//   every call costs more than the rest of a typed C++ call, so, where Linux
//   offers it, reclaim() issues membarrier(PRIVATE_EXPEDITED), which runs a
//   full fence on every thread of the process that is running, and calls
//   only need a compiler barrier. Elsewhere calls issue the fence; the
//   epoch's low bit says which (kCallsFenceBit), so the one load of the
//   epoch tells a call both. Should membarrier fail later (a forked child
//   registers again), reclaim() frees nothing: a leak, never a use after free.
// Why this over the alternatives: reference counts on kernels would make
// every call write a shared counter (contended between threads calling the
// same operator) and still need protection between reading the pointer and
// counting it; hazard pointers need the same per-call fence; pure
// quiescent-state schemes need every thread to report quiescence regularly,
// which threads that stop calling never do — here an idle thread's slot is
// 0 and never holds reclamation up. The cost: one load of the epoch, one
// thread-local store and a compiler barrier per outermost call, one more
// store on return.
//
// Reclamation never waits: a call running for a long time (or a kernel that
// deregisters itself) only defers freeing what it might use; reclaim() runs
// after deregistrations and frees what it can. Deleters run without any lock
// held (they may release Python objects or call into the dispatcher).

namespace detail {
/// The global epoch (Note [Reclaiming retired kernels]), a multiple of
/// kEpochStep, plus kCallsFenceBit when calls must fence themselves (no
/// membarrier on this system): one load gives a call both. Never 0.
extern std::atomic<uint64_t> gCallEpoch;
inline constexpr uint64_t kEpochStep = 2;
inline constexpr uint64_t kCallsFenceBit = 1;
/// Makes this thread's slot known to the Reclaimer and sets it to 0 (once per thread).
void registerCallEpochThread();
} // namespace detail

/// Marks the calling thread as inside a call for its scope: nothing a call
/// can see is freed while it runs. Cheap when nested. Not movable.
class CallGuard final {
 public:
  CallGuard() : previous_(tls_call_state.epoch.load(std::memory_order_relaxed)) {
    if (OPDISPATCH_LIKELY(previous_ == 0)) {
      announce();
    } else if (OPDISPATCH_UNLIKELY(previous_ == kUnregisteredEpoch)) {
      detail::registerCallEpochThread();
      previous_ = 0;
      announce();
    }
  }
  /// Restores the announcement found on entry: 0 for the outermost call, the
  /// (unchanged) outer call's epoch for a nested one — no branch.
  ~CallGuard() { tls_call_state.epoch.store(previous_, std::memory_order_release); }
  CallGuard(const CallGuard&) = delete;
  CallGuard& operator=(const CallGuard&) = delete;

 private:
  static void announce() {
    const uint64_t epoch = detail::gCallEpoch.load(std::memory_order_relaxed);
    tls_call_state.epoch.store(epoch, std::memory_order_relaxed);
    if (OPDISPATCH_UNLIKELY((epoch & detail::kCallsFenceBit) != 0)) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
    } else {
      std::atomic_signal_fence(std::memory_order_seq_cst);
    }
  }
  uint64_t previous_;
};

/// The process's reclamation domain (in libopdispatch, shared by every extension).
class Reclaimer final {
 public:
  static Reclaimer& singleton();

  /// Frees `p` with `deleter(p)` at a later reclaim(), once no call that
  /// started before now is still running. `p` must already be unreachable
  /// for new calls. Thread-safe; frees nothing itself (callers may hold locks).
  void retire(void* p, void (*deleter)(void*));
  template <class T>
  void retire(T* p) {
    retire(const_cast<void*>(static_cast<const void*>(p)), [](void* q) { delete static_cast<T*>(q); });
  }
  /// Frees every retired object no running call can see; returns how many.
  /// Never waits for calls (a call on this thread keeps what it may use).
  /// Thread-safe; call it holding no lock a deleter might take.
  size_t reclaim();
  /// reclaim() if at least kBatch objects are pending.
  void reclaimIfDue();
  /// Frees everything retired so far before returning: reclaims until nothing
  /// is pending, waiting (yielding) for running calls to return; a call still
  /// running after `patience` (or one on this thread) gets what is left
  /// abandoned — leaked, never freed later. For code about to be unmapped
  /// (Note [Unloading an extension]): once this returns, no deleter of an
  /// object retired before the call runs. After one wait that ran out,
  /// later drains do not wait (process exit with a thread stuck in a call
  /// is not slowed once per library). Thread-safe; hold no lock a deleter takes.
  void drain(std::chrono::milliseconds patience);
  /// Number of retired objects not freed yet.
  size_t pending() const;

  /// reclaimIfDue() reclaims once this many objects are pending (the
  /// membarrier reclaim() issues costs microseconds: batches amortise it).
  static constexpr size_t kBatch = 32;

 private:
  friend void detail::registerCallEpochThread();
  Reclaimer();
  struct Retired {
    void* object;
    void (*deleter)(void*);
    uint64_t epoch;
  };

  /// Whether a drain() ran out of patience (then later ones do not wait).
  std::atomic<bool> drain_gave_up_{false};
  mutable std::mutex mutex_;
  std::vector<Retired> retired_;
  /// The epoch slots of the threads that ever called (each removed at its thread's exit).
  std::vector<std::atomic<uint64_t>*> threads_;
  friend struct ThreadSlotOwner;
  void unregisterThread(std::atomic<uint64_t>* slot);
};

} // namespace opdispatch
