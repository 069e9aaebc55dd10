// sta-pool: sta::memory_pool — a pool for memory that lives on one thread.
//
// Size classes from 8 B to 32 KiB, found with one lzcnt: four per power of two on the
// span layout, the seed's powers of two on its shared cursor and under its tables
// (detail/pool/size_class.hpp); sizes above 32 KiB go to the next tiers. All functions are static:
// a (dispatch, tag, layout, threads) combination names one pool family, constant-initialised, so it
// works from any global constructor or destructor.
//
// The thread rule, chosen by the Threads policy (detail/home/one_owner.hpp,
// detail/home/per_thread.hpp):
//   threads::per_thread (the default): every thread allocates from a pool of its own,
//     with no atomics, locks or fences on its path; a block may be freed by any
//     thread, and goes back to the pool it came from; a pool whose thread ended is
//     adopted by the next thread that needs one.
//   threads::one_owner (the seed's mode): one pool for the program, owned by the first
//     thread that calls it. No atomics, no locks. Checked builds (STA_POOL_CHECKS, on
//     unless NDEBUG) abort with a message naming both threads when another thread
//     calls; release builds do not check.
//
// Memory goes back to the OS: the span layout gives a span whose blocks have all come
// back after the purge delay (set_purge_delay, trim); the seed's shared cursor keeps its
// pages until the process ends.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/diag/bad_argument.hpp"
#include "sta/detail/dispatch/contract.hpp"
#include "sta/detail/dispatch/inline_branch.hpp"
#include "sta/detail/dispatch/self_rewriting_table.hpp"
#include "sta/detail/home/one_owner.hpp"
#include "sta/detail/home/per_thread.hpp"
#include "sta/detail/layout/shared_cursor.hpp"
#include "sta/detail/layout/spans.hpp"
#include "sta/detail/pool/checked_build.hpp"
#include "sta/detail/pool/size_class.hpp"
#include "sta/detail/pool/state.hpp"
#include "sta/detail/pool/stats.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace sta {

// ---------------------------------------------------------------------------------
// Dispatch policies: how alloc finds its way from a size to a block.
// ---------------------------------------------------------------------------------
namespace dispatch {

/// The seed's design: tables of 33 function pointers; each alloc slot rewrites itself
/// between bump<N> and get<N> (see detail/dispatch/self_rewriting_table.hpp).
struct self_rewriting_table {
    template <class Layout, class Threads, class Tag>
    using engine = detail::self_rewriting_table_engine<Layout, Threads, Tag>;
};

/// "free list non-empty ? pop : bump", inlined at the call site
/// (see detail/dispatch/inline_branch.hpp).
struct inline_branch {
    template <class Layout, class Threads, class Tag>
    using engine = detail::inline_branch_engine<Layout, Threads, Tag>;
};

/// The policy of sta::memory_pool, chosen by measurement (docs/dispatch.md): fewer
/// instructions than the table on every compile-time-size pattern (callgrind, 32 B:
/// fresh 10 vs 11, pure get 6 vs 9, free + alloc 11 vs 15) and no indirect call.
using default_policy = inline_branch;

} // namespace dispatch

// ---------------------------------------------------------------------------------
// Layout policies: where blocks live.
// ---------------------------------------------------------------------------------
namespace layout {

/// The seed's layout: one bump cursor for every class, one LIFO list per class across
/// all pages, page tails carved into the lists (see detail/layout/shared_cursor.hpp).
struct shared_cursor {
    static constexpr const char* name = "shared_cursor";
    /// Its carving of page tails into classes needs powers of two.
    using classes = detail::power_of_two_classes;
    using state = detail::shared_cursor_state;
    template <class Engine>
    using core = detail::shared_cursor_core<Engine>;
};

/// Aligned spans of one class each, with their own free lists; a span whose blocks
/// have all come back serves any class again (see detail/layout/spans.hpp).
struct spans {
    static constexpr const char* name = "spans";
    /// The classes under the inline-branch dispatch (the tables take powers of two).
#if STA_POOL_QUARTER_CLASSES
    using classes = detail::quarter_classes;
#else
    using classes = detail::power_of_two_classes;
#endif
    using state = detail::span_state;
    template <class Engine>
    using core = detail::span_core<Engine>;
};

/// The layout of sta::memory_pool: STA_POOL_SPANS (detail/config.hpp) chooses.
#if STA_POOL_SPANS
using default_layout = spans;
#else
using default_layout = shared_cursor;
#endif

} // namespace layout

