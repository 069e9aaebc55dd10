// sta-pool: build configuration. Every switch the library reads lives here.
//
//   STA_POOL_CHECKS  1: every call verifies the owner thread (and, with the safety
//                    work, misuse); 0: the checks compile away. Default: on unless
//                    NDEBUG is defined.
//   STA_POOL_STATS   1: per-class counters (allocations, frees, live blocks, bytes in
//                    use and its high-water mark) are kept on the fast path.
//                    0 (default): only what can be derived without counters is
//                    reported by stats(); the fast path carries no counter.
//
//   STA_POOL_VALGRIND 1: tell valgrind's memcheck about pool blocks (detail/hooks.hpp).
//                    ASan needs no switch: -fsanitize=address is detected.
//   STA_POOL_NO_HOOKS for tests/hooks_cost only: cut the hook sites out entirely, to
//                    prove that a release build's fast path does not change with them.
//
// All must be the same in every translation unit of a program.
#pragma once

#ifndef STA_POOL_CHECKS
#ifdef NDEBUG
#define STA_POOL_CHECKS 0
#else
#define STA_POOL_CHECKS 1
#endif
#endif

#ifndef STA_POOL_STATS
#define STA_POOL_STATS 0
#endif

#ifndef STA_POOL_NO_HOOKS
#define STA_POOL_NO_HOOKS 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define STA_NOINLINE __attribute__((noinline))
#define STA_FORCE_INLINE inline __attribute__((always_inline))
#define STA_COLD __attribute__((cold, noinline))
#elif defined(_MSC_VER)
#define STA_NOINLINE __declspec(noinline)
#define STA_FORCE_INLINE __forceinline
#define STA_COLD __declspec(noinline)
#else
#define STA_NOINLINE
#define STA_FORCE_INLINE inline
#define STA_COLD
#endif
