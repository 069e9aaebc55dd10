// sta-pool: what every pool holds whatever its layout.
//
// A pool's state is a constant-initialised struct: this common part, extended by the
// layout (layout/shared_cursor.hpp, layout/spans.hpp) and, for the table dispatch, by
// its two tables. A seed-mode pool has one for the program, a per-thread pool one per
// thread (home/per_thread.hpp says where they live). Nothing in it needs a constructor to
// run, so a pool works from any global constructor.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/diag/owner_mark.hpp"
#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/heaps/private_heap.hpp"
#include "sta/detail/heaps/retained_mappings.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/size_class.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace sta::detail {

inline constexpr std::size_t min_page_bytes = std::size_t{256} * 1024;
inline constexpr std::size_t default_page_bytes = std::size_t{1} << 20;
inline constexpr std::size_t max_page_bytes = std::size_t{1} << 30;

/// The link of a free block: its first word.
struct free_block {
    free_block* next;
};

/// Blocks that other threads freed into a per-thread pool, waiting for its owner: a
/// stack linked through the blocks' first words. Any thread pushes with one
/// compare-and-swap (release); only the owner takes, all at once (acquire), so the
/// links it reads were written before the push that published them.
struct remote_inbox {
    std::atomic<void*> head{nullptr};

    /// Any thread. The block is the sender's no more: its first word becomes the link.
    void push(void* block) noexcept {
        void* old = head.load(std::memory_order_relaxed);
        do
            hooks::store_link(block, old);
        while (!head.compare_exchange_weak(old, block, std::memory_order_release,
                                           std::memory_order_relaxed));
    }
    /// The owner only: every block sent so far (nullptr when none), linked.
    void* take_all() noexcept {
        if (head.load(std::memory_order_relaxed) == nullptr)
            return nullptr;
        return head.exchange(nullptr, std::memory_order_acquire);
    }
};

struct pool_state {
    /// The page size: the unit the shared-cursor layout maps, and for every layout the
    /// bound of the private-heap tier (page_bytes / 2). Frozen once memory is held.
    std::size_t page_bytes = default_page_bytes;
    /// OS mappings made: pages of page_bytes (shared cursor) or segments (spans).
    std::size_t mappings = 0;
    map_pages_fn map_pages = &os_map_pages; // tests swap in a failing source
    /// Seed mode, checked builds: the owner thread (the thread rule, diag/owner_mark.hpp).
    [[no_unique_address]] owner_mark owner;
    void* checked = nullptr; // seed mode, checked builds: the registry of live blocks
    /// The tier above 32 KiB (pool/next_tiers.hpp): each pool state has its own.
    private_heap heap{};
    // ---- per-thread pools only (home/per_thread.hpp) ----
    remote_inbox inbox;                // blocks freed by other threads
    pool_state* next_parked = nullptr; // the family's parked list (H1)
    /// Big blocks' mappings kept after their free (STA_POOL_BIG_FROM_OS, pool/next_tiers.hpp).
    retained_mappings retained;
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

} // namespace sta::detail
