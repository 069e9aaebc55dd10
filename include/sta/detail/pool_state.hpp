// sta-pool: the state of one pool and the slow paths every dispatch policy shares.
//
//   one page: page_bytes of blocks, then one OS page holding its header
//   +------+------+--------+----+----+--------+-------------------------+--------+
//   | 32 B | 16 B |  64 B  | 8B | 8B | ...    | bump range [cursor,end) | header |
//   | live | free |  live  |free|live|        | (only in the newest     | older  |
//   +------+--+---+--------+-+--+----+--------+  page)                  |        |
//             |              |                                          +--------+
//   heads[28] +              +-- heads[29]: LIFO lists; the link is the first
//   (16 B)                       word of each free block
//
// The header sits after the page's page_bytes, so the usable part is a whole power
// of two: 32 KiB blocks tile it with no tail. When the newest page cannot serve a
// request, a new page is mapped and the old page's tail [cursor, end) is cut into
// the largest powers of two that keep the alignment guarantee (at most 32 KiB) and
// pushed on the free lists: nothing is wasted. Shrinking a block gives its tail back
// the same way. Pages are never returned to the OS.
//
// Invariants (detail::check_accounting enforces them in tests):
//  I1  `pages` lists every mapped page, newest first; each page's blocks are
//      [begin, begin + page_bytes) and its header lies at begin + page_bytes.
//  I2  [cursor, end) lies in the newest page, or is empty (both null before the
//      first page). `cursor` is 16-aligned, so every bumped block of 16 B or more is.
//  I3  The 8 B class never bumps 8 bytes alone: it takes a run of 16-byte multiples
//      and pushes all but its first block, which keeps I2 without a cursor of its own.
//  I4  Only the canonical slots 17..29 have lists; every block on heads[s] is
//      class_bytes_of_slot(s) long, lies in a page and is aligned to
//      min(class bytes, 16).
//  I5  Live blocks, free blocks and the bump range tile every page exactly: no gap,
//      no overlap.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/hooks.hpp"
#include "sta/detail/page_source.hpp"
#include "sta/detail/size_class.hpp"
#include "sta/detail/thread_identity.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace sta::detail {

inline constexpr std::size_t min_page_bytes = std::size_t{256} * 1024;
inline constexpr std::size_t default_page_bytes = std::size_t{1} << 20;
inline constexpr std::size_t max_page_bytes = std::size_t{1} << 30;

struct page_header {
    page_header* older; // I1
    // No pointer to the page's first block is stored: memcheck would count it as a
    // reference and never report that block leaked. page_begin() computes it.
};
inline constexpr std::size_t page_header_bytes = sizeof(page_header);

inline std::byte* page_begin(const page_header* page, std::size_t page_bytes) noexcept {
    return reinterpret_cast<std::byte*>(const_cast<page_header*>(page)) - page_bytes;
}

/// Blocks the 8 B class takes from the cursor at once (I3).
inline constexpr std::size_t smallest_class_run_bytes = 16 * min_class_bytes;

struct free_block {
    free_block* next;
};

struct pool_state {
    std::byte* cursor = nullptr; // I2
    std::byte* end = nullptr;
    free_block* heads[slot_count] = {}; // I4, indexed by slot
    page_header* pages = nullptr;       // I1
    std::size_t page_bytes = default_page_bytes;
    std::size_t pages_mapped = 0;
    map_pages_fn map_pages = &os_map_pages; // tests swap in a failing source
    std::uintptr_t owner_key = 0;           // checked builds: the owner thread
    unsigned long owner_number = 0;
    void* checked = nullptr; // checked builds: the registry of live blocks (checked.hpp)
#if STA_POOL_STATS
    std::uint64_t allocations[slot_count] = {};
    std::uint64_t frees[slot_count] = {};
    std::size_t bytes_in_use = 0;
    std::size_t bytes_in_use_high_water = 0;
#endif
};

/// Misuse in a checked build: print one line that says what happened, then abort.
[[noreturn]] STA_COLD inline void report_misuse(const char* pool_name, const char* what) noexcept {
    std::fprintf(stderr, "sta-pool: %s: %s\n", pool_name, what);
    std::fflush(stderr);
    std::abort();
}

/// The owner-thread rule. The first thread to call a pool owns it.
STA_COLD inline void claim_or_die(pool_state& s, const char* pool_name) noexcept {
    if (s.owner_key == 0) {
        s.owner_key = thread_key();
        s.owner_number = thread_number();
        return;
    }
    char line[256];
    std::snprintf(line, sizeof line,
                  "called from thread %lu, but the pool belongs to thread %lu; a pool is used "
                  "by one thread only (see the README, \"The thread rule\")",
                  thread_number(), s.owner_number);
    report_misuse(pool_name, line);
}

