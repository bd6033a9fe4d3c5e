// Reclaimer: retired objects are freed only once no call that could see them
// runs (Note [Reclaiming retired kernels]); idle threads hold nothing up. The
// Dispatcher frees deregistered kernels and dead operator entries through it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <opdispatch/dispatch/Reclaimer.h>
#include <opdispatch/library.h>

using namespace opdispatch;

namespace {

std::atomic<int> gFreed{0};

struct Tracked {
  static constexpr uint64_t kAlive = 0x5eed5eed5eed5eedULL;
  uint64_t magic = kAlive;
  ~Tracked() {
    magic = 0;
    gFreed.fetch_add(1);
  }
};

/// Runs `f` on a thread inside a CallGuard that lasts until `release` is set.
struct ThreadInCall {
  std::atomic<bool> entered{false};
  std::atomic<bool> release{false};
  std::thread thread;
  ThreadInCall() {
    thread = std::thread([this] {
      CallGuard guard;
      entered.store(true);
      while (!release.load()) {
        std::this_thread::yield();
      }
    });
    while (!entered.load()) {
      std::this_thread::yield();
    }
  }
  void finish() {
    release.store(true);
    thread.join();
  }
};

/// Frees everything pending that no call holds (retire may have reclaimed some already).
void drain() {
  while (Reclaimer::singleton().reclaim() > 0) {
  }
}

} // namespace

TEST(Reclaimer, RetiredObjectWaitsForACallThatStartedBefore) {
  drain();
  gFreed = 0;
  ThreadInCall caller;
  Reclaimer::singleton().retire(new Tracked());
  Reclaimer::singleton().reclaim();
  EXPECT_EQ(gFreed.load(), 0);
  caller.finish();
  Reclaimer::singleton().reclaim();
  EXPECT_EQ(gFreed.load(), 1);
}

TEST(Reclaimer, CallThatStartedAfterTheRetirementHoldsNothingUp) {
  drain();
  gFreed = 0;
  ThreadInCall before;
  Reclaimer::singleton().retire(new Tracked());
  Reclaimer::singleton().reclaim();  // `before` holds it; the epoch moves on
  EXPECT_EQ(gFreed.load(), 0);
  ThreadInCall after;  // announces the new epoch: it cannot have seen the object
  before.finish();
  Reclaimer::singleton().reclaim();
  EXPECT_EQ(gFreed.load(), 1);
  after.finish();
}

TEST(Reclaimer, NestedGuardKeepsTheOutermostAnnouncement) {
  drain();
  gFreed = 0;
  {
    CallGuard outer;
    {
      CallGuard inner;
    }  // leaving the inner call must not end the outer one
    Reclaimer::singleton().retire(new Tracked());
    Reclaimer::singleton().reclaim();
    EXPECT_EQ(gFreed.load(), 0);
  }
  Reclaimer::singleton().reclaim();
  EXPECT_EQ(gFreed.load(), 1);
}

TEST(Reclaimer, IdleAndExitedThreadsHoldNothingUp) {
  drain();
  gFreed = 0;
  std::atomic<bool> stop{false};
  std::thread idle([&] {
    {
      CallGuard once;
    }  // registered, then out of any call
    while (!stop.load()) {
      std::this_thread::yield();
    }
  });
  std::thread exited([] { CallGuard once; });
  exited.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Reclaimer::singleton().retire(new Tracked());
  Reclaimer::singleton().reclaim();
  EXPECT_EQ(gFreed.load(), 1);
  stop.store(true);
  idle.join();
}

// Readers follow a pointer that a writer keeps replacing and retiring: a
// reader never sees a freed object (ASan and TSan report it if one does),
// and everything retired is freed in the end.
TEST(Reclaimer, ReadersRacingReplacementNeverSeeAFreedObject) {
  drain();
  gFreed = 0;
  std::atomic<Tracked*> current{new Tracked()};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> bad{0};
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        CallGuard guard;
        const Tracked* p = current.load(std::memory_order_acquire);
        for (int spin = 0; spin < 50; ++spin) {
          if (p->magic != Tracked::kAlive) {
            bad.fetch_add(1);
          }
        }
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  int retired = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(700);
  while (std::chrono::steady_clock::now() < deadline) {
    Tracked* old = current.exchange(new Tracked(), std::memory_order_acq_rel);
    Reclaimer::singleton().retire(old);
    Reclaimer::singleton().reclaimIfDue();
    ++retired;
  }
  stop.store(true);
  for (auto& r : readers) {
    r.join();
  }
  Reclaimer::singleton().retire(current.load());
  ++retired;
  drain();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(gFreed.load(), retired);
  EXPECT_EQ(Reclaimer::singleton().pending(), 0u);
}

// --- the Dispatcher's use of it ------------------------------------------------

namespace {
Tensor oneFloat() { return empty({1}, ScalarType::Float); }
int64_t callBoxedInt(const OperatorHandle& op, const Tensor& x) {
  Stack s;
  s.emplace_back(x);
  op.callBoxed(&s);
  return s.at(0).toInt();
}
} // namespace

