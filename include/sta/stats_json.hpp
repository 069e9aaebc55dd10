// sta-pool: a process_stats (sta::memory_pool::process_stats, detail/pool/stats.hpp) as one
// JSON object — what the drop-in's sta_malloc_stats_json and STA_MALLOC_STATS=json write,
// and the C API's sta_pool_stats_json (sta/pool.h). Written with snprintf into the caller's
// buffer: nothing is allocated, so it may run where malloc may not (at exit, in the
// drop-in itself).
//
//   {"bytes": {"in_use": ..., "in_use_classes": ..., "in_use_heap": ..., "in_use_big": ...,
//              "free_in_spans": ..., "clean": ..., "heap_free": ..., "retained": ...,
//              "mapped": ..., "held": ..., "held_peak": ..., "given_back": ...},
//    "limit": {"bytes": ..., "refusals": ...},
//    "pools": {"made": ..., "parked": ...},
//    "segments": {"mapped": ..., "unmapped": ...},
//    "spans": {"in_use": ..., "clean": ..., "purged": ...},
//    "big_blocks": ...,
//    "classes": [{"block_bytes": 16, "spans": ..., "blocks": ..., "blocks_free": ...,
//                 "bytes_in_use": ...}, ...]}      (the classes that have a span)
//
// docs/malloc.md ("Statistics") says what each figure is.
#pragma once

#include "sta/detail/pool/stats.hpp"

#include <cstddef>
#include <cstdio>

namespace sta {

/// `stats` as one JSON object into out[0 .. size - 1], NUL-terminated when size > 0; the
/// length of the whole object (without the NUL), as snprintf counts it: a result >= size
/// means the buffer was too small and the object is cut.
inline std::size_t write_json(const process_stats& stats, char* out, std::size_t size) noexcept {
    std::size_t length = 0;
    const auto put = [&](const char* format, auto... values) {
        char* const at = length < size ? out + length : nullptr;
        const int n = std::snprintf(at, at != nullptr ? size - length : 0, format, values...);
        if (n > 0)
            length += static_cast<std::size_t>(n);
    };
    const process_stats& s = stats;
    put("{\"bytes\": {\"in_use\": %zu, \"in_use_classes\": %zu, \"in_use_heap\": %zu, "
        "\"in_use_big\": %zu, \"free_in_spans\": %zu, \"clean\": %zu, \"heap_free\": %zu, "
        "\"retained\": %zu, \"mapped\": %zu, \"held\": %zu, \"held_peak\": %zu, "
        "\"given_back\": %zu}",
        s.bytes_in_use, s.class_bytes_in_use, s.heap_bytes_in_use, s.big_bytes_in_use,
        s.bytes_free_in_spans, s.bytes_clean, s.heap_bytes_free, s.bytes_retained, s.bytes_mapped,
        s.bytes_held, s.bytes_held_peak, s.bytes_given_back);
    put(", \"limit\": {\"bytes\": %zu, \"refusals\": %zu}", s.limit_bytes, s.limit_refusals);
    put(", \"pools\": {\"made\": %zu, \"parked\": %zu}", s.pools_made, s.pools_parked);
    put(", \"segments\": {\"mapped\": %zu, \"unmapped\": %zu}", s.segments, s.segments_unmapped);
    put(", \"spans\": {\"in_use\": %zu, \"clean\": %zu, \"purged\": %zu}", s.spans_in_use,
        s.spans_clean, s.spans_purged);
    put(", \"big_blocks\": %zu, \"classes\": [", s.big_blocks);
    const char* separator = "";
    for (std::size_t n = 0; n < s.class_count; ++n) {
        const process_class_stats& c = s.classes[n];
        if (c.spans == 0)
            continue;
        put("%s{\"block_bytes\": %zu, \"spans\": %zu, \"blocks\": %zu, \"blocks_free\": %zu, "
            "\"bytes_in_use\": %zu}",
            separator, c.block_bytes, c.spans, c.blocks, c.blocks_free, c.bytes_in_use);
        separator = ", ";
    }
    put("]}");
    return length;
}

} // namespace sta