// ---------------------------------------------------------------------------------
// Thread policies: which threads may call, and whose memory they get.
// ---------------------------------------------------------------------------------
namespace threads {

/// The seed's mode: one pool for the program, owned by the first thread that calls.
struct one_owner {
    static constexpr bool threaded = false;
    template <class State, class Engine>
    using home = detail::one_owner_home<State, Engine>;
};

/// A pool per thread; frees from other threads are sent home (span layout only: a
/// block finds its owner through its span).
struct per_thread {
    static constexpr bool threaded = true;
    template <class State, class Engine>
    using home = detail::per_thread_home<State, Engine>;
};

/// The thread policy of sta::memory_pool on `Layout`: per_thread on spans (measured
/// against one_owner in docs/benchmarks.md), one_owner on the seed's shared cursor.
template <class Layout>
using default_for =
    std::conditional_t<std::is_same_v<Layout, layout::spans>, per_thread, one_owner>;

} // namespace threads

// ---------------------------------------------------------------------------------
// The pool.
// ---------------------------------------------------------------------------------

/// A pool family. `Dispatch`, `Layout` and `Threads` are policies above; `Tag` makes a
/// separate family with its own memory (tests use it to start from a clean state).
template <class Dispatch, class Tag = void, class Layout = layout::default_layout,
          class Threads = threads::default_for<Layout>>
class basic_memory_pool {
    static_assert(detail::pool_layout<Layout>, "Layout must be a layout policy (sta::layout)");
    static_assert(std::is_same_v<Threads, threads::one_owner> ||
                      std::is_same_v<Threads, threads::per_thread>,
                  "Threads must be a thread policy (sta::threads)");
    static_assert(std::is_same_v<Threads, threads::one_owner> ||
                      std::is_same_v<Layout, layout::spans>,
                  "threads::per_thread needs layout::spans: a freed block finds its owner "
                  "through its span");

  public:
    using engine = typename Dispatch::template engine<Layout, Threads, Tag>;
    /// The pool's size classes (detail/pool/size_class.hpp).
    using classes = typename engine::classes;
    using layout_policy = Layout;
    using threads_policy = Threads;
    /// True when every thread has a pool of its own.
    static constexpr bool per_thread = engine::home::threaded;

    static constexpr std::size_t min_page_bytes = detail::min_page_bytes;
    static constexpr std::size_t default_page_bytes = detail::default_page_bytes;
    static constexpr std::size_t max_page_bytes = detail::max_page_bytes;
    static constexpr std::size_t max_pooled_bytes = detail::max_class_bytes;

    /// A block of at least `bytes`, aligned to the alignment of its class (at least
    /// min(bit_ceil(bytes), 8), 16 for any class that is a multiple of 16:
    /// detail::class_alignment); a unique block for 0. nullptr only when the OS (or malloc, above
    /// 32 KiB) refuses.
    [[nodiscard]] STA_FORCE_INLINE static void* alloc(std::size_t bytes) noexcept {
        engine::home::check_thread();
        void* p = engine::alloc(bytes);
        after_alloc(p, bytes);
        return p;
    }

    /// alloc with the size known at compile time: the slot is resolved by the compiler.
    template <std::uint32_t Bytes>
    [[nodiscard]] STA_FORCE_INLINE static void* alloc() noexcept {
        engine::home::check_thread();
        void* p = engine::template alloc<Bytes>();
        after_alloc(p, Bytes);
        return p;
    }

