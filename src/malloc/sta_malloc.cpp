// libsta_malloc.so: the C library's allocation functions and every form of operator
// new / delete, on per-thread pools of the span layout (detail/c_api/malloc_heap.hpp has the
// semantics). Use it unchanged with LD_PRELOAD=libsta_malloc.so, or link it.
//
// Built (src/malloc/CMakeLists.txt) with STA_POOL_CHECKS=0, STA_POOL_BIG_FROM_OS=1 (the
// tier above the private heap maps from the OS: std::malloc is this file) and
// STA_POOL_INITIAL_EXEC=1 (one %fs-relative load reaches the thread's pool), hidden
// visibility for everything but the functions below, and no builtin knowledge of
// malloc (g++ would turn malloc + memset into a call to calloc, which is this file).
//
// The pool family has a tag of internal linkage: a program that also uses
// sta::memory_pool from the headers has its own pools, never these.
//
// No C++ runtime is linked (src/malloc/CMakeLists.txt): a C program that preloads the
// library does not load libstdc++ (0.8 MiB of resident pages). What operator new needs
// of the runtime — the new-handler, throwing std::bad_alloc, catching it in the nothrow
// forms — is referenced weakly below and bound to the program's own libstdc++, which a
// program that calls operator new has loaded. Without it (a C++ plugin dlopen'ed later,
// with its runtime local to it), operator new that finds no memory aborts with a message.
#include "sta/detail/c_api/malloc_heap.hpp"
#include "sta/memory_pool.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

// Every reference this file makes to the C++ runtime, weak: 0 when no runtime is loaded.
// (The library links with -z defs: a strong one added later fails the build.)
asm(".weak __cxa_allocate_exception\n"
    ".weak __cxa_begin_catch\n"
    ".weak __cxa_end_catch\n"
    ".weak __gxx_personality_v0\n"
    ".weak _ZTISt9bad_alloc\n"
    ".weak _ZTVSt9bad_alloc\n"
    ".weak _ZNSt9bad_allocD1Ev\n"
    ".weak _ZSt9terminatev\n"); // clang: __clang_call_terminate
// The two whose absence the code tests, weak to the compiler too:
namespace std {
new_handler get_new_handler() noexcept __attribute__((weak));
}
extern "C" __attribute__((weak)) void __cxa_throw(void*, void*, void (*)(void*));

namespace {

struct malloc_family {
    static constexpr bool freed_marks = true; // layout/freed_mark.hpp: free's cache
};
using pool = sta::basic_memory_pool<sta::dispatch::default_policy, malloc_family,
                                    sta::layout::spans, sta::threads::per_thread>;
using heap = sta::detail::malloc_heap<pool>;
using home = pool::engine::home;

static_assert(STA_POOL_BIG_FROM_OS, "libsta_malloc must not call the C library's malloc");

// fork() in a threaded program: no other thread holds the family's lock in the child.
void before_fork() noexcept {
    home::before_fork();
}
void after_fork() noexcept {
    home::after_fork();
}
/// One line on stderr, formatted without allocating (write(2), not stdio: at exit stdio
/// may be torn down already), cut at 320 bytes.
__attribute__((format(printf, 1, 2))) void say(const char* format, ...) noexcept {
    char line[320];
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (n > 0)
        (void)!::write(2, line, static_cast<std::size_t>(n) < sizeof line ? n : sizeof line - 1);
}
bool option_on(const char* name) noexcept {
    const char* const value = std::getenv(name);
    return value != nullptr && *value != '\0' && *value != '0';
}

/// At load: the fork handlers, and the options of docs/malloc.md. (Blocks allocated
/// before this runs — the C++ runtime's, the dynamic linker's — are served already;
/// the options apply to segments mapped from here on.)
__attribute__((constructor)) void at_load() {
    ::pthread_atfork(&before_fork, &after_fork, &after_fork);
    if (const char* const checks = std::getenv("STA_MALLOC_CHECKS");
        checks != nullptr && std::strcmp(checks, "0") == 0)
        sta::detail::c_release_checks = false;
    // STA_MALLOC_HUGE_PAGES unset: the pools' default, huge pages where they pay
    // (set_huge_pages_where_dense, docs/malloc.md "Huge pages").
    if (const char* const huge = std::getenv("STA_MALLOC_HUGE_PAGES");
        huge != nullptr && *huge != '\0')
        pool::set_huge_pages(option_on("STA_MALLOC_HUGE_PAGES"));
    if (option_on("STA_MALLOC_PREFAULT"))
        pool::set_prefault(true);
    if (const char* const ms = std::getenv("STA_MALLOC_PURGE_DELAY_MS")) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(ms, &end, 10);
        if (std::strcmp(ms, "never") == 0)
            pool::set_purge_delay(pool::purge_never);
        else if (end != ms && *end == '\0' && value < pool::purge_never)
            pool::set_purge_delay(static_cast<std::uint32_t>(value));
        else
            say("sta_malloc: STA_MALLOC_PURGE_DELAY_MS=%.60s is not a number of milliseconds "
                "or \"never\"; the default stays\n",
                ms);
    }
    // The memory limit (os/memory_account.hpp): STA_MALLOC_LIMIT_MIB (0: none), else
    // the room the control group's limit leaves the process now.
    if (const char* const mib = std::getenv("STA_MALLOC_LIMIT_MIB")) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(mib, &end, 10);
        if (end != mib && *end == '\0' && value <= (SIZE_MAX >> 20))
            sta::detail::os_memory.limit.store(static_cast<std::size_t>(value) << 20,
                                               sta::detail::memory_order_relaxed);
        else
            say("sta_malloc: STA_MALLOC_LIMIT_MIB=%.60s is not a number of MiB; no limit\n", mib);
    } else {
        sta::detail::os_memory.limit.store(sta::detail::os_cgroup_memory_room(),
                                           sta::detail::memory_order_relaxed);
    }
    if (const char* const mib = std::getenv("STA_MALLOC_RETAIN_MIB")) {
        char* end = nullptr;
        const unsigned long long value = std::strtoull(mib, &end, 10);
        if (end != mib && *end == '\0' && value <= (SIZE_MAX >> 20))
            sta::detail::retained_limit_bytes.store(static_cast<std::size_t>(value) << 20,
                                                    sta::detail::memory_order_relaxed);
        else
            say("sta_malloc: STA_MALLOC_RETAIN_MIB=%.60s is not a number of MiB; the default "
                "stays\n",
                mib);
    }
}

