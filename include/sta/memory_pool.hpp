// sta-pool: sta::memory_pool — a pool for memory that lives on one thread.
//
// Power-of-two size classes from 8 B to 32 KiB, found with one lzcnt; LIFO free
// lists over pages from the OS, bump allocation in the newest page; sizes above
// 32 KiB go to the next tiers. All functions are static: there is one pool per
// (dispatch policy, tag) pair for the whole program, constant-initialised, so it
// works from any global constructor or destructor.
//
// The thread rule: a pool belongs to the first thread that calls it. No atomics,
// no locks. Checked builds (STA_POOL_CHECKS, on unless NDEBUG) abort with a message
// naming both threads when another thread calls; release builds do not check.
//
// Memory is kept until the process ends: pages are never returned to the OS.
#pragma once

#include "sta/detail/checked.hpp"
#include "sta/detail/config.hpp"
#include "sta/detail/dispatch_branch.hpp"
#include "sta/detail/dispatch_table.hpp"
#include "sta/detail/pool_state.hpp"
#include "sta/detail/size_class.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace sta {

// ---------------------------------------------------------------------------------
// Dispatch policies: how alloc finds its way from a size to a block.
// ---------------------------------------------------------------------------------
namespace dispatch {

/// The seed's design: tables of 33 function pointers; each alloc slot rewrites itself
/// between bump<N> and get<N> (see detail/dispatch_table.hpp).
struct self_rewriting_table {
    template <class Tag>
    using engine = detail::table_engine<Tag>;
};

/// "free list non-empty ? pop : bump", inlined at the call site
/// (see detail/dispatch_branch.hpp).
struct inline_branch {
    template <class Tag>
    using engine = detail::branch_engine<Tag>;
};

/// The policy of sta::memory_pool, chosen by measurement (docs/dispatch.md): fewer
/// instructions than the table on every compile-time-size pattern (callgrind, 32 B:
/// fresh 10 vs 11, pure get 6 vs 9, free + alloc 11 vs 15) and no indirect call.
using default_policy = inline_branch;

} // namespace dispatch

// ---------------------------------------------------------------------------------
// Statistics: derived when asked; counters only with STA_POOL_STATS.
// ---------------------------------------------------------------------------------

struct class_stats {
    std::size_t block_bytes = 0;   ///< 8, 16, ... 32768
    std::size_t free_blocks = 0;   ///< length of the free list (walked)
    std::size_t live_blocks = 0;   ///< STA_POOL_STATS only: allocations - frees
    std::uint64_t allocations = 0; ///< STA_POOL_STATS only
    std::uint64_t frees = 0;       ///< STA_POOL_STATS only
};

struct pool_stats {
    std::array<class_stats, detail::class_count> classes{}; ///< 8 B first, 32 KiB last
    std::size_t page_bytes = 0;
    std::size_t pages_mapped = 0;
    std::size_t bytes_reserved = 0; ///< pages_mapped * page_bytes
    std::size_t bytes_free = 0;     ///< free lists + the unused bump range
    std::size_t bytes_in_use = 0;   ///< reserved - bytes_free (headers lie outside)
    /// With STA_POOL_STATS: the most bytes in use at once. Without: the bytes ever
    /// taken from pages (an upper bound of it).
    std::size_t bytes_in_use_high_water = 0;
    bool counters = STA_POOL_STATS != 0; ///< allocations/frees/live_blocks are counted
};

// ---------------------------------------------------------------------------------
// The pool.
// ---------------------------------------------------------------------------------

/// A single-thread pool. `Dispatch` is one of the policies above; `Tag` makes a
/// separate pool with its own pages (tests use it to start from a clean state).
template <class Dispatch, class Tag = void>
class basic_memory_pool {
  public:
    using engine = typename Dispatch::template engine<Tag>;

    static constexpr std::size_t min_page_bytes = detail::min_page_bytes;
    static constexpr std::size_t default_page_bytes = detail::default_page_bytes;
    static constexpr std::size_t max_page_bytes = detail::max_page_bytes;
    static constexpr std::size_t max_pooled_bytes = detail::max_class_bytes;

    /// A block of at least `bytes`, aligned to min(bit_ceil(bytes), 16); a unique
    /// block for 0. nullptr only when the OS (or malloc, above 32 KiB) refuses.
    [[nodiscard]] STA_FORCE_INLINE static void* alloc(std::size_t bytes) noexcept {
        detail::check_owner(engine::state(), engine::name);
        void* p = engine::alloc(bytes);
        after_alloc(p, bytes);
        return p;
    }

