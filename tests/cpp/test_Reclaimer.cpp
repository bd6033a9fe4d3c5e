// Reclaimer: retired objects are freed only once no call that could see them
// runs (Note [Reclaiming retired kernels]); idle threads hold nothing up.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <opdispatch/dispatch/Reclaimer.h>

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
    { CallGuard inner; }  // leaving the inner call must not end the outer one
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
    { CallGuard once; }  // registered, then out of any call
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