    /// Give back a block; `bytes` is the size it was allocated (or last reallocated)
    /// with. free(nullptr, n) does nothing.
    STA_FORCE_INLINE static void free(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return;
        engine::home::check_thread();
        before_free(p, bytes);
        engine::free(p, bytes);
    }

    template <std::uint32_t Bytes>
    STA_FORCE_INLINE static void free(void* p) noexcept {
        if (p == nullptr)
            return;
        engine::home::check_thread();
        before_free(p, Bytes);
        engine::template free<Bytes>(p);
    }

    /// alloc(classes::bytes_of_slot(slot)) for a caller that has the class's slot already
    /// (classes::slot_of_key): the C API's malloc, which names no size to the pool beyond
    /// the class.
    [[nodiscard]] STA_FORCE_INLINE static void* alloc_class(std::uint32_t slot) noexcept {
        engine::home::check_thread();
        void* p = engine::alloc_slot(slot);
        after_alloc(p, classes::bytes_of_slot(slot));
        return p;
    }

    /// free(p, classes::bytes_of_slot(slot)) for a block that alloc_class(slot) (or alloc
    /// of those class bytes) gave.
    STA_FORCE_INLINE static void free_class(void* p, std::uint32_t slot) noexcept {
        engine::home::check_thread();
        before_free(p, classes::bytes_of_slot(slot));
        engine::push(slot, p);
    }