TEST(Reclamation, DeregisteredKernelIsFreedOnceNoCallRuns) {
  auto token = std::make_shared<int>(0);  // held by the kernel's functor only
  Library lib(Library::DEF, "reclaim_a", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  {
    Library impl(Library::IMPL, "reclaim_a", DispatchKey::CPU, __FILE__, __LINE__);
    impl.impl("f", [token](const Tensor&) -> int64_t { return 1; });
    EXPECT_EQ(token.use_count(), 2);
    EXPECT_EQ(callBoxedInt(Dispatcher::singleton().findSchemaOrThrow("reclaim_a::f", ""), oneFloat()), 1);
    ThreadInCall caller;  // a call running while the kernel goes
    impl.reset();
    drain();
    EXPECT_EQ(token.use_count(), 2);
    caller.finish();
  }
  drain();
  EXPECT_EQ(token.use_count(), 1);
}

TEST(Reclamation, DeadEntryLeavesTheIndexesAndAKeptHandleStaysUsable) {
  Dispatcher& d = Dispatcher::singleton();
  Tensor x = oneFloat();
  std::optional<OperatorHandle> kept;
  {
    Library lib(Library::DEF, "reclaim_b", std::nullopt, __FILE__, __LINE__);
    lib.def("f(Tensor x) -> int");
    lib.def("f.two(Tensor x, int y) -> int");
    lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 1; }));
    kept = d.findSchemaOrThrow("reclaim_b::f", "");
    EXPECT_EQ(d.findOverloadNames("reclaim_b::f"), (std::vector<std::string>{"", "two"}));
  }
  // f.two is gone; f is kept by `kept` alone: unlisted, not callable.
  EXPECT_FALSE(d.findOp(OperatorName("reclaim_b::f", "")).has_value());
  EXPECT_TRUE(d.findOverloadNames("reclaim_b::f").empty());
  EXPECT_THROW(callBoxedInt(*kept, x), Error);
  {
    // Defined again: the kept handle finds the new definition (same entry).
    Library lib(Library::DEF, "reclaim_b", std::nullopt, __FILE__, __LINE__);
    lib.def("f(Tensor x) -> int");
    lib.impl("f", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 2; }));
    EXPECT_EQ(callBoxedInt(*kept, x), 2);
    EXPECT_TRUE(d.findSchemaOrThrow("reclaim_b::f", "") == *kept);
  }
  drain();
  const size_t before = Reclaimer::singleton().pending();
  kept.reset();  // the last reference: the entry goes to the Reclaimer
  EXPECT_EQ(Reclaimer::singleton().pending(), before + 1);
  drain();
  EXPECT_EQ(Reclaimer::singleton().pending(), 0u);
  {
    // A new entry under the same name, found by every index.
    Library lib(Library::DEF, "reclaim_b", std::nullopt, __FILE__, __LINE__);
    lib.def("f.three(Tensor x) -> int");
    lib.impl("f.three", dispatch(DispatchKey::CPU, [](const Tensor&) -> int64_t { return 3; }));
    EXPECT_EQ(d.findOverloadNames("reclaim_b::f"), (std::vector<std::string>{"three"}));
    EXPECT_EQ(callBoxedInt(d.findSchemaOrThrow("reclaim_b::f", "three"), x), 3);
    d.checkInvariants();
  }
}

TEST(Reclamation, SameNameEntriesLeaveTheirChainInAnyOrder) {
  // Every overload of a name is indexed under it in creation order; removing
  // the first (whose name the index's key views), a middle or the last one
  // keeps the others findable, and the entries freed meanwhile are not read.
  Dispatcher& d = Dispatcher::singleton();
  auto a = std::make_unique<Library>(Library::DEF, "reclaim_c", std::nullopt, __FILE__, __LINE__);
  a->def("f(Tensor x) -> int");
  auto b = std::make_unique<Library>(Library::FRAGMENT, "reclaim_c", std::nullopt, __FILE__, __LINE__);
  b->def("f.two(Tensor x) -> int");
  auto c = std::make_unique<Library>(Library::FRAGMENT, "reclaim_c", std::nullopt, __FILE__, __LINE__);
  c->def("f.three(Tensor x) -> int");
  EXPECT_EQ(d.findOverloadNames("reclaim_c::f"), (std::vector<std::string>{"", "two", "three"}));
  b.reset();
  drain();
  EXPECT_EQ(d.findOverloadNames("reclaim_c::f"), (std::vector<std::string>{"", "three"}));
  a.reset();
  drain();
  EXPECT_EQ(d.findOverloadNames("reclaim_c::f"), (std::vector<std::string>{"three"}));
  EXPECT_NO_THROW(d.findSchemaOrThrow("reclaim_c::f", "three"));
  {
    Library later(Library::FRAGMENT, "reclaim_c", std::nullopt, __FILE__, __LINE__);
    later.def("f.four(Tensor x) -> int");
    EXPECT_EQ(d.findOverloadNames("reclaim_c::f"), (std::vector<std::string>{"three", "four"}));
    d.checkInvariants();
  }
  drain();
  EXPECT_EQ(d.findOverloadNames("reclaim_c::f"), (std::vector<std::string>{"three"}));
  c.reset();
  drain();
  EXPECT_TRUE(d.findOverloadNames("reclaim_c::f").empty());
}
