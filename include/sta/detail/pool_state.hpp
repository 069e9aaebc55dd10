// sta-pool: what every pool holds whatever its layout, and the owner-thread rule.
//
// A pool's state is one constant-initialised struct per (dispatch, layout, tag):
// this common part, extended by the layout (layout_shared_cursor.hpp,
// layout_spans.hpp) and, for the table dispatch, by its two tables. Nothing in it
// needs a constructor to run, so a pool works from any global constructor.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/page_source.hpp"
#include "sta/detail/size_class.hpp"
#include "sta/detail/thread_identity.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace sta::detail {

inline constexpr std::size_t min_page_bytes = std::size_t{256} * 1024;
inline constexpr std::size_t default_page_bytes = std::size_t{1} << 20;
inline constexpr std::size_t max_page_bytes = std::size_t{1} << 30;

/// The link of a free block: its first word.
struct free_block {
    free_block* next;
};

struct pool_state {
    /// The page size: the unit the shared-cursor layout maps, and for every layout the
    /// bound of the private-heap tier (page_bytes / 2). Frozen once memory is held.
    std::size_t page_bytes = default_page_bytes;
    /// OS mappings made: pages (shared cursor) or segments (spans).
    std::size_t pages_mapped = 0;
    map_pages_fn map_pages = &os_map_pages; // tests swap in a failing source
    std::uintptr_t owner_key = 0;           // checked builds: the owner thread
    unsigned long owner_number = 0;
    void* checked = nullptr; // checked builds: the registry of live blocks (checked.hpp)
#if STA_POOL_STATS
    std::uint64_t allocations[slot_count] = {};
    std::uint64_t frees[slot_count] = {};
    std::size_t bytes_in_use = 0;
    std::size_t bytes_in_use_high_water = 0;
#endif
};

/// A pool's state, reached through a base register. The state is a global, so the
/// compiler would address its list heads relative to the instruction pointer; a pop
/// that reloads a head just stored at a `[rip + disp]` address runs about 1.9x slower
/// on this project's machines than one at `[register + disp]` (docs/dispatch.md, "The
/// free-list floor"). The empty asm hides where the pointer points, so the compiler
/// keeps it in a register, hoisted out of the caller's loop; it emits no instruction.
template <class State>
STA_FORCE_INLINE State& through_register(State& state) noexcept {
#if defined(__GNUC__)
    State* p = &state;
    __asm__("" : "+r"(p));
    return *p;
#else
    return state;
#endif
}

/// Misuse in a checked build: print one line that says what happened, then abort.
[[noreturn]] STA_COLD inline void report_misuse(const char* pool_name, const char* what) noexcept {
    std::fprintf(stderr, "sta-pool: %s: %s\n", pool_name, what);
    std::fflush(stderr);
    std::abort();
}

/// The owner-thread rule. The first thread to call a pool owns it.
STA_COLD inline void claim_or_die(pool_state& s, const char* pool_name) noexcept {
    if (s.owner_key == 0) {
        s.owner_key = thread_key();
        s.owner_number = thread_number();
        return;
    }
    char line[256];
    std::snprintf(line, sizeof line,
                  "called from thread %lu, but the pool belongs to thread %lu; a pool is used "
                  "by one thread only (see the README, \"The thread rule\")",
                  thread_number(), s.owner_number);
    report_misuse(pool_name, line);
}

STA_FORCE_INLINE void check_owner([[maybe_unused]] pool_state& s,
                                  [[maybe_unused]] const char* pool_name) noexcept {
#if STA_POOL_CHECKS
    if (s.owner_key != thread_key()) [[unlikely]]
        claim_or_die(s, pool_name);
#endif
}

} // namespace sta::detail
