/* sta-pool: the C API — malloc-style functions over sta::memory_pool for callers
 * that free without a size (C libraries: SQLite, libxml2, ...).
 *
 * What lives here: the declarations of sta_malloc, sta_free, sta_realloc,
 * sta_usable_size and sta_good_size, with C linkage, usable from C (C99 or later) and
 * C++. The definitions are C++ (they sit on sta::memory_pool); exactly one C++
 * translation unit of a program emits them:
 *
 *     #define STA_POOL_C_IMPLEMENTATION
 *     #include "sta/pool.h"
 *
 * How a block finds its size depends on sta::memory_pool's layout
 * (sta::layout::default_layout, chosen by STA_POOL_SPANS in detail/config.hpp); both
 * heaps are drawn in detail/c_api/header_heap.hpp and span_heap.hpp. Either way sta_free ends in
 * the pool's sized free, so the sized C++ path pays nothing for this API.
 *
 *   shared cursor (STA_POOL_SPANS=0): c_header_heap. A header of
 *     STA_POOL_C_HEADER_BYTES bytes in front of the pointer holds the requested size.
 *     Memory cost: the header, and the class rounding of (size + header): a 120-byte
 *     request takes a 128-byte block with the default 8-byte header, a 128-byte
 *     request a 256-byte one. Alignment: STA_POOL_C_HEADER_BYTES (default 8). That
 *     covers every type of the clients here (SQLite documents that 8 is enough);
 *     glibc's malloc gives 16, and a program that needs 16 (long double, SSE types in
 *     malloc'd memory) builds every translation unit with -DSTA_POOL_C_HEADER_BYTES=16,
 *     which costs a class step for sizes just below a power of two (measured in
 *     docs/clients.md).
 *   spans (STA_POOL_SPANS=1, the default): c_span_heap. A block of up to 32 KiB has no
 *     header: its span, found by masking the address, names its class, and the block
 *     is the whole class of max(size, 16) (a 120- or 128-byte request takes 128 bytes).
 *     A poor fit — above 1 KiB, a size its class would round up by more than a quarter
 *     (4300 bytes would take 8 KiB) — goes to the pool's private heap instead, with a
 *     16-byte header holding its size, as does every block above 32 KiB.
 *     Alignment: 16, like glibc. STA_POOL_C_HEADER_BYTES plays no part.
 *
 * sta_good_size tells a caller that can use spare room (SQLite's xRoundup) how much
 * the block really holds.
 *
 * Statistics as one JSON object (sta/stats_json.hpp has its shape; docs/malloc.md,
 * "Statistics", its figures), written into buffer[0 .. size - 1] and NUL-terminated; the
 * result is the object's whole length, so that one >= size asks for a larger buffer:
 *   sta_pool_stats_json      every pool of sta::memory_pool's family (spans: each
 *                            thread's and the parked ones), defined with the functions above
 *   sta_malloc_stats_json    the drop-in malloc's, defined by libsta_malloc.so only (a
 *                            program finds it at run time: dlsym(RTLD_DEFAULT, ...))
 *
 * sta_malloc_option(name, old_value, new_value), libsta_malloc.so's only: one of its
 * options read (into *old_value, when not NULL) and then set (to *new_value, when not
 * NULL) while the program runs; 0, or EINVAL for an unknown name or a value out of range
 * (nothing is set). docs/malloc.md ("Options") lists them: purge_delay_ms (-1: never),
 * huge_pages (0, 1, 2: where dense), prefault, checks, retain_mib, limit_mib.
 *
 * The rules are the pool's: on spans every thread has a pool of its own and may free
 * any block (one from another thread's pool goes back to it); on the shared cursor the
 * pool belongs to the first thread that called it (C++ or C). A checked build
 * (STA_POOL_CHECKS, on unless NDEBUG) reports a call from another thread where that is
 * the rule, a double free, and a pointer that is no live block. With the header (c_header_heap, and
 * blocks above 32 KiB on spans) a damaged header shows as a size mismatch, and the block a report
 * names is the header, p minus the header size; a pooled block on spans is named by p itself.
 *
 * Edge cases, all defined here (both heaps):
 *   sta_malloc(0)            NULL (no block; C lets malloc(0) choose)
 *   sta_malloc(huge)         NULL and errno = ENOMEM, when size + header would exceed
 *                            PTRDIFF_MAX or the memory is not there
 *   sta_free(NULL)           does nothing
 *   sta_realloc(NULL, n)     sta_malloc(n)
 *   sta_realloc(p, 0)        frees p and returns NULL (glibc's choice; C23 leaves it
 *                            undefined, so portable callers should not rely on it)
 *   sta_realloc failure      NULL, errno = ENOMEM, p unchanged and still owned
 *   sta_realloc shrink       never fails while the old block is pooled (at most
 *                            32 KiB - header; 32 KiB on spans); from above that into
 *                            the pool it moves and can fail (then p is intact).
 *                            Header: a shrink in the pool never moves. Spans: a
 *                            shrink within the class keeps p, one to a smaller class
 *                            moves, or keeps p in its class when no memory is left
 *   sta_usable_size(p)       header: the size last requested for p (bytes past it
 *                            are poisoned under ASan); spans: the class bytes of a
 *                            pooled block, all of them the caller's, and the size
 *                            last requested above 32 KiB; 0 for NULL
 *   sta_good_size(n)         the largest size whose block costs what n's does; n
 *                            itself above the pool's classes (and for 0)
 */
