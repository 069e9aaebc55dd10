// sta-pool: what the library holds from the OS, and the memory limit it keeps under.
//
//   held = mapped - purged                                   limit (0: none)
//   |<------------------- mapped: os_map_pages ... os_unmap_pages ------------------->|
//   |  blocks, headers, bitmaps, big blocks, states  |  purged pages (spans) |  free  |
//   0                                          held ^           near: held >= 90 % ^   ^ limit
//
// mapped counts every byte os_map_pages (and os_remap_pages, Windows' aligned
// mappings) hands out until os_unmap_pages takes it back; purged counts the pages of the
// span layout's purged spans, which are mapped but not resident (their owner notes them:
// layout/span_life.hpp). held is then what may be resident: an upper bound of what the
// allocator adds to the process's memory (a huge page brings in more than the spans it
// serves; segments take plain pages while the account is near its limit).
//
// With a limit, a mapping or a purged span's reuse that would take held past it is
// refused: the allocation fails (malloc: NULL and ENOMEM, operator new: the new-handler
// loop, then std::bad_alloc) and the process lives on, where the kernel's OOM killer
// would end it. Near the limit (held at 90 % of it or more), freed memory goes back at
// once instead of after the purge delay (purge_delay::wait_now).
//
// One account per copy of the library: the program's (every pool family of the header
// API in it), and libsta_malloc.so's own. Nothing here runs on a fast path.
//
// Invariants:
//  MA1 mapped is the sum of the lengths of the live mappings made through this file's
//      functions; purged <= mapped is the pages of purged spans among them.
//  MA2 with limit != 0, a change that raises held checks it first: held never exceeds
//      the limit by a change of this account's (a limit set below held stops growth).
#pragma once

#include "sta/detail/atomic.hpp"
#include "sta/detail/os/probes.hpp"

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <fcntl.h>
#include <unistd.h>
#endif

namespace sta::detail {

struct memory_account {
    atomic<std::size_t> mapped{0};
    atomic<std::size_t> purged{0};
    atomic<std::size_t> limit{0};   // MA2; 0: none
    atomic<std::size_t> refused{0}; // mappings and reuses refused for the limit, ever
    atomic<std::size_t> peak{0};    // the most held at once, as the account saw it
    /// The big tier's blocks in use, each a mapping of its own (pool/next_tiers.hpp,
    /// STA_POOL_BIG_FROM_OS): their pages and their count.
    atomic<std::size_t> big_bytes{0};
    atomic<std::size_t> big_blocks{0};

    std::size_t held() const noexcept {
        const std::size_t p = purged.load(memory_order_relaxed);
        const std::size_t m = mapped.load(memory_order_relaxed);
        return m > p ? m - p : 0;
    }
    /// held at 90 % of the limit or more (purge at once, plain pages).
    bool near_limit() const noexcept {
        const std::size_t cap = limit.load(memory_order_relaxed);
        return cap != 0 && held() >= cap - cap / 10;
    }

    /// `bytes` more are about to be mapped: false, with nothing counted, when that would
    /// take held past the limit (MA2).
    bool admit_mapping(std::size_t bytes) noexcept {
        const std::size_t m = mapped.fetch_add(bytes, memory_order_relaxed) + bytes;
        if (within_limit(m, purged.load(memory_order_relaxed), bytes)) [[likely]]
            return true;
        mapped.fetch_sub(bytes, memory_order_relaxed);
        return false;
    }
    void unmapped(std::size_t bytes) noexcept { mapped.fetch_sub(bytes, memory_order_relaxed); }

    /// A big block of `bytes` (whole pages) handed out, or freed (a resize is both).
    void big_taken(std::size_t bytes) noexcept {
        big_bytes.fetch_add(bytes, memory_order_relaxed);
        big_blocks.fetch_add(1, memory_order_relaxed);
    }
    void big_freed(std::size_t bytes) noexcept {
        big_bytes.fetch_sub(bytes, memory_order_relaxed);
        big_blocks.fetch_sub(1, memory_order_relaxed);
    }

    /// A span's pages go back to the OS but stay mapped (or a fresh segment's, never
    /// touched).
    void note_purged(std::size_t bytes) noexcept { purged.fetch_add(bytes, memory_order_relaxed); }
    /// Purged pages leave the account's purged part: unmapped with their segment.
    void forget_purged(std::size_t bytes) noexcept {
        purged.fetch_sub(bytes, memory_order_relaxed);
    }
    /// Purged pages are about to be used again: false, with nothing changed, when that
    /// would take held past the limit (MA2).
    bool admit_reuse(std::size_t bytes) noexcept {
        const std::size_t p = purged.fetch_sub(bytes, memory_order_relaxed) - bytes;
        if (within_limit(mapped.load(memory_order_relaxed), p, bytes)) [[likely]]
            return true;
        purged.fetch_add(bytes, memory_order_relaxed);
        return false;
    }