/// STA_MALLOC_STATS=1: one line on stderr at exit — the pools made and parked, the
/// segments mapped, and the exiting thread's pool: bytes in use, mapped, resident and
/// given back to the OS.
__attribute__((destructor)) void print_stats_at_exit() {
    if (!option_on("STA_MALLOC_STATS"))
        return;
    const auto pools = pool::thread_pools();
    const sta::pool_stats mine = pool::stats();
    say("sta_malloc: %zu pools made, %zu parked, %zu segments of 2 MiB mapped; the exiting "
        "thread's pool: %zu bytes in use of %zu reserved, %zu mapped, %zu resident, %zu given "
        "back to the OS (%zu segments unmapped)\n",
        pools.pools_made, pools.pools_parked, pools.segments_mapped, mine.bytes_in_use,
        mine.bytes_reserved, mine.bytes_mapped, mine.bytes_resident, mine.bytes_given_back,
        mine.segments_unmapped);
}

/// The program's new-handler (none without a C++ runtime).
std::new_handler new_handler() noexcept {
    return &std::get_new_handler != nullptr ? std::get_new_handler() : nullptr;
}

/// operator new found no memory and no handler: throw std::bad_alloc, or abort where no
/// C++ runtime is loaded to throw it with.
[[noreturn]] void throw_bad_alloc() {
    if (&__cxa_throw == nullptr) {
        say("sta_malloc: operator new: out of memory, and no C++ runtime loaded to throw "
            "std::bad_alloc with\n");
        std::abort();
    }
    throw std::bad_alloc();
}

/// operator new after its first try found no memory: the new-handler loop of
/// [new.delete.single], each handler's run followed by another try; throws std::bad_alloc
/// when there is no handler. Out of line, so that operator new's fast path is malloc's:
/// no register saved, no frame.
template <class Alloc>
[[gnu::noinline]] void* new_handler_loop(Alloc alloc) {
    for (;;) {
        std::new_handler handler = new_handler();
        if (handler == nullptr)
            throw_bad_alloc();
        handler();
        if (void* p = alloc())
            return p;
    }
}
/// operator new: malloc, then the new-handler loop.
template <class Alloc>
STA_FORCE_INLINE void* new_or_throw(Alloc alloc) {
    if (void* p = alloc()) [[likely]]
        return p;
    return new_handler_loop(alloc);
}
STA_FORCE_INLINE void* new_or_throw(std::size_t bytes) {
    return new_or_throw([=] { return heap::malloc(bytes); });
}
void* new_aligned_or_throw(std::size_t bytes, std::align_val_t alignment) {
    return new_or_throw([=] { return heap::memalign(static_cast<std::size_t>(alignment), bytes); });
}
template <class F>
void* nothrow(F f) noexcept {
    try {
        return f();
    } catch (...) {
        return nullptr;
    }
}

} // namespace

