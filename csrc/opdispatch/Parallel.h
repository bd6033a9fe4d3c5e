// ATen's intra-op parallelism API for kernels: parallel_for / parallel_reduce
// over [begin, end) in chunks of at least `grain_size`. opdispatch runs them
// on the calling thread, as ATen does with one intra-op thread (or inside a
// parallel region): one call f(begin, end), with in_parallel_region() true
// during it. A kernel written for ATen's pool is correct here unchanged.
// PyTorch: ATen/Parallel.h, ATen/Parallel-inl.h.
#pragma once

#include <cstdint>

#include <opdispatch/core/Exception.h>

namespace opdispatch {

namespace internal {
/// The number of elements ATen deems worth a task of its own; kernels divide
/// it to pick their grain_size (`GRAIN_SIZE / walk_length`). PyTorch:
/// at::internal::GRAIN_SIZE (ATen/Parallel.h), 32768.
constexpr int64_t GRAIN_SIZE = 32768;

inline thread_local bool in_parallel_region_ = false;

/// Marks the calling thread as inside a parallel region for its lifetime.
class ParallelRegionGuard {
 public:
  ParallelRegionGuard() : previous_(in_parallel_region_) { in_parallel_region_ = true; }
  ~ParallelRegionGuard() { in_parallel_region_ = previous_; }
  ParallelRegionGuard(const ParallelRegionGuard&) = delete;
  ParallelRegionGuard& operator=(const ParallelRegionGuard&) = delete;

 private:
  bool previous_;
};
} // namespace internal

/// The number of intra-op threads: 1 (parallel_for runs on the caller).
inline int get_num_threads() { return 1; }
/// This thread's number in the current parallel region: 0.
inline int get_thread_num() { return 0; }
/// Whether the caller runs inside parallel_for / parallel_reduce.
inline bool in_parallel_region() { return internal::in_parallel_region_; }

/// Calls f(chunk_begin, chunk_end) over chunks covering [begin, end), each of
/// at least `grain_size` elements but perhaps the last; nothing when
/// begin >= end. Here one chunk, the whole range. Throws Error for a negative
/// `grain_size` (ATen asserts it in debug builds).
template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  OPDISPATCH_CHECK(grain_size >= 0, "parallel_for: grain_size must be non-negative, got ", grain_size);
  if (begin >= end) {
    return;
  }
  internal::ParallelRegionGuard region;
  f(begin, end);
}

/// Reduces [begin, end): each chunk's f(chunk_begin, chunk_end, ident), combined
/// with sf(a, b); `ident` when begin >= end. Here one chunk: f(begin, end, ident).
template <class scalar_t, class F, class SF>
inline scalar_t parallel_reduce(int64_t begin, int64_t end, int64_t grain_size, const scalar_t ident, const F& f,
                                [[maybe_unused]] const SF& sf) {
  OPDISPATCH_CHECK(grain_size >= 0, "parallel_reduce: grain_size must be non-negative, got ", grain_size);
  if (begin >= end) {
    return ident;
  }
  internal::ParallelRegionGuard region;
  return f(begin, end, ident);
}

} // namespace opdispatch
