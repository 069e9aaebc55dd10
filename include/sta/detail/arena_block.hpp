// sta-pool: the block header of sta::arena and where its blocks come from.
//
// An arena block is one mapping from a block source (by default the OS page source of
// detail/page_source.hpp). It starts with an arena_block header; the rest is bump space.
// Nothing here is on a fast path.
#pragma once

#include "sta/detail/page_source.hpp"

#include <cstddef>
#include <cstdint>

namespace sta::detail {

/// Every mapping is aligned at least this much (the OS page); the arena relies on it
/// for alignments up to 4096 without padding the mapping.
inline constexpr std::size_t arena_os_page_bytes = 4096;

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

namespace sta {

/// Where an arena gets its blocks and gives them back. `map(bytes)` returns fresh
/// memory aligned to at least 4096, or nullptr; `unmap(p, bytes)` takes it back.
/// The default is the OS (mmap / VirtualAlloc). Tests swap in sources that fail or
/// count.
struct arena_block_source {
    detail::map_pages_fn map = &detail::os_map_pages;
    detail::unmap_pages_fn unmap = &detail::os_unmap_pages;
};

} // namespace sta