    /// alloc with the size known at compile time: the slot is resolved by the compiler.
    template <std::uint32_t Bytes>
    [[nodiscard]] STA_FORCE_INLINE static void* alloc() noexcept {
        detail::check_owner(engine::state(), engine::name);
        void* p = engine::template alloc<Bytes>();
        after_alloc(p, Bytes);
        return p;
    }

    /// Give back a block; `bytes` is the size it was allocated (or last reallocated)
    /// with. free(nullptr, n) does nothing.
    STA_FORCE_INLINE static void free(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return;
        detail::check_owner(engine::state(), engine::name);
        before_free(p, bytes);
        engine::free(p, bytes);
    }

    template <std::uint32_t Bytes>
    STA_FORCE_INLINE static void free(void* p) noexcept {
        if (p == nullptr)
            return;
        detail::check_owner(engine::state(), engine::name);
        before_free(p, Bytes);
        engine::template free<Bytes>(p);
    }

    /// Resize a block. Same pointer while the class does not change; a shrink within
    /// the pool never moves and never fails (the tail goes back to the free lists); a
    /// block that is the last one bumped grows in place when the page has room. On
    /// failure: nullptr, and the old block stays valid and unchanged.
    /// realloc(nullptr, 0, n) is alloc(n).
    [[nodiscard]] static void* realloc(void* p, std::size_t old_bytes,
                                       std::size_t new_bytes) noexcept {
        if (p == nullptr)
            return alloc(new_bytes);
        detail::check_owner(engine::state(), engine::name);
#if STA_POOL_CHECKS
        detail::checked_live(engine::state(), engine::name, p, old_bytes, "reallocated");
#endif
        const bool old_pooled = detail::is_pooled_size(old_bytes);
        const bool new_pooled = detail::is_pooled_size(new_bytes);
        if (old_pooled && new_pooled) {
            const std::size_t old_class = detail::class_bytes_of_size(old_bytes);
            const std::size_t new_class = detail::class_bytes_of_size(new_bytes);
            auto* const block = static_cast<std::byte*>(p);
            bool in_place = new_class == old_class;
            if (new_class < old_class) {
                core::shrink(block, old_class, new_class);
                in_place = true;
            } else if (new_class > old_class) {
                in_place = core::grow_in_place(block, old_class, new_class);
            }
            if (in_place) {
                count_free(old_bytes);
                count_alloc(new_bytes);
                detail::hooks::block_resized(p, old_bytes, new_bytes, new_class);
#if STA_POOL_CHECKS
                detail::checked_moved(engine::state(), reinterpret_cast<std::uintptr_t>(p),
                                      reinterpret_cast<std::uintptr_t>(p), new_bytes);
#endif
                return p;
            }
        } else if (!old_pooled && !new_pooled) {
#if STA_POOL_CHECKS
            // Forget the block before realloc may free it; record whichever survives.
            const auto old_address = reinterpret_cast<std::uintptr_t>(p);
            detail::checked_moved(engine::state(), old_address, 0, 0);
#endif
            void* q = detail::next_tiers<engine>::realloc(p, old_bytes, new_bytes);
#if STA_POOL_CHECKS
            if (q != nullptr)
                detail::checked_moved(engine::state(), 0, reinterpret_cast<std::uintptr_t>(q),
                                      new_bytes);
            else
                detail::checked_moved(engine::state(), 0, old_address, old_bytes);
#endif
            return q;
        }
        // Between classes or tiers: move. A shrink from above 32 KiB into the pool
        // moves too, because the sized free must find the block where its size says.
        void* q = alloc(new_bytes);
        if (q == nullptr)
            return nullptr;
        std::memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
        free(p, old_bytes);
        return q;
    }

    /// Choose the page size, once, before the first allocation. A power of two in
    /// [256 KiB, 1 GiB]; the default is 1 MiB.
    static void set_page_bytes(std::size_t bytes) {
        detail::check_owner(engine::state(), engine::name);
        const std::string where =
            std::string(engine::name) + "::set_page_bytes(" + std::to_string(bytes) + "): ";
        if (engine::state().pages_mapped != 0 || detail::next_tiers<engine>::heap.holds_memory())
            throw std::logic_error(where + "the pool has already mapped a page; the page size "
                                           "is chosen once, before the first allocation");
        if (bytes < min_page_bytes)
            throw std::invalid_argument(where + "below the minimum of 262144 bytes (256 KiB)");
        if (bytes > max_page_bytes)
            throw std::invalid_argument(where + "above the maximum of 1073741824 bytes (1 GiB)");
        if (!std::has_single_bit(bytes))
            throw std::invalid_argument(where + "not a power of two");
        engine::state().page_bytes = bytes;
    }

