// sta-pool: build configuration. Every switch the library reads lives here.
//
//   STA_POOL_CHECKS  1: every call verifies the owner thread (and, with the safety
//                    work, misuse), and an invariant the fast path assumes
//                    (STA_ASSUME) traps when broken; 0: the checks compile away.
//                    Default: on unless NDEBUG is defined.
//   STA_POOL_STATS   1: per-class counters (allocations, frees, live blocks, bytes in
//                    use and its high-water mark) are kept on the fast path.
//                    0 (default): only what can be derived without counters is
//                    reported by stats(); the fast path carries no counter.
//
//   STA_POOL_VALGRIND 1: tell valgrind's memcheck about pool blocks (detail/diag/tool_hooks.hpp):
//                    client requests of a few instructions each, which do nothing
//                    outside valgrind. Default: on in checked builds (STA_POOL_CHECKS=1)
//                    where <valgrind/memcheck.h> is found, except under ASan; off
//                    otherwise. -DSTA_POOL_VALGRIND=0 opts a checked build out,
//                    -DSTA_POOL_VALGRIND=1 opts a release build in.
//   STA_POOL_ASAN    not a switch: 1 when -fsanitize=address is detected. ASan needs
//                    nothing else. It turns the valgrind default off because valgrind
//                    cannot run an ASan program: the requests would be dead code.
//   STA_POOL_SPANS   1: sta::memory_pool (and everything over it: the allocator, the
//                    containers, the C API) uses the span layout; 0: the seed's shared
//                    cursor. Default: 1 (chosen by measurement: docs/dispatch.md).
//   STA_POOL_QUARTER_CLASSES 1: the span layout under the inline-branch dispatch (the
//                    default sta::memory_pool, the C API, the drop-in malloc) uses four
//                    size classes per power of two (detail/pool/size_class.hpp); 0: the
//                    seed's powers of two there too. The seed's shared cursor and its
//                    self-rewriting tables always use powers of two. Default: 1 (chosen by
//                    measurement: docs/size_classes.md).
//   STA_POOL_HUGE_PAGES which 2 MiB segments of the span layout the OS is asked to back
//                    with transparent huge pages (Linux MADV_HUGEPAGE): 1 every one, 0
//                    none, 2 (the default) where they pay — from a pool's ninth
//                    segment, and earlier once its blocks in use fill half of the
//                    segments it holds (huge_pages_dense, docs/design.md "Decisions").
//                    A pool can also choose at run time (set_huge_pages,
//                    set_huge_pages_from, set_huge_pages_where_dense).
//   STA_POOL_PREFAULT 1: the span layout has the OS fill in a segment's pages when it
//                    maps it (Linux MADV_POPULATE_WRITE, else MAP_POPULATE-like
//                    touching), so first use takes no page faults. Default 0;
//                    set_prefault at run time.
//   STA_POOL_PURGE_DELAY_MS  how long a clean span of the span layout keeps its pages
//                    before they go back to the OS (layout/span_life.hpp); -1: never,
//                    the seed's keep-everything trade. A pool can also choose at run
//                    time (memory_pool::set_purge_delay); the drop-in malloc reads
//                    STA_MALLOC_PURGE_DELAY_MS. Default: 500 (docs/design.md, "Memory
//                    goes back", says why).
//   STA_POOL_INITIAL_EXEC 1: per-thread pools reach the thread's pool pointer with the
//                    initial-exec TLS model even in a shared library (-fPIC), one
//                    %fs-relative load instead of a __tls_get_addr call; a library
//                    that is dlopen'ed then takes 8 bytes of glibc's static TLS
//                    surplus per pool family. Default 0: the compiler's model (an
//                    executable gets local-exec, a -fPIC library general-dynamic).
//   STA_POOL_BIG_FROM_OS 1: requests above page_bytes / 2 (the tier above the private
//                    heap, detail/pool/next_tiers.hpp) are mapped from the OS one by one
//                    and unmapped when freed, instead of going to std::malloc. The
//                    drop-in malloc (src/malloc) sets it: there, std::malloc is itself.
//                    Default 0.
//   STA_POOL_NO_HOOKS for tests/hooks_cost only: cut the hook sites out entirely, to
//                    prove that a release build's fast path does not change with them.
//   STA_POOL_COMPILED 1: the library's compiled part (src/pool, the static library
//                    sta_pool_compiled, which the CMake target sta::pool links and sets
//                    this for) holds the code that is the same for every pool: the span
//                    layout's slow paths for each class set and thread mode, a per-thread
//                    family's adoption, parking and heap tier over them, the default
//                    pool's (sta::memory_pool's) code off its fast paths, and the
//                    messages of refused arguments. A unit then parses no <string> or
//                    <stdexcept> for them and instantiates none of it. 0 (the default
//                    without CMake): every header is self-contained, nothing to link.
//                    A unit whose switches above differ from the compiled part's
//                    instantiates its own slow paths (config_key below), so a program
//                    may mix them. STA_POOL_COMPILED_ASAN and STA_POOL_COMPILED_VALGRIND,
//                    set by the same target, say how the compiled part was built.
//   STA_POOL_PROBES 1: USDT probes on the slow paths (os/probes.hpp) for perf probe,
//                    bpftrace and systemtap: a segment mapped or unmapped, a span
//                    purged, a refill, a refused free, the memory limit reached. Each
//                    is one nop where it sits and a note in the binary; nothing on a
//                    fast path. Default: 1 on Linux where <sys/sdt.h> is there
//                    (Debian's systemtap-sdt-dev), else 0.
//
// All but STA_POOL_COMPILED must be the same in every translation unit of a program,
// except in the units of the compiled part's own instantiations (config_key).
#pragma once

