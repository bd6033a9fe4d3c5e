// Timing loop shared by the C++ benchmarks of opdispatch and of PyTorch:
// median over rounds of ns per call, each round a timed loop, by the
// thread's CPU clock and by the wall clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <vector>

namespace bench {

/// ns per call, by two clocks.
struct Timing {
  /// By the calling thread's CPU clock: what the rows' targets use. On a
  /// shared machine the wall clock also counts the time other processes
  /// held the core; the thread's CPU time does not.
  double cpu_ns;
  double wall_ns;
};

inline double threadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

/// Median ns per call of `f` over `rounds` rounds of `iters` calls, by each clock.
template <class F>
Timing nsPerCall(F&& f, int64_t iters, int rounds) {
  std::vector<double> cpu, wall;
  for (int r = 0; r < rounds; ++r) {
    const double cpu_start = threadCpuNs();
    const auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < iters; ++i) {
      f();
    }
    const auto end = std::chrono::steady_clock::now();
    cpu.push_back((threadCpuNs() - cpu_start) / static_cast<double>(iters));
    wall.push_back(std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(iters));
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return {median(cpu), median(wall)};
}

} // namespace bench
