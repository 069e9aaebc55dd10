// sta-pool clients: SQLite on the C API (sta/pool.h) through SQLITE_CONFIG_MALLOC.
//
// SQLite's sqlite3_mem_methods (sqlite.org/c3ref/mem_methods.html): xMalloc,
// xFree, xRealloc take and give int sizes; xSize returns the size of a live
// allocation ("at least as big as the requested size"); xRoundup tells SQLite what
// an allocation of n bytes would really hold, and SQLite then asks for exactly that
// and uses the room. Here xRoundup is sta_good_size (the class size minus the
// header) and xSize is sta_usable_size, so SQLite fills whole classes.
//
// SQLITE_CONFIG_SINGLETHREAD drops SQLite's mutexes: the pool has an owner thread,
// and SQLite must then be used from that thread only.
#pragma once

#include "sta/pool.h"

#include <sqlite3.h>

#include <climits>
#include <cstddef>

namespace sta_clients {

namespace sqlite_on_pool {

inline void* x_malloc(int bytes) {
    return bytes > 0 ? sta_malloc(static_cast<std::size_t>(bytes)) : nullptr;
}
inline void x_free(void* p) {
    sta_free(p);
}
inline void* x_realloc(void* p, int bytes) {
    return bytes > 0 ? sta_realloc(p, static_cast<std::size_t>(bytes)) : nullptr;
}
inline int x_size(void* p) {
    const std::size_t bytes = sta_usable_size(p);
    return bytes > INT_MAX ? INT_MAX : static_cast<int>(bytes);
}
inline int x_roundup(int bytes) {
    if (bytes <= 0)
        return bytes;
    const std::size_t good = sta_good_size(static_cast<std::size_t>(bytes));
    return good > INT_MAX ? bytes : static_cast<int>(good);
}
inline int x_init(void*) {
    return SQLITE_OK;
}
inline void x_shutdown(void*) {}

inline const sqlite3_mem_methods methods = {x_malloc,  x_free, x_realloc,  x_size,
                                            x_roundup, x_init, x_shutdown, nullptr};

} // namespace sqlite_on_pool

/// Before any other SQLite call (or after sqlite3_shutdown): one thread, and, when
/// `on_pool`, every allocation on the pool. SQLITE_OK or SQLite's error code.
inline int configure_sqlite(bool on_pool) {
    int rc = sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    if (rc == SQLITE_OK && on_pool)
        rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &sqlite_on_pool::methods);
    if (rc == SQLITE_OK)
        rc = sqlite3_initialize();
    return rc;
}

} // namespace sta_clients
