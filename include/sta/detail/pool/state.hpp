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
#include "sta/detail/os/thread_identity.hpp"
#include "sta/detail/pool/freed_mark.hpp"
#include "sta/detail/pool/purge_delay.hpp"
#include "sta/detail/pool/size_class.hpp"

#include "sta/detail/atomic.hpp"
#include <cstddef>
#include <cstdint>

namespace sta::detail {

/// A span layout's state's huge_pages_from (layout/span_types.hpp) when no segment gets
/// the advice of transparent huge pages; its homes pass it to the states they make.
inline constexpr std::uint32_t huge_pages_never = ~std::uint32_t{0};
/// Where huge pages pay (STA_POOL_HUGE_PAGES 2): from a pool's ninth segment (16 MiB
/// held), or earlier while its blocks are dense (huge_pages_dense).
inline constexpr std::uint32_t huge_pages_auto_from = 8;
/// STA_POOL_HUGE_PAGES as a state's two settings: the segment count, and the density rule.
inline constexpr std::uint32_t default_huge_pages_from = STA_POOL_HUGE_PAGES == 1 ? 0
                                                         : STA_POOL_HUGE_PAGES == 0
                                                             ? huge_pages_never
                                                             : huge_pages_auto_from;
inline constexpr bool default_huge_pages_dense = STA_POOL_HUGE_PAGES == 2;
/// The density rule judges a pool once it holds this many segments: a heap of two (the
/// tree and GUI scenes, 3.5 MiB) keeps plain pages, where huge ones raised their peak RSS
/// from 1.08x and 0.96x glibc's to 1.26x and 1.38x and bought no time that the runs could
/// tell.
inline constexpr std::size_t huge_pages_dense_from = 2;

inline constexpr std::size_t min_page_bytes = std::size_t{256} * 1024;
inline constexpr std::size_t default_page_bytes = std::size_t{1} << 20;
inline constexpr std::size_t max_page_bytes = std::size_t{1} << 30;

/// The link of a free block: its first word.
struct free_block {
    free_block* next;
};

/// Blocks that other threads freed into a per-thread pool, waiting for its owner: a
/// stack linked through the blocks' first words. Any thread pushes with one
/// compare-and-swap; only the owner (or the thread holding a parked state, PH4) takes,
/// all at once, so the links it reads were written before the push that published them.
/// Both are sequentially consistent with a state's `parked` flag (home/per_thread.hpp):
/// a block pushed while its owner parks is taken by the parking thread or by the sender.
struct remote_inbox {
    atomic<void*> head{nullptr};

    /// Any thread. The blocks `first` .. `last`, linked through their first words, are
    /// the sender's no more: `last`'s first word becomes the link to what was there. With
    /// a `key` (a family with freed marks, pool/freed_mark.hpp) the blocks hold the sent
    /// mark over their links (M3, M4), `last`'s new one included.
    void push(void* first, void* last, std::uint64_t key) noexcept {
        void* old = head.load(memory_order_relaxed);
        do
            if (key != 0)
                link_sent(last, old, key);
            else
                hooks::store_link(last, old);
        while (!head.compare_exchange_weak(old, first, memory_order_seq_cst, memory_order_relaxed));
    }
    /// The owner only: every block sent so far (nullptr when none), linked.
    void* take_all() noexcept {
        if (head.load(memory_order_seq_cst) == nullptr)
            return nullptr;
        return head.exchange(nullptr, memory_order_seq_cst);
    }
};

struct pool_state;

/// Blocks a per-thread pool's thread freed for other threads' pools, held to go home a
/// batch at a time: one compare-and-swap on the owner's inbox a batch, where a push a
/// block had the freeing threads of a producer/consumer program contend for the inbox's
/// line on every free. A few ways, each chosen by the owner's address, hold a chain of one
/// owner's blocks (LIFO, linked through their first words like the inbox's):
///
///   ways[0] owner A: head -> b7 -> b3 -> b1 = tail    count 3
///   ways[1] (empty)
///   ways[2] owner C: head -> c2 = tail                count 1
///   ways[3] (empty)
///
/// Only the state's thread touches it (a parked state's is empty: its thread sent every
/// way before parking it). A way goes home when it holds batch_blocks, when a block of
/// another owner needs it, and every way at the thread's slow paths (refill, the caches'
/// flush), trim and end (layout/spans.hpp, send_outbox): a thread that stops freeing holds
/// at most ways * (batch_blocks - 1) blocks of others until then.
struct remote_outbox {
    static constexpr std::uint32_t ways = 4;
    static constexpr std::uint32_t batch_blocks = 32;
    struct way {
        pool_state* owner = nullptr; // whose blocks the chain holds (kept when sent)
        void* head = nullptr;        // the block freed last
        void* tail = nullptr;        // the block freed first: its link is set when sent
        std::uint32_t count = 0;     // blocks on the chain
    };
    way w[ways] = {};
    std::uint32_t held = 0; // blocks on all the chains

