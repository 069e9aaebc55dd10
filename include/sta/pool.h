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
 * How a block finds its size: a header of STA_POOL_C_HEADER_BYTES bytes in front of
 * the pointer the caller gets holds the requested size (detail/c_heap.hpp draws it).
 * sta_free reads it and calls the pool's sized free, so the sized C++ path pays
 * nothing for this API. Memory cost: the header, and the class rounding of
 * (size + header): a 120-byte request takes a 128-byte block with the default 8-byte
 * header, a 128-byte request a 256-byte one. sta_good_size tells a caller that can use
 * spare room (SQLite's xRoundup) how much the block really holds.
 *
 * Alignment: STA_POOL_C_HEADER_BYTES (default 8). That covers every type of the
 * clients here (SQLite documents that 8 is enough); glibc's malloc gives 16, and a
 * program that needs 16 (long double, SSE types in malloc'd memory) builds every
 * translation unit with -DSTA_POOL_C_HEADER_BYTES=16, which costs a class step for
 * sizes just below a power of two (measured in docs/clients.md).
 *
 * The rules are the pool's: a block belongs to the pool's owner thread, the first
 * thread that called it (C++ or C); a checked build (STA_POOL_CHECKS, on unless NDEBUG)
 * reports a call from another thread, a double free, and a damaged header (the pool
 * sees a size mismatch) — the block it names is the header, p - STA_POOL_C_HEADER_BYTES.
 *
 * Edge cases, all defined here:
 *   sta_malloc(0)            NULL (no block; C lets malloc(0) choose)
 *   sta_malloc(huge)         NULL and errno = ENOMEM, when size + header would exceed
 *                            PTRDIFF_MAX or the memory is not there
 *   sta_free(NULL)           does nothing
 *   sta_realloc(NULL, n)     sta_malloc(n)
 *   sta_realloc(p, 0)        frees p and returns NULL (glibc's choice; C23 leaves it
 *                            undefined, so portable callers should not rely on it)
 *   sta_realloc failure      NULL, errno = ENOMEM, p unchanged and still owned
 *   sta_realloc shrink       never moves and never fails while the old size is at most
 *                            32 KiB - header; from above that into the pool it moves
 *                            and can fail (then p is intact)
 *   sta_usable_size(p)       the size last requested for p (not the class: bytes
 *                            past it are poisoned under ASan); 0 for NULL
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

#ifdef __cplusplus
} /* extern "C" */
#endif

#if defined(__cplusplus) && defined(STA_POOL_C_IMPLEMENTATION)
#include "sta/detail/c_heap.hpp"
#include "sta/memory_pool.hpp"

#include <type_traits>

namespace sta::detail {
/// The span layout finds a block's class from its address; the seed's layout needs
/// the header.
using c_api_heap =
    std::conditional_t<std::is_same_v<memory_pool::layout_policy, layout::spans>,
                       c_span_heap<memory_pool>, c_heap<memory_pool, STA_POOL_C_HEADER_BYTES>>;
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
#endif

#endif /* STA_POOL_H */