    /// Span layout: the free of a pooled block (detail::is_pool_segment) allocated with
    /// its whole class bytes, the class its span names, without a size: it goes to its
    /// span's bitmap (detail/layout/spans.hpp, release_unsized), never to its class's cache.
    STA_FORCE_INLINE static void
    free_in_span(void* p) noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        before_free(p, detail::pooled_block_bytes(p));
        core::release_unsized(p);
    }

    /// free_in_span with the release checks of the C API and the drop-in malloc
    /// (detail/layout/spans.hpp, release_checked): nothing is done unless it returns
    /// freed; what else it returns is the caller's to report.
    [[nodiscard]] STA_FORCE_INLINE static detail::free_verdict
    free_in_span_checked(void* p) noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        before_free(p, detail::pooled_block_bytes(p));
        return core::release_checked(p);
    }

    /// free_in_span_checked for a heap whose malloc clears the freed mark (the drop-in
    /// malloc; detail/pool/freed_mark.hpp): the block goes on its class's cache, marked
    /// (detail/layout/spans.hpp, release_marked).
    [[nodiscard]] STA_FORCE_INLINE static detail::free_verdict
    free_in_span_marked(void* p) noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        before_free(p, detail::pooled_block_bytes(p));
        return core::release_marked(p);
    }
    /// free_in_span_marked's common case, inline (detail/layout/spans.hpp,
    /// try_release_marked): true when the block went on its class's cache; false, with
    /// nothing done, when free_in_span_marked must do it — and always in a build whose
    /// frees are recorded (checks, a tool, statistics: before_free), which
    /// free_in_span_marked records once.
    [[nodiscard]] STA_FORCE_INLINE static bool
    try_free_in_span_marked(void* p) noexcept requires std::is_same_v<Layout, layout::spans> {
        if constexpr (checks || detail::hooks::active || STA_POOL_STATS != 0)
            return false;
        engine::home::check_thread();
        return core::try_release_marked(p);
    }

    /// Resize a block. Same pointer while the class does not change. A shrink within
    /// the pool never fails: the shared-cursor layout keeps the block where it is and
    /// gives its tail back; the span layout moves it to the smaller class, or keeps it
    /// in its class when no memory is left for the move. The shared-cursor layout grows
    /// the last block bumped in place when the page has room. On failure: nullptr, and
    /// the old block stays valid and unchanged. realloc(nullptr, 0, n) is alloc(n).
    [[nodiscard]] static void* realloc(void* p, std::size_t old_bytes,
                                       std::size_t new_bytes) noexcept {
        if (p == nullptr)
            return alloc(new_bytes);
        engine::home::check_thread();
        checked_live(p, old_bytes, "reallocated");
        const bool old_pooled = detail::is_pooled_size(old_bytes);
        const bool new_pooled = detail::is_pooled_size(new_bytes);
        if (old_pooled && new_pooled) {
            const std::size_t old_class = core::class_bytes_of_block(p, old_bytes);
            const std::size_t new_class = detail::bytes_of_size<classes>(new_bytes);
            if (new_class == old_class ||
                core::resize_in_place(static_cast<std::byte*>(p), old_class, new_class))
                return resized_in_place(p, old_bytes, new_bytes, new_class);
        } else if (!old_pooled && !new_pooled) {
            checked_moved(p, 0, 0); // forget the block before realloc may free it
            void* q = detail::next_tiers<engine>::realloc(p, old_bytes, new_bytes);
            checked_moved(nullptr, q != nullptr ? q : p, q != nullptr ? new_bytes : old_bytes);
            return q;
        }
        // Between classes or tiers: move. A shrink from above 32 KiB into the pool
        // moves too, because the sized free must find the block where its size says.
        const std::size_t usable = old_pooled ? core::class_bytes_of_block(p, old_bytes) : 0;
        void* const q = detail::move_or_keep_shrunk(
            p, old_bytes, usable, new_bytes, [new_bytes] { return alloc(new_bytes); },
            [p, old_bytes] { free(p, old_bytes); });
        return q == p ? resized_in_place(p, old_bytes, new_bytes, usable) : q; // kept: a shrink
    }

    /// Choose the page size, once, before the first allocation. A power of two in
    /// [256 KiB, 1 GiB]; the default is 1 MiB.
    static void set_page_bytes(std::size_t bytes) {
        engine::home::check_thread();
        if (engine::home::holds_memory())
            detail::throw_too_late(engine::name, "::set_page_bytes", bytes,
                                   "the pool has already mapped a page; the page size is "
                                   "chosen once, before the first allocation");
        detail::require_power_of_two_within(engine::name, "::set_page_bytes", bytes,
                                            "the page size", min_page_bytes, max_page_bytes);
        engine::home::set_page_bytes(bytes);
    }

    /// Span layout: back new segments with transparent huge pages (Linux
    /// MADV_HUGEPAGE; nothing elsewhere). Segments already mapped keep what they have.
    /// Per-thread pools: the calling thread's pool and every pool made from now on.
    static void set_huge_pages(bool on) noexcept requires std::is_same_v<Layout, layout::spans> {
        set_huge_pages_from(on ? 0 : detail::huge_pages_never);
    }
    /// Span layout: the same, for the segments a pool maps once it holds
    /// `segments` of them (2 MiB each): a small heap keeps plain pages, whose residency
    /// follows what it touches, and a big one gets the fewer faults and TLB misses of huge
    /// pages. 0: every segment, as set_huge_pages(true). The count alone decides: the
    /// density rule (set_huge_pages_where_dense) is off.
    static void set_huge_pages_from(
        std::uint32_t segments) noexcept requires std::is_same_v<Layout, layout::spans> {
        set_huge_pages_rule(segments, false);
    }
    /// Span layout: the default (STA_POOL_HUGE_PAGES 2, docs/design.md "Decisions"): huge
    /// pages from a pool's ninth segment, and for every segment a pool maps while its
    /// blocks in use fill half of the segments it holds — a heap that grows dense (a
    /// start-up, a document loaded) gets them from its third segment (huge_pages_dense_from),
    /// a small or sparse one keeps plain pages.
    static void
    set_huge_pages_where_dense() noexcept requires std::is_same_v<Layout, layout::spans> {
        set_huge_pages_rule(detail::huge_pages_auto_from, true);
    }
    /// Span layout: fill in a new segment's pages when it is mapped, so that first use
    /// takes no page faults (Linux MADV_POPULATE_WRITE, or touching each page).
    /// Per-thread pools: the calling thread's pool and every pool made from now on.
    static void set_prefault(bool on) noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        if constexpr (per_thread)
            engine::home::set_prefault_for_new(on);
        if (auto* const st = engine::home::own())
            st->prefault = on;
    }

    /// A purge delay that never passes (set_purge_delay): the seed's trade.
    static constexpr std::uint32_t purge_never = detail::purge_never;

    /// Span layout: how long memory whose blocks have all come back stays with the pool
    /// before its pages go back to the OS — a span's (detail/layout/span_life.hpp), a big
    /// block's retained mapping. purge_never keeps it until the process ends. Per-thread
    /// pools: the calling thread's pool and every pool made from now on.
    static void set_purge_delay(
        std::uint32_t milliseconds) noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        if constexpr (per_thread)
            engine::home::set_purge_delay_for_new(milliseconds);
        if (auto* const st = engine::home::own())
            st->purge.set_base(milliseconds);
    }

    /// Span layout: give back to the OS now whatever the pool holds free — every span
    /// whose blocks have all come back, the retained mappings of big blocks, the private
    /// heap's spare chunk — of the calling thread's pool and (per-thread pools) of every
    /// pool whose thread ended. The bytes given back; 0 when there was nothing.
    static std::size_t trim() noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        std::size_t given = 0;
        if (auto* const st = engine::home::existing())
            given += core::trim(*st);
        if constexpr (per_thread)
            given += engine::home::trim_parked();
        return given;
    }

    static std::size_t page_bytes() noexcept { return engine::home::page_bytes(); }

    /// Per-thread pools: how many pools the family has made and parked, and the
    /// segments all of them mapped (home/per_thread.hpp).
    static detail::thread_pools_stats thread_pools() noexcept requires(per_thread) {
        return engine::home::stats();
    }

    /// Span layout: what every pool of the family holds — each thread's and each parked
    /// one (per-thread pools) — and what the library holds from the OS
    /// (detail/pool/stats.hpp, process_stats, says how exact each figure is). Walks
    /// every segment of every pool: O(segments), not for hot loops. Any thread may call.
    static sta::process_stats
    process_stats() noexcept requires std::is_same_v<Layout, layout::spans> {
        sta::process_stats out;
        const auto* const mine = engine::home::existing();
        engine::home::for_each_state([&](auto& st, bool parked) {
            ++out.pools_made;
            out.pools_parked += parked ? 1 : 0;
            core::add_process_stats(st, out);
            if (&st == mine || parked) { // the heap is walked by its holder only
                const detail::spin_guard held(st.parked_lock);
                const thread_heap_stats heap = st.heap.stats();
                out.heap_bytes_in_use += heap.bytes_in_use;
                out.heap_bytes_free += heap.free_bytes;
            } else { // another running thread's: its two counters, the free space derived
                const std::size_t in_use = st.heap.bytes_in_use();
                const std::size_t mapped = st.heap.bytes_mapped();
                out.heap_bytes_in_use += in_use;
                out.heap_bytes_free += mapped > in_use ? mapped - in_use : 0; // + its headers
            }
        });
        detail::finish_process_stats<classes>(out);
        return out;
    }

    /// Span layout: every segment of every pool of the family, as process_stats walks
    /// them: fn(pool, parked, base, huge, spans) — `pool` numbers the pools in the
    /// family's list (newest first), `spans` the segment's 32 span views (span_view in
    /// detail/layout/spans.hpp). What the heap map draws (sta/stats_json.hpp).
    template <class Fn>
    static void visit_segments(Fn&& fn) noexcept requires std::is_same_v<Layout, layout::spans> {
        std::size_t pool = 0;
        engine::home::for_each_state([&](auto& st, bool parked) {
            core::walk_segments(st, [&](const void* base, bool huge, const auto* spans) {
                fn(pool, parked, base, huge, spans);
            });
            ++pool;
        });
    }

    /// What the pool holds now (per-thread pools: the calling thread's). Walks the free
    /// lists: O(free blocks), not for hot loops.
    static pool_stats stats() noexcept {
        engine::home::check_thread();
        pool_stats out;
        out.class_count = classes::count;
        for (std::uint32_t i = 0; i < classes::count; ++i) {
            class_stats& c = out.classes[i];
            c.block_bytes = classes::bytes_of_slot(classes::slot_of_ordinal(i));
#if STA_POOL_STATS
            const std::uint32_t slot = classes::slot_of_ordinal(i);
            c.allocations = engine::state().allocations[slot];
            c.frees = engine::state().frees[slot];
            c.live_blocks = static_cast<std::size_t>(c.allocations - c.frees);
#endif
        }
        core::add_stats(out);
        out.bytes_in_use = out.bytes_reserved - out.bytes_free;
#if STA_POOL_STATS
        out.bytes_in_use_high_water = engine::state().bytes_in_use_high_water;
#endif
        return out;
    }

    /// White-box access for the accounting checker and the tests; not an API. A
    /// per-thread family gives the calling thread its pool first.
    static typename engine::state_type& detail_state() noexcept {
        auto* const st = engine::home::own();
        return st != nullptr ? *st : engine::state();
    }
    static const char* name() noexcept {
        return engine::name;
    }

  private:
    using core = typename engine::core;
    static_assert(detail::pool_engine<engine>, "the dispatch engine keeps the engine contract");
    static_assert(
        !per_thread ||
            (detail::per_thread_pool_home<typename engine::home, typename engine::state_type> &&
             detail::threaded_layout_core<core, typename engine::state_type>),
        "a pool per thread needs a home that makes them and a layout that drains");

    /// The huge-page settings of the calling thread's pool and (per-thread pools) of
    /// every pool made from now on.
    static void
    set_huge_pages_rule(std::uint32_t from_segments,
                        bool dense) noexcept requires std::is_same_v<Layout, layout::spans> {
        engine::home::check_thread();
        if constexpr (per_thread)
            engine::home::set_huge_pages_for_new(from_segments, dense);
        if (auto* const st = engine::home::own()) {
            st->huge_pages_from = from_segments;
            st->huge_pages_dense = dense;
        }
    }

    // The hook sites of the pool: tools (detail/diag/tool_hooks.hpp), counters (STA_POOL_STATS)
    // and the checked registry (detail/pool/checked_build.hpp). In a release build without a tool
    // backend, without STA_POOL_STATS and without STA_POOL_CHECKS they compile to
    // nothing; tests/hooks_cost proves it against a build with them cut out
    // (STA_POOL_NO_HOOKS, for that test only).
    static constexpr bool hook_sites = STA_POOL_NO_HOOKS == 0;
    static constexpr bool checks = hook_sites && STA_POOL_CHECKS != 0;
    /// Does any hook of an allocation do something? Without one, after_alloc is not
    /// even its test of a null block: g++ kept that test's two ways after inlining, and
    /// with them malloc's refill as a call in a stack frame of the drop-in's fast path
    /// (2 instructions a malloc) where it could be a jump.
    static constexpr bool alloc_hooks =
        hook_sites && (STA_POOL_ASAN || STA_POOL_VALGRIND || STA_POOL_STATS || checks);

    STA_FORCE_INLINE static void after_alloc([[maybe_unused]] void* p,
                                             [[maybe_unused]] std::size_t bytes) noexcept {
        if constexpr (alloc_hooks) {
            if (p == nullptr)
                return;
            if (detail::is_pooled_size(bytes)) {
                detail::hooks::block_allocated(p, bytes, core::class_bytes_of_block(p, bytes));
                count_alloc(bytes);
            }
            if constexpr (checks)
                detail::checked_allocated(engine::home::registry(), p, bytes);
        }
    }
    STA_FORCE_INLINE static void before_free([[maybe_unused]] void* p,
                                             [[maybe_unused]] std::size_t bytes) noexcept {
        if constexpr (hook_sites) {
            if constexpr (checks)
                detail::checked_freed(engine::home::registry(), detail::checked_core_of<core>,
                                      engine::name, p, bytes);
            if (detail::is_pooled_size(bytes)) {
                detail::hooks::block_freed(p, core::class_bytes_of_block(p, bytes));
                count_free(bytes);
            }
        }
    }
    /// realloc kept a pooled block where it lies, now `new_class` bytes long.
    static void* resized_in_place(void* p, std::size_t old_bytes, std::size_t new_bytes,
                                  std::size_t new_class) noexcept {
        count_free(old_bytes);
        count_alloc(new_bytes);
        detail::hooks::block_resized(p, old_bytes, new_bytes, new_class);
        checked_moved(p, p, new_bytes);
        return p;
    }
    STA_FORCE_INLINE static void checked_live([[maybe_unused]] const void* p,
                                              [[maybe_unused]] std::size_t bytes,
                                              [[maybe_unused]] const char* operation) noexcept {
        if constexpr (checks)
            detail::checked_live(engine::home::registry(), detail::checked_core_of<core>,
                                 engine::name, p, bytes, operation);
    }
    /// The checked registry follows a block that realloc kept or moved: `from` is
    /// forgotten, `to` recorded with `bytes` (either may be null).
    STA_FORCE_INLINE static void checked_moved([[maybe_unused]] const void* from,
                                               [[maybe_unused]] const void* to,
                                               [[maybe_unused]] std::size_t bytes) noexcept {
        if constexpr (checks)
            detail::checked_moved(engine::home::registry(), reinterpret_cast<std::uintptr_t>(from),
                                  reinterpret_cast<std::uintptr_t>(to), bytes);
    }
    STA_FORCE_INLINE static void count_alloc([[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_STATS
        auto& s = engine::state(); // the allocation gave the thread its pool
        ++s.allocations[detail::slot_of_size<classes>(bytes)];
        s.bytes_in_use += detail::bytes_of_size<classes>(bytes);
        if (s.bytes_in_use > s.bytes_in_use_high_water)
            s.bytes_in_use_high_water = s.bytes_in_use;
#endif
    }
    STA_FORCE_INLINE static void count_free([[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_STATS
        auto* const st = engine::home::own(); // counted by the freeing thread's pool
        if (st == nullptr)
            return;
        auto& s = *st;
        ++s.frees[detail::slot_of_size<classes>(bytes)];
        s.bytes_in_use -= detail::bytes_of_size<classes>(bytes);
#endif
    }
};

/// The pool most code wants: the default dispatch policy, one per program.
using memory_pool = basic_memory_pool<dispatch::default_policy>;

namespace detail {

/// The default pool's code off its fast paths — the requests no class serves (outside:
/// size 0, the private heap, big blocks), its per-thread home (adoption, parking, a
/// thread's end), its layout's calls out of line (refill, send_home) — for the switches
/// KEY. KIND is `template` in the compiled part (src/pool/span_instantiations.hpp) and
/// `extern template` below: a unit of a program that links it compiles none of it (a
/// user's unit with sta::vector<int>: 0.12 s of code generation, docs/design.md
/// "Decisions"). The fast paths stay inline.
#define STA_POOL_DEFAULT_POOL_TEMPLATES(KIND, KEY)                                                 \
    KIND struct outside<                                                                           \
        inline_branch_engine<::sta::layout::spans, ::sta::threads::per_thread, void, KEY>>;        \
    KIND struct per_thread_home<                                                                   \
        span_state,                                                                                \
        inline_branch_engine<::sta::layout::spans, ::sta::threads::per_thread, void, KEY>>;        \
    KIND struct span_core<                                                                         \
        inline_branch_engine<::sta::layout::spans, ::sta::threads::per_thread, void, KEY>>

#if STA_POOL_COMPILED && !defined(STA_POOL_COMPILING)
STA_POOL_DEFAULT_POOL_TEMPLATES(extern template, compiled_release_key);
STA_POOL_DEFAULT_POOL_TEMPLATES(extern template, compiled_checked_key);
#endif

} // namespace detail
} // namespace sta