#define STA_EXPORT extern "C" __attribute__((visibility("default")))

STA_EXPORT void* malloc(std::size_t bytes) {
    return heap::malloc(bytes);
}
STA_EXPORT void free(void* p) {
    heap::free(p);
}
STA_EXPORT void* calloc(std::size_t count, std::size_t size) {
    return heap::calloc(count, size);
}
STA_EXPORT void* realloc(void* p, std::size_t bytes) {
    return heap::realloc(p, bytes);
}
STA_EXPORT void* reallocarray(void* p, std::size_t count, std::size_t size) {
    return heap::reallocarray(p, count, size);
}
STA_EXPORT int posix_memalign(void** out, std::size_t alignment, std::size_t bytes) {
    return heap::posix_memalign(out, alignment, bytes);
}
STA_EXPORT void* aligned_alloc(std::size_t alignment, std::size_t bytes) {
    return heap::memalign(alignment, bytes);
}
STA_EXPORT void* memalign(std::size_t alignment, std::size_t bytes) {
    return heap::memalign(alignment, bytes);
}
STA_EXPORT void* valloc(std::size_t bytes) {
    return heap::valloc(bytes);
}
STA_EXPORT void* pvalloc(std::size_t bytes) {
    return heap::pvalloc(bytes);
}
STA_EXPORT std::size_t malloc_usable_size(void* p) {
    return heap::usable_size(p);
}
/// C23: free with the block's size (and alignment); the release checks refuse a size or
/// an alignment the block cannot have (docs/malloc.md). glibc 2.36 declares neither.
STA_EXPORT void free_sized(void* p, std::size_t bytes) {
    heap::free_sized_c23(p, bytes);
}
STA_EXPORT void free_aligned_sized(void* p, std::size_t alignment, std::size_t bytes) {
    heap::free_aligned_sized(p, alignment, bytes);
}
/// jemalloc's and macOS's: the usable size of the block malloc(bytes) would return.
STA_EXPORT std::size_t malloc_good_size(std::size_t bytes) {
    return heap::good_size(bytes);
}
/// glibc's malloc_trim: give free memory back to the OS now — every span whose blocks
/// have all come back, the kept big mappings and the private heap's spare chunk, of the
/// calling thread's pool and of every pool whose thread ended. `pad` (glibc: the bytes to
/// keep at the top of the heap) has no meaning here. 1 when memory was given back.
STA_EXPORT int malloc_trim(std::size_t pad) {
    (void)pad;
    return pool::trim() != 0 ? 1 : 0;
}

#define STA_EXPORT_CXX __attribute__((visibility("default")))

STA_EXPORT_CXX void* operator new(std::size_t bytes) {
    return new_or_throw(bytes);
}
STA_EXPORT_CXX void* operator new[](std::size_t bytes) {
    return new_or_throw(bytes);
}
STA_EXPORT_CXX void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
    return nothrow([=] { return new_or_throw(bytes); });
}
STA_EXPORT_CXX void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
    return nothrow([=] { return new_or_throw(bytes); });
}
STA_EXPORT_CXX void* operator new(std::size_t bytes, std::align_val_t a) {
    return new_aligned_or_throw(bytes, a);
}
STA_EXPORT_CXX void* operator new[](std::size_t bytes, std::align_val_t a) {
    return new_aligned_or_throw(bytes, a);
}
STA_EXPORT_CXX void* operator new(std::size_t bytes, std::align_val_t a,
                                  const std::nothrow_t&) noexcept {
    return nothrow([=] { return new_aligned_or_throw(bytes, a); });
}
STA_EXPORT_CXX void* operator new[](std::size_t bytes, std::align_val_t a,
                                    const std::nothrow_t&) noexcept {
    return nothrow([=] { return new_aligned_or_throw(bytes, a); });
}

STA_EXPORT_CXX void operator delete(void* p) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete[](void* p) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete(void* p, std::size_t bytes) noexcept {
    heap::free_sized(p, bytes);
}
STA_EXPORT_CXX void operator delete[](void* p, std::size_t bytes) noexcept {
    heap::free_sized(p, bytes);
}
STA_EXPORT_CXX void operator delete(void* p, const std::nothrow_t&) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete[](void* p, const std::nothrow_t&) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete(void* p, std::align_val_t) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete[](void* p, std::align_val_t) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    heap::free(p);
}
STA_EXPORT_CXX void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
    heap::free(p);
}
