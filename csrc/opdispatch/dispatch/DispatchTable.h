// DispatchTable: an operator's computed kernel per runtime key, by value,
// with its mask of non-fallthrough keys — the only operator state a call
// reads besides the schema. Read lock-free; written under the registration lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

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
// Layout: neighbouring keys mostly share an entry (the missing kernel for
// every backend without one, the autograd fallback for every autograd key),
// so the table stores one KernelRef per *run* of equal entries, in key order:
// runs[0] is the entry of index 0 (Undefined), and `later_starts`, a key-set
// word (bit k - 1 for key k, Note [DispatchKeySet representation]), has the
// bit of every key at which a later run begins. The entry of the highest key
// of a non-empty masked set m is runs[popcount(later_starts << clz(m))]: the
// shift drops the starts above that key, the count is the number of runs
// begun at or below it. Fallthrough keys are never looked up (the call's key
// set is masked with `non_fallthrough` first), so they begin no run and join
// their neighbours'; entry(i) answers the fallthrough marker for them. An
// operator with one kernel has ~8 runs: ~0.3 KB instead of 48 entries (1.5 KB).
// The lookup is a mask, a count-leading-zeros, a shift and a popcount on the
// two words the call loads anyway (in the same cache line as the first runs):
// no load more than an array indexed by key.
//
// The typed call's cost (benchmarks/cpp, callgrind): the lookup returns a
// reference into the table, and the call loads the entry point, functor and
// effects word from there — a KernelRef copied out (to a local, or by value
// to the out-of-line effects path) made the compiler spill its four words
// per call. The popcount is the POPCNT instruction also in users' code built
// without -mpopcnt (their extensions and programs inline the lookup; the
// compiler's fallback is ~20 instructions), which libopdispatch, built with
// -mpopcnt, requires of the CPU already. The empty asm in lookup() hides the
// entry's address from the optimizer, so that the hot loads and the cold
// paths (effects, boxed fallback) share one pointer instead of the compiler
// keeping a second offset for the latter (4 instructions per call).
//
// Calls never lock and a call racing a (de)registration must see a whole
// table, old or new. A table is immutable once published (but for its hint:
// Note [Dispatch table hint]): a writer (under the registration lock) builds
// a new one — only the entries of the keys it changes are recomputed — and
// publishes it with one atomic pointer store. A reader loads the pointer
// (acquire) and reads that table: no retry, and a stalled writer cannot hold
// readers up (lock-free, indeed wait-free). The mask sits in the same table,
// so one read gives a mask and an entry from the same version. The replaced
// table goes to the Reclaimer, which frees it once no call that could have
// loaded the pointer still runs (Note [Reclaiming retired kernels]): so every
// lookup must run inside a CallGuard (calls hold one; entry() and
// nonFallthroughKeys() take their own). The functor of an overwritten entry
// is owned by its retired AnnotatedKernel (a separate object), reclaimed the
// same way.

// Note [Dispatch table hint]
// The lookup's arithmetic (mask, count-leading-zeros, shift, popcount, then
// the entry's load) sits between the arguments' key set and the kernel's
// address, and in a boxed call that chain delays the kernel's first atomic
// reference-count update (on x86 a locked instruction, a full barrier, which
// waits for the instructions before it). So each table holds a hint, one
// word: a masked key set and its run. A lookup whose masked set is the
// hinted one takes the hinted run: the entry's address comes from the hint,
// loaded beside the mask without waiting for the key set, which only has to
// reach a compare whose branch was predicted. Any other set computes its
// run as before. The first lookup of a table sets the hint, and nothing
// overwrites it: calls with alternating key sets (a call and its redispatch,
// say) write it at most once per table, and threads calling with different
// sets do not bounce the table's cache line between them. A new table starts
// without one (kNoHint), so a hint always names a run of its own table. The
// word is read and written with relaxed atomics: a reader sees kNoHint or a
// (key set, run) pair that some lookup computed from this table.
// Measured (benchmarks/cpp/bench_dispatch.cpp, Release builds of the library
// before and after, 6 alternating runs, median thread CPU time): boxed_8
// 30.4 -> 28.7 ns, boxed_1 9.1 -> 8.7 ns, the stack-traffic floor unchanged
// (22.6 ns).
class DispatchTable final {
  struct Table;  // (defined below)

 public:
  /// A copy of `copy_of`'s current table if given (registration lock held),
  /// else every entry `initial` (not a fallthrough), every key in the mask.
  explicit DispatchTable(KernelRef initial, const DispatchTable* copy_of = nullptr);
  /// Frees the current table (its operator is gone: no call can see it).
  ~DispatchTable();
  DispatchTable(const DispatchTable&) = delete;
  DispatchTable& operator=(const DispatchTable&) = delete;

