// Stress: threads calling typed and boxed handles while other threads
// register and deregister kernels, backend fallbacks and whole libraries.
// Each test runs for a bounded time; .ci/sanitizers.sh runs them under
// ThreadSanitizer, where a racy read or a use of a freed kernel is reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <opdispatch/library.h>

using namespace opdispatch;

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kChurnTime = std::chrono::milliseconds(1500);

Tensor cpuTensor(bool requires_grad = false) {
  Tensor t = empty({2}, ScalarType::Float);
  t.set_requires_grad(requires_grad);
  return t;
}

/// Runs `callers` and `registrars` together until the deadline; each body is
/// called repeatedly. Counts the iterations so a test can check both sides ran.
struct Churn {
  std::vector<std::function<void()>> callers;
  std::vector<std::function<void()>> registrars;
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> registrations{0};

  void run() {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (auto& body : callers) {
      threads.emplace_back([&] {
        while (!stop.load(std::memory_order_relaxed)) {
          body();
          calls.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    for (auto& body : registrars) {
      threads.emplace_back([&] {
        while (!stop.load(std::memory_order_relaxed)) {
          body();
          registrations.fetch_add(1, std::memory_order_relaxed);
        }
      });
    }
    std::this_thread::sleep_for(kChurnTime);
    stop.store(true);
    for (auto& t : threads) {
      t.join();
    }
  }
};

int64_t returnsOne(const Tensor&) { return 1; }

void boxedFallbackReturnsFive(const OperatorHandle& op, Stack* stack) {
  stack->erase(stack->end() - static_cast<std::ptrdiff_t>(op.schema().arguments().size()), stack->end());
  stack->emplace_back(int64_t(5));
}

/// Registers and deregisters backend fallbacks at keys plain CPU calls never
/// reach, which rewrites an entry of every operator's table.
void churnFallbacks() {
  for (DispatchKey k : {DispatchKey::XLA, DispatchKey::Meta, DispatchKey::PrivateUse1}) {
    Library lib(Library::IMPL, "_", k, __FILE__, __LINE__);
    lib.fallback(CppFunction::makeFromBoxedFunction<&boxedFallbackReturnsFive>());
  }
}

/// Kernels at keys that do not serve a CPU call of `name`.
void churnOtherKeyKernels(const std::string& ns, const std::string& name) {
  Library xla(Library::IMPL, ns, DispatchKey::XLA, __FILE__, __LINE__);
  xla.impl(name, [](const Tensor&) -> int64_t { return 3; });
  Library meta(Library::IMPL, ns, DispatchKey::Meta, __FILE__, __LINE__);
  meta.impl(name, [](const Tensor&) -> int64_t { return 4; });
  Library autograd(Library::IMPL, ns, DispatchKey::AutogradXLA, __FILE__, __LINE__);
  autograd.impl(name, [](const Tensor&) -> int64_t { return 6; });
}

} // namespace

// Callers of an operator that always has a CPU kernel see a result of the
// old or the new kernel, never a crash, while kernels, fallbacks and whole
// libraries come and go.
TEST(Stress, CallsRacingRegistrationsOfKernelsFallbacksAndLibraries) {
  Library lib(Library::DEF, "stress_a", std::nullopt, __FILE__, __LINE__);
  lib.def("f(Tensor x) -> int");
  lib.impl("f", dispatch(DispatchKey::CPU, &returnsOne));
  auto handle = Dispatcher::singleton().findSchemaOrThrow("stress_a::f", "");
  auto typed = handle.typed<int64_t(const Tensor&)>();
  std::atomic<int64_t> bad{0};
  auto check = [&](int64_t r) {
    if (r != 1 && r != 2) {
      bad.fetch_add(1);
    }
  };

  Churn churn;
  churn.callers.push_back([&] {
    Tensor x = cpuTensor();
    check(typed.call(x));
  });
  churn.callers.push_back([&] {
    Stack s;
    s.emplace_back(cpuTensor());
    handle.callBoxed(&s);
    check(s.at(0).toInt());
  });
  churn.callers.push_back([&] {
    // Through the autograd fallback, which redispatches below autograd.
    Tensor x = cpuTensor(/*requires_grad=*/true);
    check(typed.call(x));
  });
  churn.registrars.push_back([] {
    // A newer CPU kernel shadows the permanent one, then goes.
    Library impl(Library::IMPL, "stress_a", DispatchKey::CPU, __FILE__, __LINE__);
    impl.impl("f", [](const Tensor&) -> int64_t { return 2; });
  });
  churn.registrars.push_back([] { churnOtherKeyKernels("stress_a", "f"); });
  churn.registrars.push_back(&churnFallbacks);
  churn.registrars.push_back([n = 0]() mutable {
    // Whole libraries: define, implement, call typed and boxed, destroy.
    std::string ns = "stress_lib_" + std::to_string(n++ % 4);
    Library def(Library::DEF, ns, std::nullopt, __FILE__, __LINE__);
    def.def("g(Tensor x) -> int");
    Library impl(Library::IMPL, ns, DispatchKey::CPU, __FILE__, __LINE__);
    impl.impl("g", [](const Tensor&) -> int64_t { return 7; });
    auto op = Dispatcher::singleton().findSchemaOrThrow(ns + "::g", "");
    Tensor x = cpuTensor();
    EXPECT_EQ(op.typed<int64_t(const Tensor&)>().call(x), 7);
    Stack s;
    s.emplace_back(x);
    op.callBoxed(&s);
    EXPECT_EQ(s.at(0).toInt(), 7);
  });
  churn.registrars.push_back([n = 0]() mutable {
    // Handles taken and dropped while their libraries come and go: the last
    // handle of an operator without registrations frees its entry.
    std::string ns = "stress_lib_" + std::to_string(n++ % 4);
    if (auto op = Dispatcher::singleton().findOp(OperatorName(ns + "::g", ""))) {
      OperatorHandle copy = *op;
      op.reset();
      (void)copy.hasSchema();
    }
  });
  churn.registrars.push_back([] {
    // A fragment adds an overload to the namespace, then removes it.
    Library frag(Library::FRAGMENT, "stress_a", std::nullopt, __FILE__, __LINE__);
    frag.def("f.extra(Tensor x, int y) -> int");
    frag.impl("f.extra", dispatch(DispatchKey::CPU, [](const Tensor&, int64_t y) -> int64_t { return y; }));
  });
  churn.run();

  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(churn.calls.load(), 0);
  EXPECT_GT(churn.registrations.load(), 0);
  Dispatcher::singleton().checkInvariants();
  EXPECT_EQ(typed.call(cpuTensor()), 1);
}

// Calls that find no kernel raise NotImplementedError naming the operator,
// built from the registrations at the time, while those registrations change
// (issue 9, item 1: the error path read the kernel lists without the lock).
TEST(Stress, RaisingCallsRacingRegistrations) {
  Library lib(Library::DEF, "stress_b", std::nullopt, __FILE__, __LINE__);
  lib.def("g(Tensor x) -> int");
  auto handle = Dispatcher::singleton().findSchemaOrThrow("stress_b::g", "");
  auto typed = handle.typed<int64_t(const Tensor&)>();
  std::atomic<int64_t> raised{0};
  std::atomic<int64_t> bad{0};
  // `call` raises, or returns one of `served` (the kernels and fallbacks that
  // may serve it at the time).
  auto expectMissing = [&](const std::function<int64_t()>& call, std::initializer_list<int64_t> served) {
    try {
      int64_t r = call();
      if (std::find(served.begin(), served.end(), r) == served.end()) {
        bad.fetch_add(1);
      }
    } catch (const NotImplementedError& e) {
      if (std::string(e.what()).find("stress_b::g") == std::string::npos) {
        bad.fetch_add(1);
      }
      raised.fetch_add(1);
    }
  };

  Churn churn;
  churn.callers.push_back([&] {
    Tensor x = cpuTensor();
    expectMissing([&] { return typed.call(x); }, {});
  });
  churn.callers.push_back([&] {
    expectMissing(
        [&] {
          Stack s;
          s.emplace_back(cpuTensor());
          handle.callBoxed(&s);
          return s.at(0).toInt();
        },
        {});
  });
  churn.callers.push_back([&] {
    // XLA: g's XLA kernel (3) or, while it is gone, XLA's backend fallback (5), else missing.
    IncludeDispatchKeyGuard xla(DispatchKey::XLA);
    Tensor x = cpuTensor();
    expectMissing([&] { return typed.call(x); }, {3, 5});
  });
  churn.registrars.push_back([] { churnOtherKeyKernels("stress_b", "g"); });
  churn.registrars.push_back([] {
    Library impl(Library::IMPL, "stress_b", DispatchKey::PrivateUse1, __FILE__, __LINE__);
    impl.impl("g", [](const Tensor&) -> int64_t { return 8; });
  });
  churn.registrars.push_back(&churnFallbacks);
  churn.run();

  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(raised.load(), 0);
  EXPECT_GT(churn.registrations.load(), 0);
  Dispatcher::singleton().checkInvariants();
}

// Calls with different key sets share each table's hint (Note [Dispatch
// table hint]) while new tables replace the old: each call still reaches the
// kernel of its own key set, whichever set a table hinted first.
TEST(Stress, CallsWithDifferentKeySetsRacingNewTables) {
  Library lib(Library::DEF, "stress_c", std::nullopt, __FILE__, __LINE__);
  lib.def("h(Tensor x) -> int");
  lib.impl("h", dispatch(DispatchKey::CPU, &returnsOne));
  lib.impl("h", dispatch(DispatchKey::Meta, [](const Tensor&) -> int64_t { return 2; }));
  auto handle = Dispatcher::singleton().findSchemaOrThrow("stress_c::h", "");
  auto typed = handle.typed<int64_t(const Tensor&)>();
  std::atomic<int64_t> bad{0};
  auto expect = [&](int64_t got, int64_t want) {
    if (got != want) {
      bad.fetch_add(1);
    }
  };

  Churn churn;
  churn.callers.push_back([&] { expect(typed.call(cpuTensor()), 1); });
  churn.callers.push_back([&] {
    IncludeDispatchKeyGuard meta(DispatchKey::Meta);
    expect(typed.call(cpuTensor()), 2);
  });
  churn.callers.push_back([&] {
    Stack s;
    s.emplace_back(cpuTensor(/*requires_grad=*/true));
    handle.callBoxed(&s);
    expect(s.at(0).toInt(), 1);
  });
  churn.registrars.push_back([] {
    // Kernels at keys these calls never reach: each (de)registration publishes a new table.
    Library xla(Library::IMPL, "stress_c", DispatchKey::XLA, __FILE__, __LINE__);
    xla.impl("h", [](const Tensor&) -> int64_t { return 3; });
  });
  churn.run();

  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(churn.calls.load(), 0);
  EXPECT_GT(churn.registrations.load(), 0);
  Dispatcher::singleton().checkInvariants();
}
