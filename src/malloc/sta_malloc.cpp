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
#if STA_MALLOC_HARDENED
#include "sta/detail/c_api/hardened_heap.hpp"
#endif
#include "sta/memory_pool.hpp"
#include "sta/stats_json.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>

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
    static constexpr bool freed_marks = true; // pool/freed_mark.hpp: free's cache
};
using pool = sta::basic_memory_pool<sta::dispatch::default_policy, malloc_family,
                                    sta::layout::spans, sta::threads::per_thread>;
#if STA_MALLOC_HARDENED // libsta_malloc-hardened.so (docs/malloc.md, "The hardened library")
using heap = sta::detail::hardened_heap<sta::detail::malloc_heap<pool>>;
#else
using heap = sta::detail::malloc_heap<pool>;
#endif
using home = pool::engine::home;

static_assert(STA_POOL_BIG_FROM_OS, "libsta_malloc must not call the C library's malloc");

// fork() in a threaded program: no other thread holds the family's lock in the child.
void before_fork() noexcept {
#if STA_MALLOC_HARDENED
    heap::before_fork();
#endif
    home::before_fork();
}
void after_fork() noexcept {
    home::after_fork();
#if STA_MALLOC_HARDENED
    heap::after_fork();
#endif
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
/// The bytes of a whole number of MiB written in `text`; none when it is not one.
std::optional<std::size_t> bytes_of_mib(const char* text) noexcept {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (end == text || *end != '\0' || value > (SIZE_MAX >> 20))
        return std::nullopt;
    return static_cast<std::size_t>(value) << 20;
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
        if (const auto bytes = bytes_of_mib(mib))
            sta::detail::os_memory.limit.store(*bytes, sta::detail::memory_order_relaxed);
        else
            say("sta_malloc: STA_MALLOC_LIMIT_MIB=%.60s is not a number of MiB; no limit\n", mib);
    } else {
        sta::detail::os_memory.limit.store(sta::detail::os_cgroup_memory_room(),
                                           sta::detail::memory_order_relaxed);
    }
    if (const char* const mib = std::getenv("STA_MALLOC_RETAIN_MIB")) {
        if (const auto bytes = bytes_of_mib(mib))
            sta::detail::retained_limit_bytes.store(*bytes, sta::detail::memory_order_relaxed);
        else
            say("sta_malloc: STA_MALLOC_RETAIN_MIB=%.60s is not a number of MiB; the default "
                "stays\n",
                mib);
    }
}

/// Write all of `text` to `fd` (write(2): at exit stdio may be torn down already).
void write_all(int fd, const char* text, std::size_t length) noexcept {
    while (length != 0) {
        const ssize_t n = ::write(fd, text, length);
        if (n <= 0)
            return;
        text += n;
        length -= static_cast<std::size_t>(n);
    }
}

/// The process's statistics as JSON into a buffer of the stack's (a heap with thousands
/// of classes' spans still fits: the classes are at most 44 entries).
struct json_text {
    char text[8192];
    std::size_t length;
    json_text() noexcept {
        length = sta::write_json(pool::process_stats(), text, sizeof text);
        if (length >= sizeof text)
            length = sizeof text - 1;
    }
};

/// The statistics with the heap's spans (sta_malloc_stats_json_spans) in pages of their
/// own from the OS, unmapped when done: their length grows with the heap.
struct json_spans_text {
    char* text = nullptr;
    std::size_t length = 0, mapped = 0;
    json_spans_text() noexcept {
        for (int attempt = 0;; ++attempt) { // the heap may grow between two walks
            const std::size_t need = sta::write_json_with_spans<pool>(text, mapped);
            if (need < mapped) {
                length = need;
                return;
            }
            if (text != nullptr)
                sta::detail::os_unmap_pages(text, mapped);
            text = nullptr;
            mapped = 0;
            if (attempt == 4)
                return; // none: nothing is written
            const std::size_t bytes = sta::detail::os_round_up(need + need / 4 + 1);
            if ((text = static_cast<char*>(sta::detail::os_map_pages(bytes))) == nullptr)
                return;
            mapped = bytes;
        }
    }
    ~json_spans_text() {
        if (text != nullptr)
            sta::detail::os_unmap_pages(text, mapped);
    }
    json_spans_text(const json_spans_text&) = delete;
    json_spans_text& operator=(const json_spans_text&) = delete;
};