  /// The entry of the highest key of `ks` & the non-fallthrough keys (the
  /// Undefined entry for an empty set); that masked key set (what the kernel
  /// receives) into `*masked`. The entry is a reference into the current
  /// table, valid while the caller's CallGuard lasts (Note [Hot dispatch
  /// table]): a call reads the fields it needs from there, copying nothing.
  /// Lock-free.
  const KernelRef& lookup(DispatchKeySet ks, DispatchKeySet* masked) const {
    const Table* t = table_.load(std::memory_order_acquire);
    *masked = ks & DispatchKeySet(DispatchKeySet::RAW, t->non_fallthrough);
    // Note [Dispatch table hint]: the hinted run, confirmed by a compare, not computed from the key set.
    const uint64_t hint = __atomic_load_n(&t->hint, __ATOMIC_RELAXED);
    const KernelRef* entry = t->runs + (hint & kHintRun);
    if (OPDISPATCH_UNLIKELY(hintedKeys(hint) != masked->raw_repr())) {
      const size_t run = runOf(t->later_starts, masked->raw_repr());
      if (hint == kNoHint) {
        __atomic_store_n(&t->hint, (masked->raw_repr() << kHintKeysShift) | run, __ATOMIC_RELAXED);
      }
      entry = t->runs + run;
    }
    __asm__("" : "+r"(entry));  // one pointer for all uses (see the Note)
    return *entry;
  }
  /// The entry of table index `index` (0 for Undefined, else a runtime key's value). Lock-free.
  KernelRef entry(int index) const;
  /// The keys whose entry is not a fallthrough. Lock-free.
  DispatchKeySet nonFallthroughKeys() const;
  /// The number of runs the current table stores (for tests of the compact layout; registration lock held).
  size_t numRuns() const;
  /// The current table's hinted masked key set, if it has a hint (for tests of Note [Dispatch table hint]).
  std::optional<DispatchKeySet> hintedKeySet() const;

  /// A batch of changes (registration lock held): starts from the live table,
  /// publishes all changes at once as a new table. Destroying an Update
  /// unpublished drops it.
  class Update final {
   public:
    explicit Update(DispatchTable& table);
    Update(const Update&) = delete;
    Update& operator=(const Update&) = delete;
    /// Sets entry `index` (and its fallthrough bit; index 0 has none).
    void set(int index, KernelRef k);
    /// Makes the changes visible to calls (nothing happens if nothing changed);
    /// the replaced table goes to the Reclaimer.
    void publish();
    /// publish() for a table no call can have seen (its operator is being
    /// constructed): frees the replaced table at once.
    void publishUnseen();

   private:
    /// The entry of index `i` after the changes so far.
    KernelRef current(int i) const;
    /// A new table of the live one with the changes.
    Table* merged() const;

    DispatchTable& table_;
    const Table* live_;
    uint64_t non_fallthrough_;
    /// Bit i: changes_[i] holds the new entry of index i (the others are the live table's).
    uint64_t set_ = 0;
    bool changed_ = false;
    /// Raw storage (only the entries in set_ are written): no zeroing per update.
    alignas(KernelRef) unsigned char changes_[sizeof(KernelRef) * kDispatchTableSize];
  };

 private:
  struct Table {
    uint64_t non_fallthrough;
    /// A masked key set and its run (Note [Dispatch table hint]); kNoHint
    /// until a lookup sets it. The only field that changes after
    /// publication: read and written with relaxed atomic operations.
    mutable uint64_t hint;
    uint64_t later_starts;
    KernelRef runs[1];  // really 1 + popcount(later_starts) of them
  };
  /// The hint's layout: the run in the low byte, the key-set word above it.
  static constexpr int kHintKeysShift = 8;
  static constexpr uint64_t kHintRun = 0xff;
  /// No hint: a key-set word of all ones, which has bits no key has, and run 0.
  static constexpr uint64_t kNoHint = ~uint64_t(0) << kHintKeysShift;
  /// The key-set word of `hint`.
  static constexpr uint64_t hintedKeys(uint64_t hint) { return hint >> kHintKeysShift; }
  static_assert(kNumRuntimeKeys < 64 - kHintKeysShift && kDispatchTableSize <= kHintRun + 1,
                "a hint holds a key-set word and a run index in one uint64_t");
  /// The run holding the highest key of the key-set word `keys` (run 0, of
  /// index 0, for none): see the Note.
  static size_t runOf(uint64_t later_starts, uint64_t keys) {
    return keys == 0 ? 0 : popcount64(later_starts << __builtin_clzll(keys));
  }
  static size_t popcount64(uint64_t x) {
#if defined(__x86_64__) && !defined(__POPCNT__)
    // x86-64 code built without -mpopcnt (a user's extension or program:
    // the flag is libopdispatch's own, not its users'): the instruction
    // anyway, which libopdispatch, built with -mpopcnt, already requires of
    // the CPU. The compiler would otherwise count bits in ~20 instructions
    // (or call libgcc) on every call.
    uint64_t count;
    __asm__("popcnt %1, %0" : "=r"(count) : "r"(x) : "cc");
    return count;
#else
    return static_cast<size_t>(__builtin_popcountll(x));
#endif
  }
  /// The number of runs `t` stores.
  static size_t runCount(const Table* t) { return 1 + popcount64(t->later_starts); }
  /// Bytes `t` takes.
  static size_t sizeInBytes(const Table* t);
  /// A new table whose entry of index i is `entry(i)` (only asked for index
  /// 0 and the non-fallthrough indices of `non_fallthrough`).
  template <class EntryOf>
  static Table* build(uint64_t non_fallthrough, const EntryOf& entry);
  static void destroy(void* t);

  std::atomic<const Table*> table_;
};

} // namespace opdispatch
