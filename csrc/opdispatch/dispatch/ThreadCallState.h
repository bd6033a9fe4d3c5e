// ThreadCallState: the one thread-local block a call reads and writes — the
// include/exclude key sets (LocalDispatchKeySet.h), the thread's epoch
// announcement (Reclaimer.h) and its warning handler (core/Warning.h). See Note [The call's thread-local block].
#pragma once

#include <atomic>
#include <cstdint>

namespace opdispatch {

// Note [The call's thread-local block]
// Every call reads this thread's included and excluded key sets and, on
// entry and exit, writes its epoch announcement (Note [Reclaiming retired
// kernels]). Both live in one `__thread` object, defined in libopdispatch and
// reached from code inlined into _C and into users' extensions.
//
// The TLS model. Code outside the defining library reaches a thread-local
// variable by default through the general-dynamic model: a call to
// __tls_get_addr per access (per call, as the compiler cannot hoist it
// across the kernel call). The initial-exec model reaches it with one load of
// its offset from the GOT (resolved once at load time) and one %fs-relative
// access, so that is what this object uses. Initial-exec requires the defining
// library's TLS block to live in the static TLS area, which for a library
// loaded with dlopen (libopdispatch comes in with `import opdispatch`) is
// carved from the small surplus glibc reserves at start-up
// (glibc.rtld.optional_static_tls, 512 bytes by default); when it runs out,
// dlopen fails with "cannot allocate memory in static TLS block". So the
// library's whole TLS segment must stay small: this block is 32 bytes, and
// libopdispatch's other thread-locals (grad mode, the Python TLS snapshot)
// add a few dozen more. Anything sizeable per thread belongs behind a
// pointer or in _C, not here.
//
// One object rather than two: the call then loads one GOT entry (the block's
// offset) instead of two, and touches one cache line of TLS.

/// The raw key-set words (zero = the default sets). PyTorch: c10::impl::PODLocalDispatchKeySet.
struct PODLocalDispatchKeySet {
  uint64_t included_; ///< included set XOR default_included_set (Note [BackendSelect is included by default])
  uint64_t excluded_;
};

/// The value of ThreadCallState::epoch before the thread's first call, when
/// the Reclaimer does not know the thread yet (never a real epoch).
inline constexpr uint64_t kUnregisteredEpoch = ~uint64_t{0};

class WarningHandler;

/// A thread's call state; POD (no TLS initialisation check on access).
struct ThreadCallState {
  /// The thread's included and excluded key sets.
  PODLocalDispatchKeySet keys;
  /// The thread's announcement: 0 when in no call, the epoch read on entry
  /// of its outermost call while in one, kUnregisteredEpoch before its first call.
  std::atomic<uint64_t> epoch;
  /// The thread's warning handler (WarningUtils; null: the base handler).
  /// Here because every Python entry swaps it (Note [C++ warnings reach
  /// Python when the call returns]): beside the epoch, that costs two plain
  /// accesses of a block the entry's CallGuard has reached already.
  WarningHandler* warning_handler;
};
static_assert(sizeof(ThreadCallState) == 32, "the call's TLS block takes static TLS space: keep it small");

extern __thread ThreadCallState tls_call_state __attribute__((tls_model("initial-exec")));

} // namespace opdispatch
