// sta-pool: the seed's layout — one bump cursor shared by every class, LIFO lists per
// class across all pages, tails carved into the lists.
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
// Invariants (check_shared_cursor in pool_checker.hpp enforces them in tests):
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

#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/pool/state.hpp"
#include "sta/detail/pool/stats.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sta::detail {

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

struct shared_cursor_state : pool_state {
    std::byte* cursor = nullptr; // I2
    std::byte* end = nullptr;
    free_block* heads[slot_count] = {}; // I4, indexed by slot
    page_header* pages = nullptr;       // I1
};

/// The layout's side of the engine contract (detail/layout/contract.hpp). `Engine`
/// provides `state()` and `push(slot, block)` (which, for the table policy, also
/// rewrites the slot).
template <class Engine>
struct shared_cursor_core {
    static shared_cursor_state& s() noexcept { return Engine::state(); }
    /// The carving of page tails (carve_tail) cuts powers of two.
    using classes = power_of_two_classes;
    static_assert(std::is_same_v<typename Engine::classes, classes>,
                  "the shared cursor serves the seed's power-of-two classes");

    // ---- the fast path's fields ----------------------------------------------------
    STA_FORCE_INLINE static free_block*& head(std::uint32_t slot) noexcept {
        return s().heads[slot];
    }
    STA_FORCE_INLINE static std::byte*& cursor(std::uint32_t) noexcept { return s().cursor; }
    STA_FORCE_INLINE static std::byte* end(std::uint32_t) noexcept { return s().end; }
    /// Bytes the cursor advances for each slot; the 8 B class never fits (I3).
    static constexpr std::array<std::size_t, slot_count> steps = [] {
        std::array<std::size_t, slot_count> out{};
        for (std::uint32_t slot = largest_class_slot; slot < smallest_class_slot; ++slot)
            out[slot] = class_bytes_of_slot(slot);
        out[smallest_class_slot] = ~std::size_t{0};
        return out;
    }();

    /// A block of the class of a canonical pooled slot: "list non-empty ? pop : bump",
    /// inlined at the call site (the inline-branch dispatch; the table dispatch reaches
    /// the same fields through its slots).
    STA_FORCE_INLINE static void* alloc(std::uint32_t slot) noexcept {
        free_block*& list = head(slot);
        if (free_block* block = list) {
            list = static_cast<free_block*>(hooks::load_link(block));
            return block;
        }
        std::byte*& bump = cursor(slot);
        std::byte* const block = bump;
        if (steps[slot] <= static_cast<std::size_t>(end(slot) - block)) [[likely]] {
            bump = block + steps[slot];
            return block;
        }
        return refill(slot);
    }

    /// A freed block goes on its class's list: the list is no longer empty.
    static constexpr bool release_feeds_head = true;
    STA_FORCE_INLINE static void release(std::uint32_t slot, void* p) noexcept {
        hooks::store_link(p, s().heads[slot]);
        hooks::block_pushed(p, class_bytes_of_slot(slot));
        s().heads[slot] = static_cast<free_block*>(p);
    }

    /// The list is empty and the bump range too short: refill, then hand out a block.
    STA_NOINLINE static void* refill(std::uint32_t slot) noexcept {
        if (slot == smallest_class_slot)
            return bump_smallest();
        if (!next_page())
            return nullptr;
        std::byte* const block = s().cursor;
        s().cursor = block + class_bytes_of_slot(slot);
        return block;
    }

    // ---- slow paths ------------------------------------------------------------------

    /// Cut [from, to) into the largest power-of-two blocks (at most 32 KiB) that
    /// keep the alignment guarantee, and push each on its free list. `from` is
    /// 16-aligned except after an 8 B piece, so this yields one piece per set bit of
    /// the length: O(log n) pieces, largest first.
    static void carve(std::byte* from, std::byte* to) noexcept {
        while (from < to) {
            const auto address = reinterpret_cast<std::uintptr_t>(from);
            const std::size_t alignment = address & (~address + 1);
            std::size_t piece = std::bit_floor(static_cast<std::size_t>(to - from));
            if (alignment < max_block_align && alignment < piece)
                piece = alignment;
            if (piece > max_class_bytes)
                piece = max_class_bytes;
            Engine::push(slot_of(piece), from);
            from += piece;
        }
    }