/// STA_MALLOC_STATS=1: one line on stderr at exit — the pools made and parked, the
/// segments mapped, and the exiting thread's pool: bytes in use, mapped, resident and
/// given back to the OS. STA_MALLOC_STATS=json: the process's statistics as one JSON
/// object (sta_malloc_stats_json), on stderr or into STA_MALLOC_STATS_FILE; json-spans:
/// with the heap's spans (sta_malloc_stats_json_spans), what scripts/heap_map.py draws.
#if STA_MALLOC_HARDENED
/// At exit: no block in quarantine was written after its free (hardened_heap, HH2).
__attribute__((destructor)) void check_quarantine_at_exit() noexcept {
    heap::check_at_exit();
}
#endif

__attribute__((destructor)) void print_stats_at_exit() noexcept {
    const char* const mode = std::getenv("STA_MALLOC_STATS");
    const auto emit = [](const char* text, std::size_t length) noexcept {
        const char* const path = std::getenv("STA_MALLOC_STATS_FILE");
        const int fd = path != nullptr && *path != '\0'
                           ? ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                           : 2;
        if (fd < 0) {
            say("sta_malloc: STA_MALLOC_STATS_FILE=%.200s cannot be written\n", path);
            return;
        }
        write_all(fd, text, length);
        write_all(fd, "\n", 1);
        if (fd != 2)
            ::close(fd);
    };
    if (mode != nullptr && std::strcmp(mode, "json-spans") == 0) {
        const json_spans_text json;
        if (json.text != nullptr)
            emit(json.text, json.length);
        return;
    }
    if (mode != nullptr && std::strcmp(mode, "json") == 0) {
        const json_text json;
        emit(json.text, json.length);
        return;
    }
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

/// mallinfo2's figures from the process's statistics (docs/malloc.md, "Statistics"):
/// every byte in use is in uordblks (no mmap region of glibc's kind: hblkhd is 0, so
/// uordblks + hblkhd counts each byte once).
struct mallinfo2 process_mallinfo() noexcept {
    const sta::process_stats s = pool::process_stats();
    struct mallinfo2 m {};
    m.arena = s.bytes_held;
    std::size_t free_blocks = 0;
    for (std::size_t n = 0; n < s.class_count; ++n)
        free_blocks += s.classes[n].blocks_free;
    m.ordblks = free_blocks;
    m.uordblks = s.bytes_in_use;
    m.fordblks = s.bytes_free_in_spans + s.bytes_clean + s.heap_bytes_free + s.bytes_retained;
    m.keepcost = s.bytes_clean + s.bytes_retained;
    m.usmblks = s.bytes_held_peak;
    return m;
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
/// calling thread's pool and of every pool whose thread ended (and the hardened library's
/// kept guarded mappings). `pad` (glibc: the bytes to keep at the top of the heap) has no
/// meaning here. 1 when memory was given back.
STA_EXPORT int malloc_trim(std::size_t pad) {
    (void)pad;
    return heap::trim() != 0 ? 1 : 0;
}

// ---- options while the program runs (docs/malloc.md, "Options") --------------------------

namespace {

/// The huge pages rule as the option's number: 0 none, 1 every segment, 2 where dense.
long long huge_pages_option() noexcept {
    const auto o = home::options_for_new();
    return o.huge_pages_from == sta::detail::huge_pages_never ? 0
           : o.huge_pages_dense || o.huge_pages_from != 0     ? 2
                                                              : 1;
}

/// One option: its value now into *old_value, then `*new_value` set when given (checked
/// first: EINVAL and nothing set when out of range). Those of every pool (purge delay,
/// huge pages, prefault) are the calling thread's pool's and new pools' at once, and
/// every other pool's at its next slow-path check (PH6).
int option(const char* name, long long* old_value, const long long* new_value) noexcept {
    using sta::detail::memory_order_relaxed;
    const auto mib_option = [&](auto get, auto set) {
        if (old_value != nullptr)
            *old_value = static_cast<long long>(get() >> 20);
        if (new_value == nullptr)
            return 0;
        if (*new_value < 0 || static_cast<unsigned long long>(*new_value) > (SIZE_MAX >> 20))
            return EINVAL;
        set(static_cast<std::size_t>(*new_value) << 20);
        return 0;
    };
    const auto flag_option = [&](bool now, auto set) {
        if (old_value != nullptr)
            *old_value = now ? 1 : 0;
        if (new_value == nullptr)
            return 0;
        if (*new_value != 0 && *new_value != 1)
            return EINVAL;
        set(*new_value == 1);
        return 0;
    };
    if (std::strcmp(name, "purge_delay_ms") == 0) {
        const std::uint32_t ms = home::options_for_new().purge_delay_ms;
        if (old_value != nullptr)
            *old_value = ms == pool::purge_never ? -1 : static_cast<long long>(ms);
        if (new_value == nullptr)
            return 0;
        if (*new_value < -1 || *new_value >= static_cast<long long>(pool::purge_never))
            return EINVAL;
        pool::set_purge_delay(*new_value == -1 ? pool::purge_never
                                               : static_cast<std::uint32_t>(*new_value));
        home::options_changed();
        return 0;
    }
    if (std::strcmp(name, "huge_pages") == 0) {
        if (old_value != nullptr)
            *old_value = huge_pages_option();
        if (new_value == nullptr)
            return 0;
        if (*new_value < 0 || *new_value > 2)
            return EINVAL;
        if (*new_value == 2)
            pool::set_huge_pages_where_dense();
        else
            pool::set_huge_pages(*new_value == 1);
        home::options_changed();
        return 0;
    }
    if (std::strcmp(name, "prefault") == 0)
        return flag_option(home::options_for_new().prefault, [](bool on) {
            pool::set_prefault(on);
            home::options_changed();
        });
    if (std::strcmp(name, "checks") == 0)
        return flag_option(sta::detail::c_release_checks,
                           [](bool on) { sta::detail::c_release_checks = on; });
    if (std::strcmp(name, "retain_mib") == 0)
        return mib_option(
            [] { return sta::detail::retained_limit_bytes.load(memory_order_relaxed); },
            [](std::size_t bytes) {
                sta::detail::retained_limit_bytes.store(bytes, memory_order_relaxed);
            });
    if (std::strcmp(name, "limit_mib") == 0)
        return mib_option([] { return sta::detail::os_memory.limit.load(memory_order_relaxed); },
                          [](std::size_t bytes) {
                              sta::detail::os_memory.limit.store(bytes, memory_order_relaxed);
                          });
    return EINVAL;
}

} // namespace

/// libsta_malloc.so's options, read and set while the program runs (sta/pool.h): 0, or
/// EINVAL for an unknown name, a NULL name or a value out of range (nothing set).
STA_EXPORT int sta_malloc_option(const char* name, long long* old_value,
                                 const long long* new_value) {
    return name != nullptr ? option(name, old_value, new_value) : EINVAL;
}

/// glibc's mallopt: M_CHECK_ACTION 0 turns the release checks off, any other value on;
/// the tuning of glibc's arenas, mmap threshold, trim threshold, top pad and fastbins has
/// no meaning here and is accepted unchanged (1); M_PERTURB, which would fill blocks, is
/// not done (0), nor is a parameter glibc does not know (0).
STA_EXPORT int mallopt(int param, int value) {
    switch (param) {
    case M_CHECK_ACTION:
        sta::detail::c_release_checks = value != 0;
        return 1;
    case M_MXFAST:
    case M_TRIM_THRESHOLD:
    case M_TOP_PAD:
    case M_MMAP_THRESHOLD:
    case M_MMAP_MAX:
    case M_ARENA_TEST:
    case M_ARENA_MAX:
        return 1;
    default:
        return 0;
    }
}

// ---- glibc's introspection and the process's statistics (docs/malloc.md, "Statistics") --

STA_EXPORT struct mallinfo2 mallinfo2() {
    return process_mallinfo();
}
/// The int fields of glibc's old struct: each figure capped at INT_MAX.
STA_EXPORT struct mallinfo mallinfo() {
    const struct mallinfo2 m = process_mallinfo();
    const auto cap = [](std::size_t v) { return v > INT_MAX ? INT_MAX : static_cast<int>(v); };
    struct mallinfo old {};
    old.arena = cap(m.arena);
    old.ordblks = cap(m.ordblks);
    old.uordblks = cap(m.uordblks);
    old.fordblks = cap(m.fordblks);
    old.keepcost = cap(m.keepcost);
    old.usmblks = cap(m.usmblks);
    return old;
}
/// glibc's lines ("system bytes", "in use bytes", ...) for the whole process, then sta's
/// own, on stderr.
STA_EXPORT void malloc_stats() {
    const sta::process_stats s = pool::process_stats();
    say("sta_malloc: every pool of the process (%zu made, %zu parked)\n"
        "system bytes     = %10zu\n"
        "in use bytes     = %10zu\n"
        "Total (incl. mmap):\n"
        "system bytes     = %10zu\n"
        "in use bytes     = %10zu\n"
        "max mmap regions = %10zu\n"
        "max mmap bytes   = %10zu\n",
        s.pools_made, s.pools_parked, s.bytes_held, s.bytes_in_use, s.bytes_held, s.bytes_in_use,
        s.big_blocks, s.big_bytes_in_use);
    say("in use: %zu in classes, %zu in private heaps, %zu in %zu big blocks; free: %zu in "
        "spans, %zu in clean spans, %zu in private heaps, %zu kept big mappings\n"
        "mapped %zu, held %zu (most %zu), given back %zu; %zu segments (%zu unmapped), spans "
        "%zu in use, %zu clean, %zu purged; limit %zu (%zu refusals)\n",
        s.class_bytes_in_use, s.heap_bytes_in_use, s.big_bytes_in_use, s.big_blocks,
        s.bytes_free_in_spans, s.bytes_clean, s.heap_bytes_free, s.bytes_retained, s.bytes_mapped,
        s.bytes_held, s.bytes_held_peak, s.bytes_given_back, s.segments, s.segments_unmapped,
        s.spans_in_use, s.spans_clean, s.spans_purged, s.limit_bytes, s.limit_refusals);
}
/// glibc's XML, version "sta-1": per class the free blocks (glibc lists free chunks by
/// size), the totals, and sta's figures in an element of their own. `options` must be 0.
STA_EXPORT int malloc_info(int options, FILE* out) {
    if (options != 0 || out == nullptr) {
        errno = EINVAL;
        return -1;
    }
    const sta::process_stats s = pool::process_stats();
    std::fprintf(out, "<malloc version=\"sta-1\">\n<heap nr=\"0\">\n<sizes>\n");
    std::size_t free_blocks = 0;
    for (std::size_t n = 0; n < s.class_count; ++n) {
        const sta::process_class_stats& c = s.classes[n];
        free_blocks += c.blocks_free;
        if (c.blocks_free != 0)
            std::fprintf(out, "  <size from=\"%zu\" to=\"%zu\" total=\"%zu\" count=\"%zu\"/>\n",
                         c.block_bytes, c.block_bytes, c.blocks_free * c.block_bytes,
                         c.blocks_free);
    }
    const std::size_t free_bytes =
        s.bytes_free_in_spans + s.bytes_clean + s.heap_bytes_free + s.bytes_retained;
    std::fprintf(out,
                 "</sizes>\n<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
                 "<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
                 "<system type=\"current\" size=\"%zu\"/>\n<system type=\"max\" size=\"%zu\"/>\n"
                 "<aspace type=\"total\" size=\"%zu\"/>\n<aspace type=\"mprotect\" size=\"%zu\"/>\n"
                 "</heap>\n"
                 "<total type=\"fast\" count=\"0\" size=\"0\"/>\n"
                 "<total type=\"rest\" count=\"%zu\" size=\"%zu\"/>\n"
                 "<total type=\"mmap\" count=\"0\" size=\"0\"/>\n"
                 "<system type=\"current\" size=\"%zu\"/>\n<system type=\"max\" size=\"%zu\"/>\n"
                 "<aspace type=\"total\" size=\"%zu\"/>\n<aspace type=\"mprotect\" size=\"%zu\"/>\n"
                 "<sta in_use=\"%zu\" in_use_classes=\"%zu\" in_use_heap=\"%zu\" "
                 "in_use_big=\"%zu\" big_blocks=\"%zu\" mapped=\"%zu\" held=\"%zu\" "
                 "given_back=\"%zu\" segments=\"%zu\" pools=\"%zu\" parked=\"%zu\" "
                 "limit=\"%zu\" refusals=\"%zu\"/>\n"
                 "</malloc>\n",
                 free_blocks, free_bytes, s.bytes_held, s.bytes_held_peak, s.bytes_mapped,
                 s.bytes_mapped, free_blocks, free_bytes, s.bytes_held, s.bytes_held_peak,
                 s.bytes_mapped, s.bytes_mapped, s.bytes_in_use, s.class_bytes_in_use,
                 s.heap_bytes_in_use, s.big_bytes_in_use, s.big_blocks, s.bytes_mapped,
                 s.bytes_held, s.bytes_given_back, s.segments, s.pools_made, s.pools_parked,
                 s.limit_bytes, s.limit_refusals);
    return 0;
}
/// The process's statistics as one JSON object (sta/pool.h; sta/stats_json.hpp has its
/// shape): written into buffer[0 .. size - 1], NUL-terminated; the object's whole length,
/// so that a result >= size asks for a larger buffer.
STA_EXPORT std::size_t sta_malloc_stats_json(char* buffer, std::size_t size) {
    return sta::write_json(pool::process_stats(), buffer, size);
}
/// The same object with one more member, the heap's spans (sta/stats_json.hpp,
/// write_json_with_spans): what scripts/heap_map.py draws.
STA_EXPORT std::size_t sta_malloc_stats_json_spans(char* buffer, std::size_t size) {
    return sta::write_json_with_spans<pool>(buffer, size);
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
