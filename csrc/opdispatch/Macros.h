// Compiler helpers shared by every opdispatch header.
#pragma once

#define OPDISPATCH_LIKELY(x) (__builtin_expect(static_cast<bool>(x), 1))
#define OPDISPATCH_UNLIKELY(x) (__builtin_expect(static_cast<bool>(x), 0))
#define OPDISPATCH_CONCAT_IMPL(a, b) a##b
#define OPDISPATCH_CONCAT(a, b) OPDISPATCH_CONCAT_IMPL(a, b)
#define OPDISPATCH_STRINGIZE_IMPL(x) #x
#define OPDISPATCH_STRINGIZE(x) OPDISPATCH_STRINGIZE_IMPL(x)
#define OPDISPATCH_UID OPDISPATCH_CONCAT(opdispatch_uid_, __COUNTER__)
#define OPDISPATCH_NOINLINE __attribute__((noinline))
#define OPDISPATCH_ALWAYS_INLINE inline __attribute__((always_inline))
/// After a lambda's parameter list: inline it at each call site.
#define OPDISPATCH_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))
