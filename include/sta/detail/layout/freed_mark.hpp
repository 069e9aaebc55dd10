// sta-pool: the freed mark — what a free of the drop-in malloc writes in a block's second
// word, so that its class's cache may take frees without a size and a block freed twice
// is still refused (c_span_heap with marked frees, c_api/span_heap.hpp; layout/spans.hpp,
// release_marked).
//
//   a block the drop-in's free took (on its class's cache, in its class's window, or its
//   bit set in its span's bitmap):
//   +----------------------------+----------------------------+--------------------------+
//   | word 0: the cache's link   | word 1: freed_mark         | the caller's bytes, as   |
//   | (or the inbox's, or junk)  |                            | the caller left them     |
//   +----------------------------+----------------------------+--------------------------+
//   a block the drop-in's malloc hands out: word 1 is 0 until the caller writes it.
//
// Invariants (for a heap with marked frees; its classes are 16 bytes or more):
//  M1  A block its heap freed and did not hand out since holds freed_mark in word 1 when
//      its owner's thread freed it, sent_mark when another thread did (M3), unless the
//      caller wrote to the freed block: malloc clears the word when it hands a block out
//      (cache, window and cursor alike), and a free writes the mark after it has taken
//      the block.
//  M2  A free that finds the mark looks closer (span_slow::marked_state): a block on its
//      class's cache, in its class's window or with its bit set was freed twice and is
//      refused; any other is a live block whose word 1 holds the mark's bits by chance
//      (2^-64 for a word of random bits) and is freed. So a block is never on a cache
//      twice, and never both on a cache and in its bitmap or window: the hole of a
//      bit-only check (a block freed twice whose word its class took into its window in
//      between, layout/spans.hpp) is closed.
//  M3  A free from another thread (span_slow::send_home) refuses a block that holds
//      either mark — free at its owner, or freed by another thread already — and writes
//      sent_mark: a block that holds it is in an outbox, in its owner's inbox, or in its
//      bitmap since the owner took it back (the word stays), and its owner's free of it
//      is a double free. So a block freed by its owner and by another thread is refused
//      whichever came first, at the second free. Blocks of classes below
//      marked_min_bytes hold no mark.
//  M4  A link is followed only from a block that holds its mark: freed_mark on a cache
//      (malloc's pop, the flush, the walks), sent_mark in the inbox (the drain). A block
//      whose mark is gone was written after its free, or by an overflow of the block
//      below it, and its link may be forged: refused (free_verdict::overwritten), one
//      line, abort, before the link is followed.
#pragma once

#include "sta/detail/diag/tool_hooks.hpp"

#include <cstddef>
#include <cstdint>

namespace sta::detail {

/// The mark: no pointer (the high half is no canonical address's), no small number, no
/// text; odd.
inline constexpr std::uint64_t freed_mark = 0xa5f15e3d9c2b7e01ull;
/// What a free from another thread writes instead (M3): the block is on its way home.
inline constexpr std::uint64_t sent_mark = freed_mark - 1;
/// Blocks of classes this small have no second word of their own (the seed's 8 B class):
/// nothing writes or reads a mark in them.
inline constexpr std::size_t marked_min_bytes = 16;

/// A pool family whose tag declares `static constexpr bool freed_marks = true;` (the drop-in
/// malloc's, src/malloc/sta_malloc.cpp) hands out and takes back its blocks with the marks;
/// no other family's blocks are marked, whatever their second word holds.
template <class Tag>
inline constexpr bool family_freed_marks = requires {
    requires Tag::freed_marks;
};

/// Does p's second word hold the freed mark (M1)?
STA_FORCE_INLINE bool has_freed_mark(const void* p) noexcept {
    return hooks::load_mark(p) == freed_mark;
}
/// Does it hold either mark: freed here, or on its way home (M1, M3)? One compare.
STA_FORCE_INLINE bool has_any_mark(const void* p) noexcept {
    static_assert((freed_mark | 1) == freed_mark && (sent_mark | 1) == freed_mark);
    return (hooks::load_mark(p) | 1) == freed_mark;
}
/// p, just freed and taken, holds the mark (M1).
STA_FORCE_INLINE void set_freed_mark(void* p) noexcept {
    hooks::store_mark(p, freed_mark);
}
/// p, handed out, holds no mark (M1).
STA_FORCE_INLINE void clear_freed_mark(void* p) noexcept {
    hooks::clear_mark(p);
}

} // namespace sta::detail
