// sta-pool: what stats() reports. Derived when asked; counters only with STA_POOL_STATS.
#pragma once

#include "sta/detail/config.hpp"
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

} // namespace sta