  private:
    /// Is held = m - p, with `bytes` just asked, within the limit? Counts a refusal
    /// (probe limit_reached), or notes a new peak.
    bool within_limit(std::size_t m, std::size_t p, std::size_t bytes) noexcept {
        const std::size_t now_held = m > p ? m - p : 0;
        const std::size_t cap = limit.load(memory_order_relaxed);
        if (cap != 0 && now_held > cap) [[unlikely]] {
            refused.fetch_add(1, memory_order_relaxed);
            STA_PROBE3(limit_reached, now_held - bytes, cap, bytes);
            return false;
        }
        std::size_t high = peak.load(memory_order_relaxed);
        while (now_held > high && !peak.compare_exchange_weak(high, now_held, memory_order_relaxed,
                                                              memory_order_relaxed)) {
        }
        return true;
    }
};

/// This copy of the library's account (MA1).
inline constinit memory_account os_memory{};

/// The room the process's control group leaves the library: its memory limit less what
/// the group holds now (the program's own pages, other processes of the group) — cgroup
/// v2's memory.max and memory.current, else v1's memory.limit_in_bytes and
/// memory.usage_in_bytes, of the group /proc/self/cgroup names. 0 when no limit is set
/// ("max", or v1's page-rounded LONG_MAX) or none can be read. Linux only; read with
/// open/read, no allocation (the drop-in calls it at load).
inline std::size_t os_cgroup_memory_room() noexcept {
#if defined(__linux__)
    const auto read_file = [](const char* path, char* out, std::size_t size) -> std::size_t {
        const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 0;
        std::size_t n = 0;
        while (n + 1 < size) {
            const ssize_t got = ::read(fd, out + n, size - 1 - n);
            if (got <= 0)
                break;
            n += static_cast<std::size_t>(got);
        }
        ::close(fd);
        out[n] = '\0';
        return n;
    };
    /// The number in <root><group><file>; 0 for "max", a missing file or no limit.
    const auto number_in = [&](const char* root, const char* group, std::size_t group_length,
                               const char* file) -> std::uint64_t {
        char path[512];
        std::size_t n = 0;
        const auto add = [&](const char* text, std::size_t length) {
            for (std::size_t i = 0; i < length && text[i] != '\0' && n + 1 < sizeof path; ++i)
                path[n++] = text[i];
        };
        add(root, sizeof path);
        add(group, group_length);
        add(file, sizeof path);
        path[n] = '\0';
        char value[32];
        if (read_file(path, value, sizeof value) == 0 || value[0] < '0' || value[0] > '9')
            return 0;
        std::uint64_t bytes = 0;
        for (const char* c = value; *c >= '0' && *c <= '9'; ++c)
            bytes = bytes * 10 + static_cast<std::uint64_t>(*c - '0');
        return bytes >= (std::uint64_t{1} << 62) ? 0 : bytes;
    };
    const auto room = [&](const char* root, const char* group, std::size_t length,
                          const char* max_file, const char* current_file) -> std::size_t {
        const std::uint64_t max = number_in(root, group, length, max_file);
        if (max == 0)
            return 0;
        const std::uint64_t current = number_in(root, group, length, current_file);
        return current < max ? static_cast<std::size_t>(max - current) : 1; // 1: no room
    };
    char groups[2048];
    if (read_file("/proc/self/cgroup", groups, sizeof groups) == 0)
        return 0;
    // Lines "id:controllers:path": v2's is "0::/path", v1's memory one "n:memory:/path".
    std::size_t v1 = 0;
    for (const char* line = groups; *line != '\0';) {
        const char* end = line;
        while (*end != '\0' && *end != '\n')
            ++end;
        const char* first = line;
        while (first < end && *first != ':')
            ++first;
        const char* second = first < end ? first + 1 : end;
        while (second < end && *second != ':')
            ++second;
        if (second < end) {
            const char* const controllers = first + 1;
            const auto names = static_cast<std::size_t>(second - controllers);
            const char* const group = second + 1;
            const auto length = static_cast<std::size_t>(end - group);
            if (names == 0 && first - line == 1 && line[0] == '0') {
                if (const std::size_t bytes =
                        room("/sys/fs/cgroup", group, length, "/memory.max", "/memory.current"))
                    return bytes;
            } else if (names == 6 && __builtin_memcmp(controllers, "memory", 6) == 0) {
                v1 = room("/sys/fs/cgroup/memory", group, length, "/memory.limit_in_bytes",
                          "/memory.usage_in_bytes");
            }
        }
        line = *end == '\n' ? end + 1 : end;
    }
    return v1;
#else
    return 0;
#endif
}

} // namespace sta::detail
