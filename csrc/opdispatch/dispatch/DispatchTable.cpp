// DispatchTable: the run-compressed, pointer-published tables of Note [Hot dispatch table].
#include <opdispatch/dispatch/DispatchTable.h>

#include <cstddef>
#include <cstring>
#include <new>

#include <opdispatch/dispatch/KernelFunction.h>
#include <opdispatch/dispatch/Reclaimer.h>

namespace opdispatch {

namespace {
constexpr uint64_t kAllKeys = DispatchKeySet(DispatchKeySet::FULL).raw_repr();

/// The key-set word of table index `index` (0 for index 0, Undefined).
uint64_t keyBit(int index) { return DispatchKeySet(static_cast<DispatchKey>(index)).raw_repr(); }

bool isFallthroughIndex(uint64_t non_fallthrough, int index) {
  return index > 0 && (non_fallthrough & keyBit(index)) == 0;
}

/// What entry() answers for a fallthrough key (tableEntry gives fallthroughs no effects).
KernelRef fallthroughRef() {
  static const KernelRef ref = KernelFunction::makeFallthrough().ref();
  return ref;
}
} // namespace

namespace {
/// What build() reads a table from: `entry(i)` for index i, the same for
/// every non-fallthrough key between two bits of the key-set word `boundaries`.
template <class F>
struct Entries {
  uint64_t boundaries;
  F entry;
  KernelRef operator()(int index) const { return entry(index); }
};
template <class F>
Entries(uint64_t, F) -> Entries<F>;
} // namespace

template <class EntryOf>
DispatchTable::Table* DispatchTable::build(uint64_t non_fallthrough, const EntryOf& entry) {
  // Run starts: index 0 (run 0), and every non-fallthrough index whose entry
  // differs from the last non-fallthrough entry before it (the current run's),
  // as bits of key-set words (later_starts). Between two of the key-set
  // word `entry.boundaries` the non-fallthrough entries are equal, so only
  // the first non-fallthrough key from each boundary (and from the first key)
  // is asked for its entry: a few runs' worth, not every key.
  // Raw storage (only the first n runs are written): no construction of all of them per build.
  alignas(KernelRef) unsigned char storage[sizeof(KernelRef) * kDispatchTableSize];
  KernelRef* runs = reinterpret_cast<KernelRef*>(storage);
  KernelRef last = entry(0);
  new (runs) KernelRef(last);
  int n = 1;
  uint64_t starts = 0;
  for (uint64_t rest = entry.boundaries | 1; rest != 0;) {
    const uint64_t from = rest & (~rest + 1);  // this segment's first key
    rest &= rest - 1;
    const uint64_t below_next = rest == 0 ? ~uint64_t(0) : (rest & (~rest + 1)) - 1;
    const uint64_t keys = non_fallthrough & below_next & ~(from - 1);
    if (keys == 0) {
      continue;
    }
    const int bit = __builtin_ctzll(keys);
    const KernelRef k = entry(bit + 1);  // Note [DispatchKeySet representation]: bit k - 1 is key k
    if (k != last) {
      starts |= uint64_t(1) << bit;
      new (runs + n++) KernelRef(k);
      last = k;
    }
  }
  void* memory = ::operator new(offsetof(Table, runs) + sizeof(KernelRef) * static_cast<size_t>(n));
  Table* t = new (memory) Table{non_fallthrough, kNoHint, starts, {}};
  std::memcpy(static_cast<void*>(t->runs), runs, sizeof(KernelRef) * static_cast<size_t>(n));
  return t;
}

void DispatchTable::destroy(void* t) {
  // Table and KernelRef are trivially destructible.
  ::operator delete(t);
}

DispatchTable::DispatchTable(KernelRef initial, const DispatchTable* copy_of) {
  if (copy_of != nullptr) {
    const Table* from = copy_of->table_.load(std::memory_order_relaxed);
    const size_t size = sizeInBytes(from);
    void* memory = ::operator new(size);
    // The runs as bytes (trivially copyable); the hint is not copied, as a call may be writing it.
    Table* t = new (memory) Table{from->non_fallthrough, kNoHint, from->later_starts, {}};
    std::memcpy(static_cast<void*>(t->runs), from->runs, size - offsetof(Table, runs));
    table_.store(t, std::memory_order_release);
    return;
  }
  table_.store(build(kAllKeys, Entries{0, [&](int) { return initial; }}), std::memory_order_release);
}

DispatchTable::~DispatchTable() { destroy(const_cast<Table*>(table_.load(std::memory_order_relaxed))); }

KernelRef DispatchTable::entry(int index) const {
  CallGuard guard;  // the table may be replaced and retired meanwhile
  const Table* t = table_.load(std::memory_order_acquire);
  if (isFallthroughIndex(t->non_fallthrough, index)) {
    return fallthroughRef();
  }
  return t->runs[runOf(t->later_starts, keyBit(index))];
}

DispatchKeySet DispatchTable::nonFallthroughKeys() const {
  CallGuard guard;
  return DispatchKeySet(DispatchKeySet::RAW, table_.load(std::memory_order_acquire)->non_fallthrough);
}

size_t DispatchTable::numRuns() const { return runCount(table_.load(std::memory_order_relaxed)); }

std::optional<DispatchKeySet> DispatchTable::hintedKeySet() const {
  CallGuard guard;
  const uint64_t hint = __atomic_load_n(&table_.load(std::memory_order_acquire)->hint, __ATOMIC_RELAXED);
  if (hint == kNoHint) {
    return std::nullopt;
  }
  return DispatchKeySet(DispatchKeySet::RAW, hintedKeys(hint));
}

size_t DispatchTable::sizeInBytes(const Table* t) { return offsetof(Table, runs) + sizeof(KernelRef) * runCount(t); }

DispatchTable::Update::Update(DispatchTable& table)
    : table_(table),
      // The writer owns the pointer (registration lock): no guard needed to read it.
      live_(table.table_.load(std::memory_order_relaxed)),
      non_fallthrough_(live_->non_fallthrough) {}

KernelRef DispatchTable::Update::current(int i) const {
  if ((set_ >> i) & 1) {
    return reinterpret_cast<const KernelRef*>(changes_)[i];
  }
  if (isFallthroughIndex(live_->non_fallthrough, i)) {
    return fallthroughRef();
  }
  return live_->runs[runOf(live_->later_starts, keyBit(i))];
}

void DispatchTable::Update::set(int index, KernelRef k) {
  if (index > 0) {
    const uint64_t bit = DispatchKeySet(static_cast<DispatchKey>(index)).raw_repr();
    non_fallthrough_ = k.isFallthrough() ? (non_fallthrough_ & ~bit) : (non_fallthrough_ | bit);
  }
  changed_ = changed_ || current(index) != k;
  new (reinterpret_cast<KernelRef*>(changes_) + index) KernelRef(k);
  set_ |= uint64_t(1) << index;
}

DispatchTable::Table* DispatchTable::Update::merged() const {
  // An entry can differ from the key's before it only where a live run
  // starts, at a key that was set, and at the key after one (where the live
  // runs resume): the boundaries build() reads entries at. (Fallthrough keys
  // are skipped: a key that was a fallthrough and no longer is was set.)
  const uint64_t set_keys = set_ >> 1;  // index i is key-set bit i - 1
  const uint64_t boundaries = live_->later_starts | set_keys | (set_keys << 1);
  return build(non_fallthrough_, Entries{boundaries, [&](int i) { return current(i); }});
}

void DispatchTable::Update::publish() {
  if (!changed_) {
    return;
  }
  table_.table_.store(merged(), std::memory_order_release);
  Reclaimer::singleton().retire(const_cast<Table*>(live_), &DispatchTable::destroy);
  live_ = nullptr;
  changed_ = false;
}

void DispatchTable::Update::publishUnseen() {
  table_.table_.store(merged(), std::memory_order_relaxed);
  destroy(const_cast<Table*>(live_));
  live_ = nullptr;
  changed_ = false;
}

} // namespace opdispatch