#ifndef STA_POOL_CHECKS
#ifdef NDEBUG
#define STA_POOL_CHECKS 0
#else
#define STA_POOL_CHECKS 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define STA_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STA_POOL_ASAN 1
#endif
#endif
#ifndef STA_POOL_ASAN
#define STA_POOL_ASAN 0
#endif

#ifndef STA_POOL_SPANS
#define STA_POOL_SPANS 1
#endif
#ifndef STA_POOL_QUARTER_CLASSES
#define STA_POOL_QUARTER_CLASSES 1
#endif
#ifndef STA_POOL_HUGE_PAGES
#define STA_POOL_HUGE_PAGES 2
#endif
#ifndef STA_POOL_PREFAULT
#define STA_POOL_PREFAULT 0
#endif

#ifndef STA_POOL_VALGRIND
#if STA_POOL_CHECKS && !STA_POOL_ASAN && __has_include(<valgrind/memcheck.h>)
#define STA_POOL_VALGRIND 1
#else
#define STA_POOL_VALGRIND 0
#endif
#endif

#ifndef STA_POOL_PROBES
#if defined(__linux__) && __has_include(<sys/sdt.h>)
#define STA_POOL_PROBES 1
#else
#define STA_POOL_PROBES 0
#endif
#endif

#ifndef STA_POOL_STATS
#define STA_POOL_STATS 0
#endif

#ifndef STA_POOL_NO_HOOKS
#define STA_POOL_NO_HOOKS 0
#endif

#ifndef STA_POOL_BIG_FROM_OS
#define STA_POOL_BIG_FROM_OS 0
#endif

#ifndef STA_POOL_PURGE_DELAY_MS
#define STA_POOL_PURGE_DELAY_MS 500
#endif

#ifndef STA_POOL_INITIAL_EXEC
#define STA_POOL_INITIAL_EXEC 0
#endif
#ifndef STA_POOL_COMPILED
#define STA_POOL_COMPILED 0
#endif
// STA_POOL_COMPILING: defined by the compiled part's own units (src/pool).
// STA_POOL_BODIES 1: this unit gives the non-template bodies that the headers only declare
// when STA_POOL_COMPILED is 1 — a header-only unit, and the one unit of the compiled part
// that defines it first (src/pool/bad_argument.cpp).
#ifndef STA_POOL_BODIES
#if !STA_POOL_COMPILED
#define STA_POOL_BODIES 1
#else
#define STA_POOL_BODIES 0
#endif
#endif
// The linkage of a body that lives in the compiled part: inline in a header-only unit.
#if STA_POOL_COMPILED
#define STA_POOL_OUT_OF_LINE
#else
#define STA_POOL_OUT_OF_LINE inline
#endif

#if STA_POOL_INITIAL_EXEC && (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32)
#define STA_TLS_MODEL __attribute__((tls_model("initial-exec")))
#else
#define STA_TLS_MODEL
#endif

