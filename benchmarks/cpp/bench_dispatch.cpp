// C++ -> C++ call overhead: a direct call through a function pointer (the
// floor), a typed unboxed call through the dispatcher, and a boxed call,
// with 1 and 8 arguments, and the boxed calls' stack traffic alone (their
// floor, stackFloor). Prints one JSON object per line (ns per call by the
// thread's CPU clock and by the wall clock: medians over rounds that
// interleave the cases, bench::Rounds).
#include <cstdio>
#include <cstdlib>

#include <opdispatch/library.h>

#include "bench_common.h"

using opdispatch::Tensor;

namespace {

__attribute__((noinline)) Tensor ident1(const Tensor& a) { return a; }
__attribute__((noinline)) Tensor ident8(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d, int64_t i,
                                        int64_t j, double f, bool g) {
  return a;
}

// The boxed rows' floor: what a boxed kernel of ident1/ident8 does to the
// stack (pops the `n` arguments, pushes the first as the result), with no
// dispatcher. The boxed rows minus this row is the dispatcher's share; the
// rest is the stack traffic every boxed caller pays (IValue copies, each
// tensor's reference count incremented and decremented atomically).
__attribute__((noinline)) void stackFloor(opdispatch::Stack* s, size_t n) {
  Tensor r = (*s)[s->size() - n].toTensor();
  opdispatch::drop(*s, n);
  s->emplace_back(std::move(r));
}

} // namespace

OPDISPATCH_LIBRARY(bench_cpp, m) {
  m.def("ident1(Tensor a) -> Tensor");
  m.def("ident8(Tensor a, Tensor b, Tensor c, Tensor d, int i, int j, float f, bool g) -> Tensor");
}
OPDISPATCH_LIBRARY_IMPL(bench_cpp, CPU, m) {
  m.impl("ident1", OPDISPATCH_FN(ident1));
  m.impl("ident8", OPDISPATCH_FN(ident8));
}

int main(int argc, char** argv) {
  int64_t iters = argc > 1 ? std::atoll(argv[1]) : 2000000;
  int rounds = argc > 2 ? std::atoi(argv[2]) : 7;
  auto& d = opdispatch::Dispatcher::singleton();
  Tensor x = opdispatch::empty({3});
  auto op1 = d.findSchemaOrThrow("bench_cpp::ident1", "");
  auto op8 = d.findSchemaOrThrow("bench_cpp::ident8", "");
  auto typed1 = op1.typed<Tensor(const Tensor&)>();
  auto typed8 =
      op8.typed<Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, double, bool)>();
  Tensor (*volatile direct1)(const Tensor&) = &ident1;
  Tensor (*volatile direct8)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, double,
                             bool) = &ident8;
  void (*volatile floor_fn)(opdispatch::Stack*, size_t) = &stackFloor;

  // Boxed calls reuse one stack (cleared per call), as a boxed caller such
  // as an interpreter does; the PyTorch benchmark does the same.
  opdispatch::Stack s;
  bench::Rounds timed;
  for (int round = 0; round < rounds; ++round) {
    timed.time("direct_1", [&] { Tensor r = direct1(x); }, iters);
    timed.time("typed_1", [&] { Tensor r = typed1.call(x); }, iters);
    timed.time(
        "boxed_1",
        [&] {
          s.clear();
          s.emplace_back(x);
          op1.callBoxed(&s);
        },
        iters);
    timed.time(
        "stack_1",
        [&] {
          s.clear();
          s.emplace_back(x);
          floor_fn(&s, 1);
        },
        iters);
    timed.time("direct_8", [&] { Tensor r = direct8(x, x, x, x, 1, 2, 3.0, true); }, iters);
    timed.time("typed_8", [&] { Tensor r = typed8.call(x, x, x, x, 1, 2, 3.0, true); }, iters);
    timed.time(
        "boxed_8",
        [&] {
          s.clear();
          opdispatch::push(s, x, x, x, x, int64_t(1), int64_t(2), 3.0, true);
          op8.callBoxed(&s);
        },
        iters);
    timed.time(
        "stack_8",
        [&] {
          s.clear();
          opdispatch::push(s, x, x, x, x, int64_t(1), int64_t(2), 3.0, true);
          floor_fn(&s, 8);
        },
        iters);
  }
  for (const auto& [name, t] : timed.medians()) {
    std::printf("{\"case\": \"%s\", \"cpu_ns\": %.3f, \"wall_ns\": %.3f}\n", name.c_str(), t.cpu_ns, t.wall_ns);
  }
  return 0;
}
