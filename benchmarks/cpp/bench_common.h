// Timing loop shared by the C++ benchmarks of opdispatch and of PyTorch:
// median over rounds of ns per call, each round a timed loop.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace bench {

/// Median ns per call of `f` over `rounds` rounds of `iters` calls.
template <class F>
double nsPerCall(F&& f, int64_t iters, int rounds) {
  std::vector<double> samples;
  for (int r = 0; r < rounds; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < iters; ++i) {
      f();
    }
    auto end = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(iters));
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

} // namespace bench
