// sta-pool: the allocate-copy-free move of a block. Every realloc that cannot resize in
// place moves here, and only here: the pool's (memory_pool.hpp), the tiers above it
// (pool/next_tiers.hpp), the C heaps (c_api/), the private heap (heaps/tlsf_heap.hpp) and
// a remapping the OS refuses (os/pages.hpp).
//
//   move_block            alloc the new block, copy what both hold, release the old one
//   move_or_keep_shrunk   the same; when no memory is found, a block that shrinks stays
//                         where it is: a pooled block's shrink never fails
//
// Level 0 of detail/ (detail/README.md): any layer may include it.
#pragma once

#include <cstddef>
#include <cstring>

namespace sta::detail {

/// memcpy with a length the compiler may not bound: g++ expands a copy it knows to be at
/// most 1 KiB into `rep movsq`, whose start-up costs more than such a copy does in the C
/// library's memcpy (it took 37 % of the samples of realloc's move in lua5.4's
/// binary_trees.lua).
inline void move_bytes(void* to, const void* from, std::size_t bytes) noexcept {
#if defined(__GNUC__)
    asm("" : "+r"(bytes));
#endif
    std::memcpy(to, from, bytes);
}

/// The block at `p`, of which `old_bytes` are the caller's, moved to the block of
/// `new_bytes` that `alloc()` gives; `release()` then frees the old one. nullptr, with
/// nothing changed, when `alloc()` gives nullptr.
template <class Alloc, class Release>
void* move_block(void* p, std::size_t old_bytes, std::size_t new_bytes, Alloc&& alloc,
                 Release&& release) noexcept {
    void* const q = alloc();
    if (q == nullptr)
        return nullptr;
    move_bytes(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
    release();
    return q;
}

/// move_block for a pool's realloc of a block that holds `usable` bytes (its class), of
/// which `old_bytes` are the caller's: when the move finds no memory and `new_bytes` fits
/// in the block, the block stays where it is and `p` comes back — a pooled block's shrink
/// never fails. nullptr only for a growth without memory, with nothing changed.
template <class Alloc, class Release>
void* move_or_keep_shrunk(void* p, std::size_t old_bytes, std::size_t usable, std::size_t new_bytes,
                          Alloc&& alloc, Release&& release) noexcept {
    void* const q = move_block(p, old_bytes, new_bytes, alloc, release);
    return q != nullptr || new_bytes > usable ? q : p;
}

} // namespace sta::detail