    /// Map a new page and make it the bump range; the old tail goes to the lists.
    /// False, with nothing changed, when the OS refuses.
    STA_NOINLINE static bool next_page() noexcept {
        shared_cursor_state& st = s();
        void* memory = st.map_pages(st.page_bytes + page_header_bytes);
        if (memory == nullptr)
            return false;
        std::byte* const old_cursor = st.cursor;
        std::byte* const old_end = st.end;
        auto* const begin = static_cast<std::byte*>(memory);
        auto* const page = reinterpret_cast<page_header*>(begin + st.page_bytes);
        page->older = st.pages;
        st.pages = page;
        ++st.mappings;
        st.cursor = begin;
        st.end = begin + st.page_bytes;
        hooks::page_mapped(begin, st.page_bytes);
        carve(old_cursor, old_end);
        return true;
    }

    /// The 8 B class: take a run of up to 16 blocks from the cursor, hand out the
    /// first and push the others so that they come back in address order (I3).
    static void* bump_smallest() noexcept {
        shared_cursor_state& st = s();
        if (static_cast<std::size_t>(st.end - st.cursor) < 2 * min_class_bytes && !next_page())
            return nullptr;
        std::byte* const block = st.cursor;
        const auto left = static_cast<std::size_t>(st.end - block);
        const std::size_t run = left < smallest_class_run_bytes ? left : smallest_class_run_bytes;
        st.cursor = block + run;
        for (std::size_t at = run - min_class_bytes; at != 0; at -= min_class_bytes)
            Engine::push(smallest_class_slot, block + at);
        return block;
    }

    /// Resize a pooled block where it lies, between two classes. A shrink always
    /// succeeds: its tail returns to the bump range if the block is the last one
    /// bumped, otherwise to the free lists. A growth succeeds when the block is the
    /// last one bumped and the page has room (the realloc that appends want).
    static bool resize_in_place(std::byte* block, std::size_t old_class,
                                std::size_t new_class) noexcept {
        shared_cursor_state& st = s();
        if (new_class < old_class) {
            if (block + old_class == st.cursor && new_class >= max_block_align) {
                st.cursor = block + new_class;
                hooks::region_released(st.cursor, old_class - new_class);
                return true;
            }
            carve(block + new_class, block + old_class);
            return true;
        }
        if (block + old_class != st.cursor)
            return false;
        if (new_class - old_class > static_cast<std::size_t>(st.end - st.cursor))
            return false;
        if ((reinterpret_cast<std::uintptr_t>(block) & (max_block_align - 1)) != 0)
            return false;
        st.cursor = block + new_class;
        return true;
    }

    /// A sized free names the class itself: nothing to check here.
    static std::size_t class_bytes_of_block(const void*, std::size_t bytes) noexcept {
        return class_bytes_of_size(bytes);
    }

    // ---- what the pool holds (stats, checked-build reports) ----------------------------

    static void add_stats(pool_stats& out) noexcept {
        const shared_cursor_state& st = s();
        out.mapping_bytes = st.page_bytes;
        out.mappings = st.mappings;
        out.bytes_reserved = st.mappings * st.page_bytes;
        out.bytes_mapped = st.mappings * (st.page_bytes + page_header_bytes);
        for (const page_header* page = st.pages; page != nullptr; page = page->older)
            out.bytes_resident +=
                os_resident_bytes(reinterpret_cast<const std::byte*>(page) - st.page_bytes,
                                  st.page_bytes + page_header_bytes);
        const auto bump = static_cast<std::size_t>(st.end - st.cursor);
        out.bytes_free = bump;
        for (std::uint32_t i = 0; i < class_count; ++i) {
            const std::uint32_t slot = smallest_class_slot - i;
            class_stats& c = out.classes[i];
            for (void* b = st.heads[slot]; b != nullptr; b = hooks::load_link(b))
                ++c.free_blocks;
            out.bytes_free += c.free_blocks * c.block_bytes;
        }
        out.bytes_in_use_high_water = out.bytes_reserved - bump;
    }

    /// For a checked-build report about a pointer that is not a live block: the class
    /// bytes of the free list it is on (0: none), and its offset in a page (-1: none).
    static std::size_t free_list_class_of(const void* p) noexcept {
        for (std::uint32_t slot = largest_class_slot; slot <= smallest_class_slot; ++slot)
            for (void* b = s().heads[slot]; b != nullptr; b = hooks::load_link(b))
                if (b == p)
                    return class_bytes_of_slot(slot);
        return 0;
    }
    static std::ptrdiff_t offset_in_memory(const void* p) noexcept {
        const auto a = reinterpret_cast<std::uintptr_t>(p);
        for (const page_header* page = s().pages; page != nullptr; page = page->older) {
            const auto begin = reinterpret_cast<std::uintptr_t>(page_begin(page, s().page_bytes));
            if (a >= begin && a < begin + s().page_bytes)
                return static_cast<std::ptrdiff_t>(a - begin);
        }
        return -1;
    }
};

} // namespace sta::detail
