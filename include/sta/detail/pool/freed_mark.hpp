// sta-pool: the freed mark — what a free of the drop-in malloc writes in a block's second
// word: a check of the block's first word, keyed by the process's secret. With it the
// class caches take frees without a size and a block freed twice is still refused
// (c_span_heap with marked frees, c_api/span_heap.hpp; layout/spans.hpp,
// release_marked), and a link that a write after free or an overflow changed is refused
// before it is followed.
//
//   a block the drop-in's free took (on its class's cache, in its class's window, or its
//   bit set in its span's bitmap), or another thread's free sent home:
//   +----------------------------+----------------------------+--------------------------+
//   | word 0: the cache's link,  | word 1: the mark           | the caller's bytes, as   |
//   | the outbox's, the inbox's, |   freed:  word 0 + key     | the caller left them     |
//   | or what the caller left    |   sent:   word 0 + key - 1 |                          |
//   +----------------------------+----------------------------+--------------------------+
//   key: its state's mark_key (pool/state.hpp), the process's secret (os/process_secret.hpp)
//   a block the drop-in's malloc hands out: word 1 is 0 until the caller writes it.
//
// Invariants (for a heap with marked frees; its classes are 16 bytes or more):
//  M1  A block its heap freed and did not hand out since holds the freed mark when its
//      owner's thread freed it, the sent mark when another thread did (M3), unless the
//      caller wrote to its first two words after the free: malloc clears word 1 when it
//      hands a block out (cache, window and cursor alike), and a free writes the mark
//      after it has taken the block, and again whenever it writes word 0 (a link).
//  M2  A free that finds the mark looks closer (span_slow::marked_state): a block on its
//      class's cache, in its class's window or with its bit set was freed twice and is
//      refused; any other is a live block whose two words match by chance (2^-63 for
//      random bits; a program that does not know the key cannot write them) and is
//      freed. So a block is never on a cache twice, and never both on a cache and in its
//      bitmap or window: the hole of a bit-only check (a block freed twice whose word its
//      class took into its window in between, layout/spans.hpp) is closed. A free that
//      reads no block (frees_unread: the class's cache is empty) tests the window and
//      the bit itself, and writes the mark over a null word 0 (link_freed).
//  M3  A free from another thread (span_slow::send_home) refuses a block that holds
//      either mark — free at its owner, or freed by another thread already — and writes
//      the sent mark: a block that holds it is in an outbox, in its owner's inbox, or in
//      its bitmap since the owner took it back (the words stay), and its owner's free of it
//      is a double free. So a block freed by its owner and by another thread is refused
//      whichever came first: at the second free, or, when the owner's free came second
//      while its frees outran its allocations with its class's cache empty (such a free
//      reads no block: layout/spans.hpp, frees_unread), at the owner's drain, which finds
//      the block's link overwritten by the freed mark (M4). Blocks of classes below
//      marked_min_bytes hold no mark.
//  M4  A link is followed only from a block whose mark checks its link word: the freed
//      mark on a cache (malloc's pop, the flush, the walks), the sent mark in an outbox or
//      the inbox (the drain). A block whose words do not match was written after its free,
//      or by an overflow of the block below it, and its link may be forged: refused
//      (free_verdict::overwritten), one line, abort, before the link is followed. A
//      forged link needs the key: a write of word 0 alone, of a part of it, or of both
//      words with values read from the library's sources, fails the check.
//  M5  The key is odd, drawn once a process (os/process_secret.hpp), and every state of
//      the family holds the same (set at its first refill, before it hands out a block),
//      so that a mark one thread wrote checks in any other.
#pragma once

#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/os/process_secret.hpp"

#include <cstddef>
#include <cstdint>

namespace sta::detail {

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

/// The key of a family's marks (M5): the process's secret.
inline std::uint64_t new_mark_key() noexcept {
    return process_secret();
}

/// Word 1 less word 0 of p: the key for a freed block, the key less 1 for a sent one.
STA_FORCE_INLINE std::uint64_t mark_difference(const void* p) noexcept {
    return hooks::load_mark(p) - hooks::load_word(p, 0);
}
/// Does p hold the freed mark (M1)?
STA_FORCE_INLINE bool has_freed_mark(const void* p, std::uint64_t key) noexcept {
    return mark_difference(p) == key;
}
/// Does p hold the sent mark (M3)?
STA_FORCE_INLINE bool has_sent_mark(const void* p, std::uint64_t key) noexcept {
    return mark_difference(p) == (key ^ 1);
}
/// Does it hold either mark: freed here, or on its way home (M1, M3)? One compare.
STA_FORCE_INLINE bool has_any_mark(const void* p, std::uint64_t key) noexcept {
    return (mark_difference(p) | 1) == key; // key is odd: key ^ 1 == key - 1
}
/// p, just freed and taken, holds the freed mark over what its first word holds (M1).
STA_FORCE_INLINE void set_freed_mark(void* p, std::uint64_t key) noexcept {
    hooks::store_mark(p, hooks::load_word(p, 0) + key);
}
/// p links to `next` and holds the freed mark (a class's cache, M1, M4).
STA_FORCE_INLINE void link_freed(void* p, void* next, std::uint64_t key) noexcept {
    hooks::store_link(p, next);
    hooks::store_mark(p, reinterpret_cast<std::uintptr_t>(next) + key);
}
/// p links to `next` and holds the sent mark (an outbox's way, the inbox, M3, M4).
STA_FORCE_INLINE void link_sent(void* p, void* next, std::uint64_t key) noexcept {
    hooks::store_link(p, next);
    hooks::store_mark(p, reinterpret_cast<std::uintptr_t>(next) + (key ^ 1));
}
/// p, handed out, holds no mark (M1).
STA_FORCE_INLINE void clear_freed_mark(void* p) noexcept {
    hooks::clear_mark(p);
}

} // namespace sta::detail
