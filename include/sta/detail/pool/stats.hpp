// sta-pool: what stats() reports. Derived when asked; counters only with STA_POOL_STATS.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/os/memory_account.hpp"
#include "sta/detail/pool/size_class.hpp"

#include <array>
#include <cstddef>
#include <cstdint>

namespace sta {

struct class_stats {
    std::size_t block_bytes = 0;   ///< 8, 16, ... 32768
    std::size_t free_blocks = 0;   ///< blocks of this class ready to hand out (walked)
    std::size_t live_blocks = 0;   ///< STA_POOL_STATS only: allocations - frees
    std::uint64_t allocations = 0; ///< STA_POOL_STATS only
    std::uint64_t frees = 0;       ///< STA_POOL_STATS only
};

struct pool_stats {
    /// The pool's classes, 8 B first, 32 KiB at classes[class_count - 1]; the entries
    /// past class_count are empty.
    std::array<class_stats, detail::class_slots> classes{};
    std::size_t class_count = 0;
    /// The entry of the class of `block_bytes` (nullptr when the pool has none).
    const class_stats* of_class(std::size_t block_bytes) const noexcept {
        for (std::size_t i = 0; i < class_count; ++i)
            if (classes[i].block_bytes == block_bytes)
                return &classes[i];
        return nullptr;
    }
    /// The unit the layout maps from the OS: a page of page_bytes() (shared cursor), a
    /// segment of 2 MiB (spans).
    std::size_t mapping_bytes = 0;
    std::size_t mappings = 0;       ///< OS mappings of mapping_bytes made
    std::size_t bytes_reserved = 0; ///< what the mappings hold for blocks (headers excluded)
    std::size_t bytes_free = 0;     ///< free lists + unused bump ranges + clean spans
    std::size_t bytes_in_use = 0;   ///< reserved - bytes_free (headers lie outside)
    /// With STA_POOL_STATS: the most bytes in use at once. Without: an upper bound of it
    /// (shared cursor: the bytes ever taken from pages; spans: bytes_reserved).
    std::size_t bytes_in_use_high_water = 0;
    /// Spans only: spans that serve a class now, spans that serve none and keep their
    /// pages (clean), and spans whose pages went back to the OS or were never touched
    /// (purged).
    std::size_t spans_in_use = 0;
    std::size_t spans_clean = 0;
    std::size_t spans_purged = 0;
    /// Memory from the OS: what the mappings span (spans: the segments and their
    /// bitmaps), what of it is resident now (Linux:
    /// mincore; Windows: committed), the pages of purged spans, and everything given back
    /// so far (purged spans, unmapped segments; cumulative). Spans only but bytes_mapped
    /// and bytes_resident, which the shared cursor reports too.
    std::size_t bytes_mapped = 0;
    std::size_t bytes_resident = 0;
    std::size_t bytes_purged = 0;
    std::size_t bytes_given_back = 0;
    std::size_t segments_unmapped = 0;
    bool counters = STA_POOL_STATS != 0; ///< allocations/frees/live_blocks are counted
};

/// What a whole family of per-thread pools holds — every thread's pool and every parked
/// one — and what the library holds from the OS (memory_pool::process_stats; the
/// drop-in's mallinfo2, malloc_stats, malloc_info and sta_malloc_stats_json). Derived
/// by walking when asked, no counter on a fast path. The pools of other threads that
/// are running are read while they work: their figures are a snapshot that may be a
/// few blocks off, and blocks on their class caches, windows and cursors not yet handed
/// out count as in use (S4); the calling thread's and parked pools' are exact.
struct process_class_stats {
    std::size_t block_bytes = 0;  ///< the class's bytes (8, 16, ... 32768)
    std::size_t spans = 0;        ///< spans serving the class
    std::size_t blocks = 0;       ///< places for blocks in those spans
    std::size_t blocks_free = 0;  ///< free in their bitmaps and windows (ready to hand out)
    std::size_t bytes_in_use = 0; ///< (blocks - blocks_free) x block_bytes
};

struct process_stats {
    std::array<process_class_stats, detail::class_slots> classes{}; ///< by ordinal, 8 B first
    std::size_t class_count = 0;
    std::size_t pools_made = 0;   ///< thread pools ever made (live and parked)
    std::size_t pools_parked = 0; ///< pools whose thread ended, waiting for a new thread
    std::size_t segments = 0;     ///< 2 MiB segments mapped now
    std::size_t spans_in_use = 0; ///< spans serving a class
    std::size_t spans_clean = 0;  ///< free spans that keep their pages (the purge delay)
    std::size_t spans_purged = 0; ///< free spans whose pages went back (or never came)
    /// Bytes in use: blocks of the classes, of the private heap (32 KiB up to half a
    /// page of the heap tier) and big blocks (each a mapping of its own), and their sum.
    std::size_t class_bytes_in_use = 0;
    std::size_t heap_bytes_in_use = 0;
    std::size_t big_bytes_in_use = 0;
    std::size_t big_blocks = 0;
    std::size_t bytes_in_use = 0;
    /// Bytes free: blocks ready in spans serving a class, clean spans' pages, the
    /// private heaps' free space (walked for the calling thread's and the parked pools';
    /// another running thread's is its heap's mapped bytes less those in use, its blocks'
    /// headers counted as free; Windows does not tell it) and the kept mappings of freed
    /// big blocks.
    std::size_t bytes_free_in_spans = 0;
    std::size_t bytes_clean = 0;
    std::size_t heap_bytes_free = 0;
    std::size_t bytes_retained = 0;
    /// From the OS (os/memory_account.hpp): mapped, held (mapped less purged pages: what
    /// may be resident) and the most held at once; given back so far and segments
    /// unmapped (the states' own counts); the memory limit (0: none) and the mappings
    /// it refused.
    std::size_t bytes_mapped = 0;
    std::size_t bytes_held = 0;
    std::size_t bytes_held_peak = 0;
    std::size_t bytes_given_back = 0;
    std::size_t segments_unmapped = 0;
    std::size_t limit_bytes = 0;
    std::size_t limit_refusals = 0;
};

} // namespace sta

namespace sta::detail {

/// process_stats, after the walk of every state: each class's bytes, the totals, and the
/// OS's figures (os/memory_account.hpp).
template <class Classes>
void finish_process_stats(process_stats& out) noexcept {
    out.class_count = Classes::count;
    for (std::uint32_t n = 0; n < Classes::count; ++n) {
        process_class_stats& c = out.classes[n];
        c.block_bytes = Classes::bytes_of_slot(Classes::slot_of_ordinal(n));
        if (c.blocks_free > c.blocks)
            c.blocks_free = c.blocks;
        c.bytes_in_use = (c.blocks - c.blocks_free) * c.block_bytes;
        out.class_bytes_in_use += c.bytes_in_use;
        out.bytes_free_in_spans += c.blocks_free * c.block_bytes;
    }
    out.big_bytes_in_use = os_memory.big_bytes.load(memory_order_relaxed);
    out.big_blocks = os_memory.big_blocks.load(memory_order_relaxed);
    out.bytes_in_use = out.class_bytes_in_use + out.heap_bytes_in_use + out.big_bytes_in_use;
    out.bytes_mapped = os_memory.mapped.load(memory_order_relaxed);
    out.bytes_held = os_memory.held();
    out.bytes_held_peak = os_memory.peak.load(memory_order_relaxed);
    out.limit_bytes = os_memory.limit.load(memory_order_relaxed);
    out.limit_refusals = os_memory.refused.load(memory_order_relaxed);
}

} // namespace sta::detail