    static std::size_t page_bytes() noexcept {
        return engine::state().page_bytes;
    }

    /// What the pool holds now. Walks the free lists: O(free blocks), not for hot loops.
    static pool_stats stats() noexcept {
        detail::check_owner(engine::state(), engine::name);
        const detail::pool_state& s = engine::state();
        pool_stats out;
        out.page_bytes = s.page_bytes;
        out.pages_mapped = s.pages_mapped;
        out.bytes_reserved = s.pages_mapped * s.page_bytes;
        out.bytes_free = static_cast<std::size_t>(s.end - s.cursor);
        for (std::uint32_t i = 0; i < detail::class_count; ++i) {
            const std::uint32_t slot = detail::smallest_class_slot - i;
            class_stats& c = out.classes[i];
            c.block_bytes = detail::class_bytes_of_slot(slot);
            for (void* b = s.heads[slot]; b != nullptr; b = detail::hooks::load_link(b))
                ++c.free_blocks;
            out.bytes_free += c.free_blocks * c.block_bytes;
#if STA_POOL_STATS
            c.allocations = s.allocations[slot];
            c.frees = s.frees[slot];
            c.live_blocks = static_cast<std::size_t>(c.allocations - c.frees);
#endif
        }
        out.bytes_in_use = out.bytes_reserved - out.bytes_free;
#if STA_POOL_STATS
        out.bytes_in_use_high_water = s.bytes_in_use_high_water;
#else
        out.bytes_in_use_high_water =
            out.bytes_reserved - static_cast<std::size_t>(s.end - s.cursor);
#endif
        return out;
    }

    /// White-box access for the accounting checker and the tests; not an API.
    static detail::pool_state& detail_state() noexcept {
        return engine::state();
    }
    static const char* name() noexcept {
        return engine::name;
    }

  private:
    using core = detail::pool_core<engine>;

    // The hook sites of the pool. In a release build without a tool backend,
    // without STA_POOL_STATS and without STA_POOL_CHECKS they compile to nothing;
    // tests/hooks_cost proves it against a build with them cut out
    // (STA_POOL_NO_HOOKS, for that test only).
    STA_FORCE_INLINE static void after_alloc([[maybe_unused]] void* p,
                                             [[maybe_unused]] std::size_t bytes) noexcept {
#if !STA_POOL_NO_HOOKS
        if (p == nullptr)
            return;
        if (detail::is_pooled_size(bytes)) {
            detail::hooks::block_allocated(p, bytes, detail::class_bytes_of_size(bytes));
            count_alloc(bytes);
        }
#if STA_POOL_CHECKS
        detail::checked_allocated(engine::state(), p, bytes);
#endif
#endif
    }
    STA_FORCE_INLINE static void before_free([[maybe_unused]] void* p,
                                             [[maybe_unused]] std::size_t bytes) noexcept {
#if !STA_POOL_NO_HOOKS
#if STA_POOL_CHECKS
        detail::checked_freed(engine::state(), engine::name, p, bytes);
#endif
        if (detail::is_pooled_size(bytes)) {
            detail::hooks::block_freed(p, detail::class_bytes_of_size(bytes));
            count_free(bytes);
        }
#endif
    }
    STA_FORCE_INLINE static void count_alloc([[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_STATS
        detail::pool_state& s = engine::state();
        ++s.allocations[detail::canonical_slot(detail::slot_of(bytes ? bytes : 1))];
        s.bytes_in_use += detail::class_bytes_of_size(bytes);
        if (s.bytes_in_use > s.bytes_in_use_high_water)
            s.bytes_in_use_high_water = s.bytes_in_use;
#endif
    }
    STA_FORCE_INLINE static void count_free([[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_STATS
        detail::pool_state& s = engine::state();
        ++s.frees[detail::canonical_slot(detail::slot_of(bytes ? bytes : 1))];
        s.bytes_in_use -= detail::class_bytes_of_size(bytes);
#endif
    }
};

/// The pool most code wants: the default dispatch policy, one per program.
using memory_pool = basic_memory_pool<dispatch::default_policy>;

} // namespace sta
