// sta-pool: which 2 MiB regions of the address space are span-layout segments.
//
// One bit per segment_bytes of a 48-bit address space (the user half of x86-64 is 47
// bits, of aarch64 Linux 48), 16 MiB of zero-initialised static storage: only the pages
// that cover mapped segments are ever touched (one 4 KiB page of bits covers 64 GiB). The
// span layout sets a segment's bit when it maps it and clears it when it unmaps it
// (layout/span_life.hpp). is_pool_segment(p) tells a pointer of the pool from any other without
// reading memory near it: what the C API's free needs to find a block's class without
// a header. A segment the OS places above the covered range (a kernel with 5-level
// paging, asked for a high address) is refused before use: the layout unmaps it and
// reports no memory (segment_map_covers), so no pooled block lies where the map is blind.
#pragma once

#include "sta/detail/atomic.hpp"
#include "sta/detail/config.hpp"
#include <cstddef>
#include <cstdint>

namespace sta::detail {

inline constexpr unsigned segment_shift = 21; // log2(segment_bytes)
inline constexpr unsigned mapped_address_bits = 48;
inline constexpr std::size_t segment_map_words =
    (std::size_t{1} << (mapped_address_bits - segment_shift)) / 64;

/// Shared by every pool of the process, so its words are accessed atomically
/// (atomic_ref; a plain array, because clang cannot constant-initialise 2^20
/// atomic objects): threads that map segments at once set bits of one word with
/// fetch_or, never losing one. Reads are relaxed loads (a plain mov): a pointer reaches
/// another thread only through that program's own synchronisation, which orders the
/// bit's store before it.
alignas(atomic_ref<std::uint64_t>::required_alignment) inline constinit std::uint64_t
    segment_map[segment_map_words] = {};

/// True when the map has a bit for the segment at `base`.
inline bool segment_map_covers(const void* base) noexcept {
    return (reinterpret_cast<std::uintptr_t>(base) >> segment_shift) / 64 < segment_map_words;
}

/// The segment at `base` (segment_map_covers(base)) is the pool's from now on.
inline void mark_pool_segment(const void* base) noexcept {
    const std::uintptr_t n = reinterpret_cast<std::uintptr_t>(base) >> segment_shift;
    if (n / 64 < segment_map_words)
        atomic_ref<std::uint64_t>(segment_map[n / 64])
            .fetch_or(std::uint64_t{1} << (n % 64), memory_order_relaxed);
}

/// The segment at `base` is given back to the OS: its addresses are no pool's any more.
inline void unmark_pool_segment(const void* base) noexcept {
    const std::uintptr_t n = reinterpret_cast<std::uintptr_t>(base) >> segment_shift;
    if (n / 64 < segment_map_words)
        atomic_ref<std::uint64_t>(segment_map[n / 64])
            .fetch_and(~(std::uint64_t{1} << (n % 64)), memory_order_relaxed);
}

/// True when p lies in a segment some span-layout pool mapped. Forced inline: every
/// free's first test, a few instructions.
STA_FORCE_INLINE bool is_pool_segment(const void* p) noexcept {
    const std::uintptr_t n = reinterpret_cast<std::uintptr_t>(p) >> segment_shift;
    return n / 64 < segment_map_words &&
           ((atomic_ref<std::uint64_t>(segment_map[n / 64]).load(memory_order_relaxed) >>
             (n % 64)) &
            1u) != 0;
}

} // namespace sta::detail