// STA_ASSUME(c): c holds (an invariant the compiler cannot see); no code is emitted,
// except in checked builds (STA_POOL_CHECKS), where a broken invariant traps at once.
#if defined(__GNUC__) || defined(__clang__)
#define STA_NOINLINE __attribute__((noinline))
// Forced inlining where the compiler optimizes; a build without optimization (-O0: the
// dev and asan presets) gets plain inline functions, each compiled once instead of copied
// into every call site: the same code, a third less of it to compile (issue 40).
#if defined(__OPTIMIZE__)
#define STA_FORCE_INLINE inline __attribute__((always_inline))
#else
#define STA_FORCE_INLINE inline
#endif
#define STA_COLD __attribute__((cold, noinline))
// A call the caller may make as a tail call (a jump) though it never returns: g++ would
// find that out and emit a call, which costs the caller a stack frame on its fast path.
#if defined(__clang__)
#define STA_TAIL_CALLED __attribute__((noinline))
#else
#define STA_TAIL_CALLED __attribute__((noipa))
#endif
// A reader of another thread's data that it means to read while that thread writes it
// (process_stats: a snapshot): ThreadSanitizer does not watch its reads.
#define STA_RACY_READER __attribute__((no_sanitize("thread")))
#if STA_POOL_CHECKS
#define STA_ASSUME_BROKEN() __builtin_trap()
#else
#define STA_ASSUME_BROKEN() __builtin_unreachable()
#endif
#define STA_ASSUME(c)                                                                              \
    do {                                                                                           \
        if (!(c))                                                                                  \
            STA_ASSUME_BROKEN();                                                                   \
    } while (false)
#elif defined(_MSC_VER)
#define STA_NOINLINE __declspec(noinline)
#define STA_FORCE_INLINE __forceinline
#define STA_COLD __declspec(noinline)
#define STA_TAIL_CALLED __declspec(noinline)
#define STA_RACY_READER
#define STA_ASSUME(c) __assume(c)
#else
#define STA_NOINLINE
#define STA_FORCE_INLINE inline
#define STA_COLD
#define STA_TAIL_CALLED
#define STA_RACY_READER
#define STA_ASSUME(c) ((void)0)
#endif

namespace sta::detail {

/// The switches that change the code of a slow path, in one number.
constexpr unsigned long long config_key_of(bool checks, bool stats, bool valgrind, bool asan,
                                           bool no_hooks, bool big_from_os, bool initial_exec,
                                           bool prefault, unsigned huge_pages,
                                           long long purge_delay_ms) noexcept {
    return (checks ? 1ull : 0ull) | (stats ? 2ull : 0ull) | (valgrind ? 4ull : 0ull) |
           (asan ? 8ull : 0ull) | (no_hooks ? 16ull : 0ull) | (big_from_os ? 32ull : 0ull) |
           (initial_exec ? 64ull : 0ull) | (prefault ? 128ull : 0ull) |
           (static_cast<unsigned long long>(huge_pages) & 3ull) << 8 |
           (static_cast<unsigned long long>(purge_delay_ms + 1) & 0xffffffffull) << 16;
}

/// This unit's switches: the templates the compiled part instantiates take it as a
/// parameter, so a unit built with other switches names instantiations of its own rather
/// than the compiled part's (no two bodies under one name).
inline constexpr unsigned long long config_key =
    config_key_of(STA_POOL_CHECKS, STA_POOL_STATS, STA_POOL_VALGRIND, STA_POOL_ASAN,
                  STA_POOL_NO_HOOKS, STA_POOL_BIG_FROM_OS, STA_POOL_INITIAL_EXEC, STA_POOL_PREFAULT,
                  STA_POOL_HUGE_PAGES, STA_POOL_PURGE_DELAY_MS);

/// The two keys the compiled part instantiates (src/pool): every switch at its default,
/// with checks off (a release build) and on (a checked build, with valgrind's requests
/// where its header is found), under the compiled part's ASan. The CMake target tells its
/// users how the part was built (STA_POOL_COMPILED_ASAN, STA_POOL_COMPILED_VALGRIND: was
/// it under ASan, did it find valgrind's header), so that a unit built otherwise names
/// instantiations of its own; without them, this unit's answers stand in.
#ifndef STA_POOL_COMPILED_ASAN
#define STA_POOL_COMPILED_ASAN STA_POOL_ASAN
#endif
#ifndef STA_POOL_COMPILED_VALGRIND
#if __has_include(<valgrind/memcheck.h>)
#define STA_POOL_COMPILED_VALGRIND 1
#else
#define STA_POOL_COMPILED_VALGRIND 0
#endif
#endif
inline constexpr unsigned long long compiled_release_key =
    config_key_of(false, false, false, STA_POOL_COMPILED_ASAN, false, false, false, false, 2, 500);
inline constexpr unsigned long long compiled_checked_key =
    config_key_of(true, false, STA_POOL_COMPILED_VALGRIND && !STA_POOL_COMPILED_ASAN,
                  STA_POOL_COMPILED_ASAN, false, false, false, false, 2, 500);

} // namespace sta::detail