STA_FORCE_INLINE void check_owner([[maybe_unused]] pool_state& s,
                                  [[maybe_unused]] const char* pool_name) noexcept {
#if STA_POOL_CHECKS
    if (s.owner_key != thread_key()) [[unlikely]]
        claim_or_die(s, pool_name);
#endif
}

/// Slow paths shared by every dispatch policy. `Engine` provides `state()` and
/// `push(slot, block)` (which, for the table policy, also rewrites the slot).
template <class Engine>
struct pool_core {
    /// Cut [from, to) into the largest power-of-two blocks (at most 32 KiB) that
    /// keep the alignment guarantee, and push each on its free list. `from` is
    /// 16-aligned except after an 8 B piece, so this yields one piece per set bit of
    /// the length: O(log n) pieces, largest first.
    static void carve(std::byte* from, std::byte* to) noexcept {
        while (from < to) {
            const auto address = reinterpret_cast<std::uintptr_t>(from);
            const std::size_t alignment = address & (~address + 1);
            std::size_t piece = std::bit_floor(static_cast<std::size_t>(to - from));
            if (alignment < max_block_align)
                piece = std::min(piece, alignment);
            piece = std::min(piece, max_class_bytes);
            Engine::push(slot_of(piece), from);
            from += piece;
        }
    }

    /// Map a new page and make it the bump range; the old tail goes to the lists.
    /// False, with nothing changed, when the OS refuses.
    STA_NOINLINE static bool next_page() noexcept {
        pool_state& s = Engine::state();
        void* memory = s.map_pages(s.page_bytes + page_header_bytes);
        if (memory == nullptr)
            return false;
        std::byte* const old_cursor = s.cursor;
        std::byte* const old_end = s.end;
        auto* const begin = static_cast<std::byte*>(memory);
        auto* const page = reinterpret_cast<page_header*>(begin + s.page_bytes);
        page->older = s.pages;
        s.pages = page;
        ++s.pages_mapped;
        s.cursor = begin;
        s.end = begin + s.page_bytes;
        hooks::page_mapped(begin, s.page_bytes);
        carve(old_cursor, old_end);
        return true;
    }

    /// The 8 B class: take a run of up to 16 blocks from the cursor, hand out the
    /// first and push the others so that they come back in address order (I3).
    STA_NOINLINE static void* bump_smallest() noexcept {
        pool_state& s = Engine::state();
        if (static_cast<std::size_t>(s.end - s.cursor) < 2 * min_class_bytes && !next_page())
            return nullptr;
        std::byte* const block = s.cursor;
        const std::size_t run =
            std::min(smallest_class_run_bytes, static_cast<std::size_t>(s.end - block));
        s.cursor = block + run;
        for (std::size_t at = run - min_class_bytes; at != 0; at -= min_class_bytes)
            Engine::push(smallest_class_slot, block + at);
        return block;
    }

    /// The bump range is too short for a class of `bytes` (16 B .. 32 KiB).
    STA_NOINLINE static void* bump_after_new_page(std::size_t bytes) noexcept {
        if (!next_page())
            return nullptr;
        pool_state& s = Engine::state();
        std::byte* const block = s.cursor;
        s.cursor = block + bytes;
        return block;
    }

    /// Shrink a pooled block in place: its tail returns to the bump range if the
    /// block is the last one bumped, otherwise to the free lists. Never fails.
    static void shrink(std::byte* block, std::size_t old_class, std::size_t new_class) noexcept {
        pool_state& s = Engine::state();
        if (block + old_class == s.cursor && new_class >= max_block_align) {
            s.cursor = block + new_class;
            hooks::region_released(s.cursor, old_class - new_class);
            return;
        }
        carve(block + new_class, block + old_class);
    }

    /// Grow a pooled block in place when it is the last one bumped and the page has
    /// room: the realloc that SysReAllocStringLen-style appends want.
    static bool grow_in_place(std::byte* block, std::size_t old_class,
                              std::size_t new_class) noexcept {
        pool_state& s = Engine::state();
        if (block + old_class != s.cursor)
            return false;
        if (new_class - old_class > static_cast<std::size_t>(s.end - s.cursor))
            return false;
        if ((reinterpret_cast<std::uintptr_t>(block) & (max_block_align - 1)) != 0)
            return false;
        s.cursor = block + new_class;
        return true;
    }
};

} // namespace sta::detail
