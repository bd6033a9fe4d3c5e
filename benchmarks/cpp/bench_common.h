// Timing loop shared by the C++ benchmarks of opdispatch and of PyTorch:
// ns per call of each case, by the thread's CPU clock and by the wall clock,
// the median over rounds that interleave the cases.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
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

/// ns per call of `f` over one timed loop of `iters` calls, by each clock.
template <class F>
Timing timeLoop(F&& f, int64_t iters) {
  const double cpu_start = threadCpuNs();
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < iters; ++i) {
    f();
  }
  const auto end = std::chrono::steady_clock::now();
  return {(threadCpuNs() - cpu_start) / static_cast<double>(iters),
          std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(iters)};
}

/// Timed loops of named cases, one per case per round, the caller running
/// every case in each round: a burst of load on a shared machine then lands
/// in one round of each case, which the median drops, rather than in every
/// round of one case.
class Rounds {
 public:
  /// Times `iters` calls of `f` as one round of case `name`.
  template <class F>
  void time(const char* name, F&& f, int64_t iters) {
    samplesOf(name).push_back(timeLoop(f, iters));
  }
  /// Each case, in the order first timed, with its median ns per call by each clock.
  std::vector<std::pair<std::string, Timing>> medians() const {
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::vector<std::pair<std::string, Timing>> out;
    for (const auto& [name, samples] : cases_) {
      std::vector<double> cpu, wall;
      for (const Timing& t : samples) {
        cpu.push_back(t.cpu_ns);
        wall.push_back(t.wall_ns);
      }
      out.emplace_back(name, Timing{median(cpu), median(wall)});
    }
    return out;
  }

 private:
  std::vector<Timing>& samplesOf(const char* name) {
    for (auto& [n, samples] : cases_) {
      if (n == name) {
        return samples;
      }
    }
    return cases_.emplace_back(name, std::vector<Timing>()).second;
  }
  std::vector<std::pair<std::string, std::vector<Timing>>> cases_;
};

} // namespace bench
