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
#include <type_traits>

namespace sta {

namespace detail {

/// Appends formatted text to out[0 .. size - 1] as snprintf would, counting the whole
/// length past the end of the buffer.
struct json_out {
    char* out;
    std::size_t size;
    std::size_t length = 0;
    void text(const char* literal) noexcept { put("%s", literal); }
    template <class Value, class... Values>
    void put(const char* format, Value value, Values... values) noexcept {
        char* const at = length < size ? out + length : nullptr;
        const int n =
            std::snprintf(at, at != nullptr ? size - length : 0, format, value, values...);
        if (n > 0)
            length += static_cast<std::size_t>(n);
    }
};

/// The object's members up to its classes (no closing brace).
inline void put_stats(json_out& j, const process_stats& s) noexcept {
    j.put("{\"bytes\": {\"in_use\": %zu, \"in_use_classes\": %zu, \"in_use_heap\": %zu, "
          "\"in_use_big\": %zu, \"free_in_spans\": %zu, \"clean\": %zu, \"heap_free\": %zu, "
          "\"retained\": %zu, \"mapped\": %zu, \"held\": %zu, \"held_peak\": %zu, "
          "\"given_back\": %zu}",
          s.bytes_in_use, s.class_bytes_in_use, s.heap_bytes_in_use, s.big_bytes_in_use,
          s.bytes_free_in_spans, s.bytes_clean, s.heap_bytes_free, s.bytes_retained, s.bytes_mapped,
          s.bytes_held, s.bytes_held_peak, s.bytes_given_back);
    j.put(", \"limit\": {\"bytes\": %zu, \"refusals\": %zu}", s.limit_bytes, s.limit_refusals);
    j.put(", \"pools\": {\"made\": %zu, \"parked\": %zu}", s.pools_made, s.pools_parked);
    j.put(", \"segments\": {\"mapped\": %zu, \"unmapped\": %zu}", s.segments, s.segments_unmapped);
    j.put(", \"spans\": {\"in_use\": %zu, \"clean\": %zu, \"purged\": %zu}", s.spans_in_use,
          s.spans_clean, s.spans_purged);
    j.put(", \"big_blocks\": %zu, \"classes\": [", s.big_blocks);
    const char* separator = "";
    for (std::size_t n = 0; n < s.class_count; ++n) {
        const process_class_stats& c = s.classes[n];
        if (c.spans == 0)
            continue;
        j.put("%s{\"block_bytes\": %zu, \"spans\": %zu, \"blocks\": %zu, \"blocks_free\": %zu, "
              "\"bytes_in_use\": %zu}",
              separator, c.block_bytes, c.spans, c.blocks, c.blocks_free, c.bytes_in_use);
        separator = ", ";
    }
    j.text("]");
}

} // namespace detail

/// `stats` as one JSON object into out[0 .. size - 1], NUL-terminated when size > 0; the
/// length of the whole object (without the NUL), as snprintf counts it: a result >= size
/// means the buffer was too small and the object is cut.
inline std::size_t write_json(const process_stats& stats, char* out, std::size_t size) noexcept {
    detail::json_out j{out, size};
    detail::put_stats(j, stats);
    j.text("}");
    return j.length;
}

/// write_json of Pool's process_stats with one more member, the heap's spans — what
/// scripts/heap_map.py draws:
///
///   "span_bytes": 65536, "heap": [{"pool": 0, "parked": false, "base": "0x7f...",
///     "huge": false, "spans": [["u", 48, 1365, 12], ["c"], ["p"], ...]}, ...]
///
/// a segment per entry (each pool's newest first), a span per element: "u" one serving
/// a class (its block bytes, blocks, blocks free in its bitmap), "c" clean, "p" purged,
/// "?" one whose role changed under the read (a running thread's pool).
template <class Pool>
std::size_t write_json_with_spans(char* out, std::size_t size) noexcept {
    detail::json_out j{out, size};
    detail::put_stats(j, Pool::process_stats());
    j.put(", \"span_bytes\": %zu, \"heap\": [", std::size_t{64} << 10);
    const char* separator = "";
    Pool::visit_segments(
        [&](std::size_t pool, bool parked, const void* base, bool huge, const auto* spans) {
            j.put("%s{\"pool\": %zu, \"parked\": %s, \"base\": \"%p\", \"huge\": %s, \"spans\": [",
                  separator, pool, parked ? "true" : "false", base, huge ? "true" : "false");
            for (std::size_t k = 0; k < 32; ++k) {
                const auto& v = spans[k];
                using kind = std::remove_cvref_t<decltype(v)>;
                const char* const comma = k == 0 ? "" : ", ";
                if (v.what == kind::in_use)
                    j.put("%s[\"u\", %zu, %u, %u]", comma,
                          static_cast<std::size_t>(Pool::classes::bytes_of_slot(v.slot)), v.blocks,
                          v.blocks_free);
                else
                    j.put("%s[\"%s\"]", comma,
                          v.what == kind::clean    ? "c"
                          : v.what == kind::purged ? "p"
                                                   : "?");
            }
            j.text("]}");
            separator = ", ";
        });
    j.text("]}");
    return j.length;
}

} // namespace sta
