// sta-pool: the block header of sta::arena and where its blocks come from: the block
// source, and the per-thread block cache in front of the OS page source.
//
// An arena block is one mapping from a block source. It starts with an arena_block
// header; the rest is bump space. Nothing here is on a fast path.
#pragma once

#include "sta/detail/os/pages.hpp"

#include <cstddef>
#include <cstdint>

namespace sta::detail {

/*  One arena block (a standard block of block_bytes, or a dedicated one):

      mapping (from the block source, 4096-aligned)
      +----------------+---------------------------------+--------------------------+
      | arena_block    | used: handed out (and padding)  | free: [cursor, end)      |
      | older, bytes,  |                                 | (only the current block  |
      | used, serial   |                                 |  bumps; a dedicated block|
      +----------------+---------------------------------+  has no free part)       |
      ^ block          ^ data() = block + header bytes                              ^
                                                                      block + bytes

    Invariants (detail::check_arena enforces them in tests):
     B1  `bytes` is the size of the mapping: block_bytes for a standard block, a
         multiple of 4096 for a dedicated one; `block` is 4096-aligned.
     B2  `serial` is unique over the arena's lifetime and strictly decreases along
         `older` (the lists are newest first).
     B3  `used` <= bytes - header; for the current standard block it is stale and
         the arena's cursor says how much is used.                                */
struct alignas(16) arena_block {
    arena_block* older;
    std::size_t bytes;
    std::size_t used;
    std::uint64_t serial;

    std::byte* data() noexcept { return reinterpret_cast<std::byte*>(this) + sizeof(arena_block); }
    std::byte* limit() noexcept { return reinterpret_cast<std::byte*>(this) + bytes; }
};
inline constexpr std::size_t arena_block_header_bytes = sizeof(arena_block);
static_assert(arena_block_header_bytes == 32, "the header keeps data() 16-aligned");

} // namespace sta::detail

namespace sta::detail {

// ---------------------------------------------------------------------------------
// The block cache: this thread's released blocks, kept for its next arena.
// ---------------------------------------------------------------------------------

/*  One cache per thread (memory that lives on one thread: no locks):

      heads[0] (4 KiB)  -> block -> block -> null     the link is the first word
      heads[4] (64 KiB) -> block -> ... -> null       of each cached block
      ...
      heads[8] (1 MiB)  -> null

    Invariants: every block on heads[i] is (4096 << i) bytes, 4096-aligned, from the
    OS page source; `bytes` is their total and never exceeds `limit_bytes`; once the
    thread's cache is `closed` (the thread is ending) nothing is cached any more.
    Only power-of-two sizes from 4 KiB to 1 MiB are cached (every standard arena block
    of those sizes); anything else goes straight back to the OS.                    */
inline constexpr std::size_t block_cache_lists = 9;
inline constexpr std::size_t default_block_cache_limit_bytes = std::size_t{32} << 20;

struct block_cache_state {
    void* heads[block_cache_lists] = {};
    std::size_t bytes = 0;
    std::size_t limit_bytes = default_block_cache_limit_bytes;
    bool closed = false;
    bool reaper_armed = false;
};

/// Trivially destructible and constant-initialised: usable until the thread ends,
/// also from destructors that run after the reaper below.
inline constinit thread_local block_cache_state block_cache{};

inline int block_cache_index(std::size_t bytes) noexcept {
    if (bytes < os_page_bytes || bytes > (os_page_bytes << (block_cache_lists - 1)) ||
        (bytes & (bytes - 1)) != 0)
        return -1;
    int i = 0;
    while ((os_page_bytes << i) != bytes)
        ++i;
    return i;
}

/// Give every cached block of this thread back to the OS.
inline void block_cache_trim() noexcept {
    block_cache_state& c = block_cache;
    for (std::size_t i = 0; i < block_cache_lists; ++i) {
        while (c.heads[i] != nullptr) {
            void* b = c.heads[i];
            c.heads[i] = *static_cast<void**>(b);
            os_unmap_pages(b, os_page_bytes << i);
        }
    }
    c.bytes = 0;
}

/// Runs when the thread ends: empties the cache and closes it.
struct block_cache_reaper {
    block_cache_reaper() = default;
    block_cache_reaper(const block_cache_reaper&) = delete;
    block_cache_reaper& operator=(const block_cache_reaper&) = delete;
    ~block_cache_reaper() {
        block_cache_trim();
        block_cache.closed = true;
    }
};

inline void* cached_map_pages(std::size_t bytes) noexcept {
    block_cache_state& c = block_cache;
    const int i = block_cache_index(bytes);
    if (i >= 0 && c.heads[i] != nullptr) {
        void* b = c.heads[i];
        c.heads[i] = *static_cast<void**>(b);
        c.bytes -= bytes;
        return b;
    }
    return os_map_pages(bytes);
}

inline void cached_unmap_pages(void* p, std::size_t bytes) noexcept {
    block_cache_state& c = block_cache;
    const int i = block_cache_index(bytes);
    if (i < 0 || c.closed || c.bytes > c.limit_bytes || bytes > c.limit_bytes - c.bytes) {
        os_unmap_pages(p, bytes);
        return;
    }
    if (!c.reaper_armed) {
        static thread_local block_cache_reaper reaper; // destroyed when the thread ends
        c.reaper_armed = true;
    }
    *static_cast<void**>(p) = c.heads[i];
    c.heads[i] = p;
    c.bytes += bytes;
}

} // namespace sta::detail

namespace sta {

/// Where an arena gets its blocks and gives them back. `map(bytes)` returns memory
/// aligned to at least 4096 (not necessarily zeroed), or nullptr; `unmap(p, bytes)`
/// takes it back. The default keeps released standard blocks in this thread's block
/// cache (below) for the next arena, in front of the OS (mmap / VirtualAlloc). Tests
/// swap in sources that fail or count.
struct arena_block_source {
    detail::map_pages_fn map = &detail::cached_map_pages;
    detail::unmap_pages_fn unmap = &detail::cached_unmap_pages;
};

/// The default: this thread's block cache in front of the OS.
inline arena_block_source cached_block_source() noexcept {
    return {};
}

/// Straight to the OS: every release() unmaps, every new block is a fresh mapping.
inline arena_block_source os_block_source() noexcept {
    return {&detail::os_map_pages, &detail::os_unmap_pages};
}

/// This thread's cache of released arena blocks. A released block of 4 KiB..1 MiB (a
/// power of two) is kept for the next arena on the thread, up to a limit (32 MiB by
/// default: the DOM of a 2.4 MB XML file in docs/arena.md takes 19 MB): a document
/// built and dropped again and again costs no system call and no page fault. The trade is the
/// pool's: memory is kept, by design. trim() gives the cache back to the OS; the thread's end does
/// so too.
namespace arena_block_cache {
inline std::size_t cached_bytes() noexcept {
    return detail::block_cache.bytes;
}
inline std::size_t limit_bytes() noexcept {
    return detail::block_cache.limit_bytes;
}
/// The most this thread's cache keeps; lowering it does not trim by itself.
inline void set_limit_bytes(std::size_t bytes) noexcept {
    detail::block_cache.limit_bytes = bytes;
}
inline void trim() noexcept {
    detail::block_cache_trim();
}
} // namespace arena_block_cache

} // namespace sta