#ifndef STA_POOL_H
#define STA_POOL_H

#include <stddef.h>

#ifndef STA_POOL_C_HEADER_BYTES
#define STA_POOL_C_HEADER_BYTES 8
#endif

#ifdef __cplusplus
extern "C" {
#endif

void* sta_malloc(size_t size);
void sta_free(void* p);
void* sta_realloc(void* p, size_t size);
size_t sta_usable_size(const void* p);
size_t sta_good_size(size_t size);
size_t sta_pool_stats_json(char* buffer, size_t size);
size_t sta_malloc_stats_json(char* buffer, size_t size);
int sta_malloc_option(const char* name, long long* old_value, const long long* new_value);

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus) && defined(STA_POOL_C_IMPLEMENTATION)
#include "sta/detail/c_api/header_heap.hpp"
#include "sta/detail/c_api/span_heap.hpp"
#include "sta/memory_pool.hpp"
#include "sta/stats_json.hpp"

#include <type_traits>

namespace sta::detail {
/// The span layout finds a block's class from its address; the seed's layout needs
/// the header.
using c_api_heap = std::conditional_t<std::is_same_v<memory_pool::layout_policy, layout::spans>,
                                      c_span_heap<memory_pool>,
                                      c_header_heap<memory_pool, STA_POOL_C_HEADER_BYTES>>;
/// The family's statistics; on the seed's layout, only what the library holds from the
/// OS (it has no walk of its pages).
template <class Pool>
process_stats c_api_process_stats() noexcept {
    process_stats stats;
    if constexpr (requires { Pool::process_stats(); })
        stats = Pool::process_stats();
    else
        finish_process_stats<typename Pool::classes>(stats);
    return stats;
}
} // namespace sta::detail

extern "C" void* sta_malloc(size_t size) {
    return sta::detail::c_api_heap::malloc(size);
}
extern "C" void sta_free(void* p) {
    sta::detail::c_api_heap::free(p);
}
extern "C" void* sta_realloc(void* p, size_t size) {
    return sta::detail::c_api_heap::realloc(p, size);
}
extern "C" size_t sta_usable_size(const void* p) {
    return sta::detail::c_api_heap::usable_size(p);
}
extern "C" size_t sta_good_size(size_t size) {
    return sta::detail::c_api_heap::good_size(size);
}
extern "C" size_t sta_pool_stats_json(char* buffer, size_t size) {
    return sta::write_json(sta::detail::c_api_process_stats<sta::memory_pool>(), buffer, size);
}
#endif

#endif /* STA_POOL_H */