    /// The way of `owner`'s blocks: a multiplicative hash of its address, whose low
    /// bits are a page's (states are mapped a few pages each).
    way& way_of(const pool_state* owner) noexcept {
        const auto a = reinterpret_cast<std::uintptr_t>(owner) >> 12;
        return w[static_cast<std::uint64_t>(a) * 0x9E3779B97F4A7C15ull >> 62];
    }
    static_assert(ways == 4, "way_of takes the hash's top two bits");
};

/// A lock held for a few instructions off every fast path: a per-thread family's lists
/// (home/per_thread.hpp) and a parked state.
struct spin_lock {
    atomic_flag taken;
    void lock() noexcept {
        while (taken.test_and_set(memory_order_acquire))
            while (taken.test(memory_order_relaxed))
                yield_thread();
    }
    void unlock() noexcept { taken.clear(memory_order_release); }
};
struct spin_guard {
    explicit spin_guard(spin_lock& l) noexcept : l_(l) { l_.lock(); }
    ~spin_guard() { l_.unlock(); }
    spin_guard(const spin_guard&) = delete;
    spin_guard& operator=(const spin_guard&) = delete;

  private:
    spin_lock& l_;
};

/// The delay a state starts with: STA_POOL_PURGE_DELAY_MS (detail/config.hpp), negative
/// for never.
inline constexpr std::uint32_t default_purge_delay_ms =
    STA_POOL_PURGE_DELAY_MS < 0 ? purge_never : static_cast<std::uint32_t>(STA_POOL_PURGE_DELAY_MS);

/// What the slow paths of a per-thread family's layout ask of its home
/// (home/per_thread.hpp): they are compiled once for every family (tag), and reach the
/// family's own through the state they work on (pool_state::home).
struct home_hooks {
    /// Does some parked state of the family keep free memory for its delay?
    bool (*parked_wait)() noexcept;
    /// What parked states kept, given back once their delay has passed.
    void (*give_back_parked)(std::uint32_t now) noexcept;
    /// A thread pushed blocks onto `owner`'s inbox (taken back at once if it is parked).
    void (*sent_home)(pool_state& owner) noexcept;
    /// The state mapped a segment (the family's count freezes its page size).
    void (*segment_mapped)() noexcept;
    /// The state takes the family's options (purge delay, huge pages, prefault) if they
    /// changed since it last did (pool_state::options_epoch; the drop-in's
    /// sta_malloc_option): called on its slow-path checks.
    void (*take_options)(pool_state& state) noexcept;
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
    /// How long freed memory the pool could give back stays with it: a clean span's
    /// pages (layout/span_life.hpp), a big block's retained mapping (pool/purge_delay.hpp:
    /// the option, and the wait that follows refaults).
    purge_delay purge{default_purge_delay_ms};
    // ---- per-thread pools only (home/per_thread.hpp) ----
    const home_hooks* home = nullptr; // its family's, set when the state is made
    /// The key of its blocks' marks (pool/freed_mark.hpp, M5) in a family with freed
    /// marks (family_freed_marks), set at its first refill, which every state meets before
    /// it hands out a block; 0 in any other family: nonzero says the family marks.
    std::uint64_t mark_key = 0;
    remote_inbox inbox;                // blocks freed by other threads
    remote_outbox outbox;              // blocks this thread freed for other threads
    pool_state* next_parked = nullptr; // the family's parked list (PH1)
    pool_state* next_made = nullptr;   // PH5: the family's list of every state made
    std::uint32_t options_epoch = 0;   // PH6: the family's options it took last
    atomic<bool> parked{false};        // PH4: its thread ended, no thread adopted it since
    /// PH7 (home/per_thread.hpp): taken by its thread's first free of another thread's
    /// block, holding no memory, until its first refill.
    bool taken_for_frees = false;
    spin_lock parked_lock; // PH4: held to change or drain a parked state
    /// Big blocks' mappings kept after their free (STA_POOL_BIG_FROM_OS, pool/next_tiers.hpp).
    retained_mappings retained;
#if STA_POOL_STATS
    std::uint64_t allocations[class_slots] = {};
    std::uint64_t frees[class_slots] = {};
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
