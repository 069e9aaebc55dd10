// sta-pool: the span layout — memory in aligned spans that each serve one class. The
// structures, their picture and the invariants: layout/span_types.hpp; what becomes of
// a span whose blocks have all come back: layout/span_life.hpp.
//
// Allocation stays in one span per class until that span is spent (free-list sharding),
// so blocks handed out together lie together:
//
//   alloc:   heads[slot] (the class's cache) ? pop : the cursor of a span in its first
//            pass ? bump : bits[slot] ? the window's lowest free block : refill
//   refill:  the next word of the current span's bitmap that has free blocks (scan)
//            becomes the window; at the bitmap's end the class starts over at its first
//            word if its reuse threshold is free (reuse_threshold: an eighth, at least
//            128 blocks, at most a quarter), else the span sleeps and the class
//            takes the most recently woken partial span, else a clean span, else a new
//            segment. Each step costs a few instructions per block it hands out: no list
//            is walked, nothing is sorted, and the blocks come out in ascending address
//            order however they were freed, so a heap that has lived still hands out
//            neighbours.
//   free:    by the sized API, onto the cache of the block's class, heads[slot] (LIFO:
//            the block just freed, warm in the cache, is the next one handed out),
//            whatever span it lies in; every cache_frees-th such free flushes every
//            cache: each block's bit in its span's bitmap, and --used (a span whose used
//            reaches its wake_at wakes, or comes clean). The flush bounds what a state
//            holds outside the bitmaps, and is the heartbeat that runs the slow-path
//            checks in a program that only frees. A free without a size sets the bit at
//            once (the C API), or — the drop-in's family, whose blocks carry the freed
//            mark (pool/freed_mark.hpp) — goes on the cache too, marked, unless a flush
//            found the frees outrunning the allocations (direct_frees: a burst, its bits
//            set while the blocks are warm). Another thread's block: to its owner (S10).
//
// A span retired with less than its reuse threshold free sleeps until frees bring it there (its
// `wake_at`), so a span with a few free blocks is not taken again and again for a few
// blocks each time. A span whose blocks have all come back goes clean, and after the
// purge delay gives its pages back (layout/span_life.hpp). Every refill takes home the
// blocks other threads sent; the state's slow-path checks (give_back_due) run at every
// flush and at the refills that end 64 blocks handed out: every refill of a class whose
// span holds 64 blocks or more (a refill hands out one word of a bitmap at the most),
// every 2^k-th of a bigger class's (span_shape::checks_mask: every 32nd at 32 KiB, two
// blocks a span). A class that only takes blocks meets them every 64 blocks at the most,
// a program that frees with sizes every cache_frees frees, and one that frees without
// sizes at the current span's heartbeat (S7).
#pragma once

#include "sta/detail/diag/misuse.hpp"
#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/home/per_thread.hpp"
#include "sta/detail/layout/span_life.hpp"
#include "sta/detail/layout/span_types.hpp"
#include "sta/detail/os/clock.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/os/probes.hpp"
#include "sta/detail/pool/freed_mark.hpp"
#include "sta/detail/pool/next_tiers.hpp"
#include "sta/detail/pool/segment_map.hpp"
#include "sta/detail/pool/state.hpp"
#include "sta/detail/pool/stats.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>

namespace sta::detail {

/// The span layout's code that does not depend on the pool family (its tag): one
/// instantiation per class set and thread mode, whatever the family. It works on the state
/// it is given; what it asks of a per-thread family's home goes through the state's
/// `home` (pool/state.hpp).
/// Block bytes of each canonical slot of a class set. Outside span_slow, whose compiled
/// part is declared extern: every unit defines this table itself, so a fast path reads it
/// at a link-time constant address, never through the GOT.
template <class Classes>
inline constexpr std::array<std::size_t, class_slots> span_steps = [] {
    std::array<std::size_t, class_slots> out{};
    for (std::uint32_t n = 0; n < Classes::count; ++n)
        out[Classes::slot_of_ordinal(n)] = Classes::bytes_of_slot(Classes::slot_of_ordinal(n));
    return out;
}();

/// What a span serving a class holds (S2), for each canonical slot of a class set: its
/// capacity, its recip, the first block of a span 0 and whether it has a tail. A span
/// that starts serving a class reads them here: no division on the slow path of a class
/// whose spans hold two blocks.
struct span_shape {
    std::uint32_t capacity = 0;
    std::uint32_t recip = 0;
    std::uint32_t first_in_span_0 = 0;
    bool tail = false;
    /// A refill of the class runs the slow-path checks when the state's refill count
    /// masked by this is 0: every refill of a class whose spans hold 64 blocks or more,
    /// every 2^k-th of one whose span holds fewer (2^k <= 64 / capacity), so that the
    /// refills between two checks hand out at most 64 blocks (a 32 KiB class: 2 a span).
    std::uint32_t checks_mask = 0;
};
template <class Classes>
inline constexpr std::array<span_shape, class_slots> span_shapes = [] {
    std::array<span_shape, class_slots> out{};
    for (std::uint32_t n = 0; n < Classes::count; ++n) {
        const std::size_t bytes = Classes::bytes_of_slot(Classes::slot_of_ordinal(n));
        const auto capacity = static_cast<std::uint32_t>(span_bytes / bytes);
        out[Classes::slot_of_ordinal(n)] = span_shape{
            capacity, reciprocal_of(bytes), first_block_of(0, bytes), span_bytes % bytes != 0,
            capacity >= 64 ? 0 : std::bit_floor(64 / capacity) - 1};
    }
    return out;
}();

template <class Classes, bool Threaded, unsigned long long Config = config_key>
struct span_slow {
    static constexpr bool threaded = Threaded;
    /// The pool's class set (pool/size_class.hpp): its slots index the state's arrays.
    using classes = Classes;

    // ---- the fast paths --------------------------------------------------------------

    /// Block bytes of each canonical slot, for a multiply with a memory operand.
    static constexpr const std::array<std::size_t, class_slots>& steps = span_steps<Classes>;
    // Every class fits a block in a span, and the bitmap has a bit for each.
    static_assert(classes::bytes_of_slot(classes::slot_of_ordinal(0)) >= min_class_bytes &&
                  classes::bytes_of_slot(classes::slot_of_ordinal(classes::count - 1)) <=
                      span_bytes / 2);

    /// p goes on the cache of `slot` (LIFO: the warmest block comes back first); every
    /// cache_frees-th free flushes the caches and runs the slow-path checks (S5). Marked
    /// (a family with freed marks): its link is checked by its freed mark (M1, M4).
    template <bool Marked>
    STA_FORCE_INLINE static void cache(span_state& st, std::uint32_t slot, void* p) noexcept {
        if constexpr (Marked)
            link_freed(p, st.heads[slot], st.mark_key);
        else
            hooks::store_link(p, st.heads[slot]);
        st.heads[slot] = static_cast<free_block*>(p);
        if (--st.frees_to_flush == 0) [[unlikely]]
            flush_caches(st);
    }

    /// What a set bit says of block boundary i of `sp`: a block freed twice, unless i is
    /// the start of the span's tail or a place below its first block (S2), which are no
    /// blocks.
    static free_verdict set_bit_verdict(const span* sp, std::uint32_t i) noexcept {
        return sp->capacity != 0 && !is_block_place(sp, i) ? free_verdict::not_a_block
                                                           : free_verdict::double_free;
    }

    /// Is p, a block place of `sp`, one its class's cursor still holds, never handed out
    /// (S5)?
    STA_FORCE_INLINE static bool never_handed_out(const span_state& st, const span* sp,
                                                  const void* p) noexcept {
        return sp->bumping && static_cast<const std::byte*>(p) >= st.cursor[sp->slot];
    }

    /// Block i of `sp` (p) comes back to its span, unless its bit says it is free already
    /// or its class's cursor has not handed it out yet (S5).
    STA_FORCE_INLINE static free_verdict set_free_bit(span_state& st, span* sp, void* p,
                                                      std::uint32_t i) noexcept {
        if (never_handed_out(st, sp, p)) [[unlikely]]
            return free_verdict::not_a_block;
        if (test_and_set_bit(span_bitmap(sp)[i / 64], i)) [[unlikely]]
            return set_bit_verdict(sp, i);
        hooks::block_pushed(p, span_class_bytes(sp));
        if (--sp->used == sp->wake_at) [[unlikely]]
            span_event(st, sp);
        return free_verdict::freed;
    }

    /// A block another thread sent home, taken back by the thread that holds `st`: to its
    /// span's bitmap. One that is free there already was freed twice: reported (one line,
    /// abort), whatever API freed it.
    /// Only the exact start of a block is taken: another thread's free without the
    /// checks (a sized one) sent whatever address it was given.
    static void drain_block(span_state& st, void* b) noexcept {
        span* const sp = span_of(b);
        const std::uint32_t i = exact_block_index(sp, b);
        if (const free_verdict verdict =
                i == no_block ? free_verdict::not_a_block : set_free_bit(st, sp, b, i);
            verdict != free_verdict::freed)
            report_bad_free("sta-pool", "free() from another thread", b, verdict,
                            span_class_bytes(sp));
    }

    /// A block of `st` that carries the freed mark, on a block boundary of its span and
    /// handed out by its class (M2): double_free when it is free — its bit set, in its
    /// class's window, or on its class's cache — else freed (a live block whose second
    /// word holds the mark's bits).
    STA_NOINLINE static free_verdict marked_state(const span_state& st, const span* sp,
                                                  const void* p) noexcept {
        const std::uint32_t i = block_index(sp, p);
        if (((span_bitmap(sp)[i / 64] >> (i % 64)) & 1) != 0)
            return set_bit_verdict(sp, i);
        if (in_window(st, sp, i))
            return free_verdict::double_free;
        const std::uint32_t slot = sp->slot;
        for (void* b = st.heads[slot]; b != nullptr; b = next_cached(st, b))
            if (b == p)
                return free_verdict::double_free;
        return free_verdict::freed;
    }

    /// Is block i of `sp` free in its class's window (S5: the window holds one aligned
    /// word of its class's current span)?
    STA_FORCE_INLINE static bool in_window(const span_state& st, const span* sp,
                                           std::uint32_t i) noexcept {
        const std::uint32_t slot = sp->slot;
        return st.current[slot] == sp && st.window[slot] != nullptr &&
               block_index(sp, st.window[slot]) / 64 == i / 64 &&
               ((st.bits[slot] >> (i % 64)) & 1) != 0;
    }

    /// The link of block b on a cache, followed: in a family with freed marks, b must still
    /// hold its mark (M4), else the link may be forged — one line, abort.
    static void* next_cached(const span_state& st, void* b) noexcept {
        if (st.mark_key != 0 && !has_freed_mark(b, st.mark_key)) [[unlikely]]
            refuse_overwritten(b, "free()");
        return hooks::load_link(b);
    }
    /// The same for a block sent home (it holds the sent mark, M3), pooled or a private
    /// heap's.
    static void* next_sent(const span_state& st, void* b) noexcept {
        if (st.mark_key != 0 && !has_sent_mark(b, st.mark_key)) [[unlikely]]
            refuse_overwritten(b, "free() from another thread");
        return hooks::load_link(b);
    }
    /// b, a pooled block or a private heap's, was overwritten (M4): one line, abort.
    [[noreturn]] STA_NOINLINE static void refuse_overwritten(const void* b,
                                                             const char* function) noexcept {
        report_bad_free("sta-pool", function, b, free_verdict::overwritten,
                        is_pool_segment(b) ? span_class_bytes(span_of(b)) : 0);
    }
    /// The same for malloc's pop, which returns what this returns (never): a tail call
    /// that keeps malloc's fast path without a frame of its own.
    STA_TAIL_CALLED static void* refuse_overwritten_at_malloc(void* b) noexcept {
        refuse_overwritten(b, "malloc()");
    }

    /// Frees into the current span between two of its span events: the heartbeat of a
    /// class whose frees all set bits (release_unsized), S7.
    static constexpr std::uint32_t heartbeat_frees = 64;

    /// Every block on the caches goes back to its span (S5), the blocks other threads sent
    /// home are taken back, and the slow-path checks run: the heartbeat of a state that
    /// frees, whatever it allocates.
    /// The next flush comes after flush_every frees: cache_frees_freeing when at least half of
    /// this interval's frees were still on the caches (the program frees more than it
    /// allocates), else cache_frees (S5).
    STA_NOINLINE static void flush_caches(span_state& st) noexcept {
        const std::uint32_t held = empty_caches(st);
        st.direct_frees = held * 2 >= st.flush_every;
        st.flush_every = st.direct_frees ? cache_frees_freeing : cache_frees;
        st.frees_to_flush = st.flush_every;
        if constexpr (threaded) {
            (void)drain(st);
            send_outbox(st);
        }
        give_back_due(st);
    }
    /// Every block on the caches goes back to its span, and the count starts over: into
    /// its class's window when it lies in the word the window holds, else to the bitmap.
    /// The heads are tested four at a time: a flush finds a few classes with blocks
    /// (44 heads one by one cost about 300 instructions a flush, 11 groups about 70).
    /// The blocks it took from the caches.
    static std::uint32_t empty_caches(span_state& st) noexcept {
        static_assert(class_slots % 4 == 0);
        st.frees_to_flush = st.flush_every;
        std::uint32_t held = 0;
        for (std::uint32_t group = 0; group < class_slots; group += 4) {
            free_block* const* const heads = &st.heads[group];
            if ((reinterpret_cast<std::uintptr_t>(heads[0]) |
                 reinterpret_cast<std::uintptr_t>(heads[1]) |
                 reinterpret_cast<std::uintptr_t>(heads[2]) |
                 reinterpret_cast<std::uintptr_t>(heads[3])) == 0)
                continue;
            for (std::uint32_t slot = group; slot < group + 4; ++slot) {
                void* b = st.heads[slot];
                st.heads[slot] = nullptr;
                for (; b != nullptr; ++held) {
                    void* const next = next_cached(st, b);
                    span* const sp = span_of(b);
                    if (!into_window(st, sp, b))
                        release_to_span(st, sp, b);
                    b = next;
                }
            }
        }
        return held;
    }
    /// A cached block of its class's current span (`sp`, S5) comes back where the class
    /// hands it out next: one of the word the window holds becomes a bit of the window
    /// again (it counted as used on the cache and does in the window, S4: nothing else
    /// changes); one of an earlier word goes to the bitmap (false), and the class's next
    /// word taken is the span's lowest with free blocks (rescan). The window hands out its
    /// lowest blocks first, so the blocks a churning class used come back before the
    /// words' untouched ones, and the class keeps the pages of its live set. False for a
    /// block of any other span.
    static bool into_window(span_state& st, span* sp, void* b) noexcept {
        const std::uint32_t slot = sp->slot;
        if (st.current[slot] != sp || st.window[slot] == nullptr) // no window (bumping: S5)
            return false;
        const auto d = static_cast<std::size_t>(static_cast<std::byte*>(b) - st.window[slot]);
        if (d >= 64 * span_class_bytes(sp)) {
            if (static_cast<std::byte*>(b) < st.window[slot])
                sp->rescan = true; // a word before the window's has a free block now
            return false;
        }
        hooks::block_pushed(b, span_class_bytes(sp));
        st.bits[slot] |= std::uint64_t{1} << (block_index(sp, b) % 64);
        return true;
    }

    /// Block p of `sp` (a block of `st`, held by the caller's thread) goes to its span's
    /// bitmap: its bit is set (S4, S7).
    STA_FORCE_INLINE static void release_to_span(span_state& st, span* sp, void* p) noexcept {
        hooks::block_pushed(p, span_class_bytes(sp));
        const std::uint32_t i = block_index(sp, p);
        span_bitmap(sp)[i / 64] |= std::uint64_t{1} << (i % 64);
        if (--sp->used == sp->wake_at) [[unlikely]]
            span_event(st, sp);
    }

    /// heads[slot] and the window are empty: the class's next window (see the file
    /// comment for the order), then one block of it. A thread without a pool adopts one
    /// first; blocks other threads sent home are taken back first, and may give the
    /// class blocks again.
    STA_NOINLINE static void* refill(span_state& st, std::uint32_t slot, bool adopted) noexcept {
        STA_PROBE2(refill, &st, slot);
        st.direct_frees = false; // a class allocates: marked frees go on the caches again
        if (adopted || (++st.refills & span_shapes<Classes>[slot].checks_mask) == 0)
            give_back_due(st);
        if constexpr (threaded) {
            // The class may hold blocks now: the state was just adopted with its lists
            // and windows, or the drain gave some back.
            const bool drained = drain(st);
            send_outbox(st);
            if (drained || adopted)
                if (void* const block = hand_out(st, slot))
                    return block;
        }
        if (span* const cur = st.current[slot]) {
            // A span whose cursor is spent has no word to take: its scan is at its bitmap's
            // end since it started, its bitmap holds only the frees since (S5).
            const bool bumped = cur->bumping && !cur->rescan;
            cur->bumping = false; // its cursor is spent (S5)
            if (!bumped && take_word(st, slot, cur))
                return hand_out(st, slot);
            const std::uint32_t freed = span_blocks(cur) - cur->used;
            if (freed >= reuse_threshold(span_blocks(cur))) { // start over at its first word
                cur->scan = 0;
                (void)take_word(st, slot, cur);
                return hand_out(st, slot);
            }
            cur->role = span_role::sleeping;
            cur->wake_at = span_blocks(cur) - reuse_threshold(span_blocks(cur));
            set_current(st, slot, nullptr); // S7 holds: freed < threshold, so used > wake_at
        }
        span* sp = st.partial[slot];
        if (sp != nullptr) {
            unlink_partial(st, sp);
            sp->role = span_role::current;
            sp->scan = 0;
            set_current(st, slot, sp);
            (void)take_word(st, slot, sp);
        } else if ((sp = take_clean(st)) != nullptr) {
            set_current(st, slot, sp);
            start(st, sp, slot);
            std::byte* const block = st.cursor[slot]; // S2: every span holds a block
            st.cursor[slot] = block + steps[slot];
            return block;
        } else {
            return nullptr;
        }
        return hand_out(st, slot);
    }

    /// The class's next block from heads, the window or the cursor (nullptr when all are
    /// empty).
    static void* hand_out(span_state& st, std::uint32_t slot) noexcept {
        if (free_block* const block = st.heads[slot]) {
            st.heads[slot] = static_cast<free_block*>(next_cached(st, block));
            return block;
        }
        if (const std::uint64_t bits = st.bits[slot]; bits != 0) {
            st.bits[slot] = bits & (bits - 1);
            return block_at(st.window[slot], lowest_bit(bits), steps[slot]);
        }
        std::byte* const block = st.cursor[slot];
        if (block == st.cursor_end[slot])
            return nullptr;
        st.cursor[slot] = block + steps[slot];
        return block;
    }

    /// The next word of `sp`'s bitmap with free blocks, from its scan on, becomes the
    /// class's window (S5: zero in the bitmap, its blocks held by the class). False when
    /// none is left before the bitmap's end. Before the class takes a word it never took
    /// (its frontier, S5), it goes back to the first word if a sixteenth of the blocks of
    /// the words it took are free again: blocks freed behind it are handed out again
    /// before fresh pages are touched, so a class that churns keeps the pages of its
    /// live set, not of its whole span; after a flush that sent blocks behind the window
    /// back to the bitmap (rescan) it starts at the first word at once. The tail's bit
    /// (S2) is never taken.
    static bool take_word(span_state& st, std::uint32_t slot, span* sp) noexcept {
        std::uint64_t* const bitmap = span_bitmap(sp);
        const std::uint32_t words = (sp->capacity + 63) / 64;
        if (sp->rescan) { // a flush sent blocks behind the window back to the bitmap
            sp->rescan = false;
            sp->scan = 0;
        }
        if (sp->scan >= sp->frontier && sp->frontier < words && sp->frontier != 0) {
            // The blocks of the words taken (< capacity): the first word taken holds a
            // block, so they start below it at `first` (S2).
            const std::uint32_t taken = std::uint32_t{sp->frontier} * 64 - sp->first;
            if (taken - sp->used > taken / 16) // free behind the frontier
                sp->scan = 0;
        }
        for (std::uint32_t w = sp->scan; w < words; ++w) {
            std::uint64_t bits = bitmap[w] & blocks_of_word(sp, w);
            if (bits == 0)
                continue;
            if (w * 64 < sp->first) [[unlikely]] { // span 0: the headers' places stay (S2)
                bits &= sp->first - w * 64 >= 64 ? 0 : ~std::uint64_t{0} << (sp->first - w * 64);
                if (bits == 0)
                    continue;
            }
            bitmap[w] ^= bits; // the tail's bit stays (S2)
            sp->used += bits_set(bits);
            sp->wake_at = sp->used - (sp->used < heartbeat_frees ? sp->used : heartbeat_frees);
            sp->scan = static_cast<std::uint16_t>(w + 1);
            if (sp->scan > sp->frontier)
                sp->frontier = sp->scan;
            st.bits[slot] = bits;
            st.window[slot] = span_begin(sp) + std::size_t{w} * 64 * span_class_bytes(sp);
            return true;
        }
        sp->scan = static_cast<std::uint16_t>(words);
        return false;
    }

    /// What `st` has kept free for its delay goes back to the OS: clean spans' pages and
    /// big blocks' retained mappings; and, for a per-thread family, what parked states
    /// kept (home/per_thread.hpp). The clock is read only when something waits.
    static void give_back_due(span_state& st) noexcept {
        if constexpr (threaded)
            st.home->take_options(st); // PH6: options set since, for every pool
        const bool own = waits(st);
        bool parked = false;
        if constexpr (threaded)
            parked = st.home->parked_wait();
        if (!own && !parked)
            return;
        const std::uint32_t now = os_now_ms();
        if (own)
            give_back_due(st, now);
        if constexpr (threaded)
            if (parked)
                st.home->give_back_parked(now);
    }
    /// The same for `st` alone, at `now`.
    static void give_back_due(span_state& st, std::uint32_t now) noexcept {
        (void)span_life::purge_due(st, now);
        if (!st.purge.never())
            (void)st.retained.release_due(now, st.purge.wait_now());
    }
    /// Does `st` hold any memory: a segment, a kept big mapping, its private heap's?
    static bool holds_memory(const span_state& st) noexcept {
        return st.segments != nullptr || st.retained.count != 0 || st.heap.holds_memory();
    }
    /// Does `st` keep something free that its delay will give back?
    static bool waits(const span_state& st) noexcept {
        return !st.purge.never() && (st.clean_oldest != nullptr || st.retained.count != 0);
    }

    /// Give back at once everything `st` holds free (trim, malloc_trim): every clean
    /// span's pages, the kept big mappings, the private heap's spare chunk. The bytes
    /// given back.
    static std::size_t trim(span_state& st) noexcept {
        (void)empty_caches(st);
        if constexpr (threaded)
            send_outbox(st);
        return span_life::purge_all(st) + st.retained.release_all() + st.heap.trim();
    }

    /// Blocks of different classes lie in different spans: never in place.
    static bool resize_in_place(std::byte*, std::size_t, std::size_t) noexcept { return false; }

    /// The class of a pooled block is its span's, whatever size the caller names.
    static std::size_t class_bytes_of_block(const void* p, std::size_t) noexcept {
        return pooled_block_bytes(p);
    }

    // ---- slow paths ------------------------------------------------------------------

    /// S10: another thread's block goes to its owner's inbox, through the freeing
    /// thread's outbox (pool/state.hpp; self: the freeing thread's state, nullptr when
    /// it has none): a way goes home when it holds a batch, or when another
    /// owner's block needs it. A block of a parked state goes home at once: its sender
    /// takes it back (nothing waits).
    STA_NOINLINE static void send_home(span_state* self, void* p) noexcept {
        span_state* const owner = owner_of(p);
        const std::uint64_t key = owner->mark_key;         // 0 unless the family marks (M5)
        if (key != 0 && has_any_mark(p, key)) [[unlikely]] // M3
            refuse_sent(p); // free at its owner, or freed by another thread already
        if (self == nullptr || owner->parked.load(memory_order_relaxed))
            return push_home(*owner, p, p); // linked and marked there
        remote_outbox& out = self->outbox;
        remote_outbox::way& w = out.way_of(owner);
        if (w.owner != owner) {
            send_way(out, w);
            w.owner = owner;
        }
        if (key != 0)
            link_sent(p, w.head, key); // M3, M4
        else
            hooks::store_link(p, w.head);
        if (w.count == 0)
            w.tail = p;
        w.head = p;
        ++out.held;
        if (++w.count == remote_outbox::batch_blocks)
            send_way(out, w);
    }
    /// A block another thread frees that holds a mark (M3): one line, abort.
    [[noreturn]] STA_NOINLINE static void refuse_sent(const void* p) noexcept {
        report_bad_free("sta-pool", "free() from another thread", p, free_verdict::double_free,
                        span_class_bytes(span_of(p)));
    }
    /// Every way of `st`'s outbox goes home (its thread's slow paths, trim, and its end
    /// before its state is parked: a parked state's outbox is empty).
    static void send_outbox(span_state& st) noexcept {
        if (st.outbox.held == 0) [[likely]]
            return;
        for (remote_outbox::way& w : st.outbox.w)
            send_way(st.outbox, w);
    }
    static void send_way(remote_outbox& out, remote_outbox::way& w) noexcept {
        if (w.count == 0)
            return;
        out.held -= w.count;
        void* const first = w.head;
        void* const last = w.tail;
        w.head = w.tail = nullptr;
        w.count = 0;
        push_home(static_cast<span_state&>(*w.owner), first, last);
    }
    /// The blocks first .. last go to their owner's inbox; an owner whose thread ended
    /// has the sender take them back at once (home/per_thread.hpp).
    static void push_home(span_state& owner, void* first, void* last) noexcept {
        owner.inbox.push(first, last, owner.mark_key);
        owner.home->sent_home(owner);
    }

    /// Take back every block other threads sent home (the owner only). True when there
    /// was any.
    static bool drain(span_state& st) noexcept {
        void* const b = st.inbox.take_all();
        if (b == nullptr)
            return false;
        take_back(st, b);
        return true;
    }
    /// A chain of blocks other threads sent home goes back: a pooled block to its span's
    /// bitmap, a private heap's block to its heap.
    static void take_back(span_state& st, void* b) noexcept {
        while (b != nullptr) {
            const bool pooled = is_pool_segment(b);
            void* const next = next_sent(st, b); // M4
            if (pooled)
                drain_block(st, b);
            else
                heap_free_sent(st, b);
            b = next;
        }
    }

    /// A parked state (its thread ended), held by the thread that parks it or that sent
    /// it blocks: every block sent home or on a cache goes back to its span and the
    /// spans of classes go back to the state's lists; the spans that come clean wait for their
    /// delay like any (the home has other threads give them back: home/per_thread.hpp). Nothing
    /// here reaches a state but `st`.
    static void drain_parked(span_state& st) noexcept {
        take_back(st, st.inbox.take_all());
        (void)empty_caches(st);
        for (std::uint32_t slot = 0; slot < class_slots; ++slot)
            if (st.current[slot] != nullptr)
                retire_current(st, slot);
    }

    /// The class stops allocating from its current span: the blocks of its window and of
    /// its cursor go back to the span's bitmap, and the span takes the role its free
    /// blocks give it (its blocks on the caches stay there, used: S4).
    static void retire_current(span_state& st, std::uint32_t slot) noexcept {
        span* const sp = st.current[slot];
        if (const std::uint64_t bits = st.bits[slot]; bits != 0) {
            span_bitmap(sp)[sp->scan - 1] |= bits; // the window is the word last taken (S5)
            sp->used -= bits_set(bits);
        }
        stop_cursor(st, sp);
        set_current(st, slot, nullptr);
        if (sp->used == 0) {
            span_life::make_clean(st, sp, os_now_ms());
        } else if (span_blocks(sp) - sp->used >= reuse_threshold(span_blocks(sp))) {
            wake_partial(st, sp);
        } else {
            sp->role = span_role::sleeping;
            sp->wake_at = span_blocks(sp) - reuse_threshold(span_blocks(sp));
        }
    }

    /// A free brought `used` to `wake_at`: the span empties, or wakes; a current span's
    /// heartbeat (S7) runs the slow-path checks and counts down again. A current span
    /// that empties stays its class's (its bitmap has every block again).
    STA_NOINLINE static void span_event(span_state& st, span* sp) noexcept {
        if (sp->role == span_role::current) {
            if (sp->bumping && freed_behind_cursor(st, sp))
                stop_cursor(st, sp);
            if (waits(st)) // this state's own (its holder may hold a parked state's lock)
                give_back_due(st, os_now_ms());
            sp->wake_at = sp->used - (sp->used < heartbeat_frees ? sp->used : heartbeat_frees);
            return;
        }
        if (sp->used == 0) {
            if (sp->role == span_role::partial)
                unlink_partial(st, sp);
            const std::uint32_t now = os_now_ms();
            span_life::make_clean(st, sp, now);
            (void)span_life::purge_due(st, now);
            return;
        }
        wake_partial(st, sp);
    }

    /// A sleeping span reached its reuse threshold: its class may take it again.
    static void wake_partial(span_state& st, span* sp) noexcept {
        sp->role = span_role::partial;
        sp->wake_at = 0;
        sp->prev = nullptr;
        sp->next = st.partial[sp->slot];
        if (sp->next != nullptr)
            sp->next->prev = sp;
        st.partial[sp->slot] = sp;
    }

    /// `sp` (or none) becomes the class's current span, with an empty window and cursor.
    static void set_current(span_state& st, std::uint32_t slot, span* sp) noexcept {
        st.current[slot] = sp;
        st.bits[slot] = 0;
        st.window[slot] = nullptr;
        st.cursor[slot] = st.cursor_end[slot] = nullptr;
    }

    /// A heartbeat of a bumping span (S7): have a sixteenth of the blocks its cursor
    /// handed out come back to the bitmap? Then the class takes them again before it
    /// touches fresh pages (take_word's rule for the words it took, S5).
    static bool freed_behind_cursor(const span_state& st, const span* sp) noexcept {
        const std::uint32_t next = block_index(sp, st.cursor[sp->slot]);
        const std::uint32_t taken = next - sp->first;
        const std::uint32_t out = sp->used - (sp->capacity - next); // live or cached
        return taken - out > taken / 16;
    }

    /// A span as a walk of another thread's state reads it (process_stats, the heap map):
    /// its role and usable bytes, and for one serving a class its slot, its blocks and
    /// those free in its bitmap. Each field is read as it is at its read: one whose role
    /// is changing under the read is `changing`, and counts nowhere.
    struct span_view {
        enum kind : std::uint8_t { clean, purged, in_use, changing } what;
        std::uint32_t slot, blocks, blocks_free;
        std::size_t usable;
    };
    /// (Every field is read here, not through span_blocks and the like: ThreadSanitizer
    /// leaves this function's reads alone, not those of a helper it calls.)
    STA_RACY_READER static span_view read_span(const span& sp) noexcept {
        const span_role role = sp.role;
        const std::size_t usable = span_usable_bytes(&sp); // from the address alone
        if (role == span_role::clean || role == span_role::purged)
            return {role == span_role::clean ? span_view::clean : span_view::purged, 0, 0, 0,
                    usable};
        const std::uint32_t slot = sp.slot, capacity = sp.capacity, first = sp.first;
        const std::uint32_t blocks = capacity - first, used = sp.used;
        if (capacity == 0 || first > capacity || slot >= class_slots || blocks > span_bytes)
            return {span_view::changing, 0, 0, 0, usable};
        return {span_view::in_use, slot, blocks, used < blocks ? blocks - used : 0, usable};
    }
    /// Every segment of `st`, newest first, as fn(segment base, huge, span_view[32]),
    /// under its walk_lock: none is unmapped meanwhile (S14). Another thread's state is
    /// read while that thread works on it: a snapshot.
    template <class Fn>
    static void walk_segments(span_state& st, Fn&& fn) noexcept {
        const spin_guard walking(st.walk_lock);
        for (const segment* seg = st.segments; seg != nullptr; seg = seg->older) {
            span_view views[spans_per_segment];
            for (std::uint32_t k = 0; k < spans_per_segment; ++k)
                views[k] = read_span(seg->spans[k]);
            fn(static_cast<const void*>(seg), read_huge(*seg), views);
        }
    }
    STA_RACY_READER static bool read_huge(const segment& seg) noexcept { return seg.huge; }

    /// process_stats: what `st` holds in its spans, added to `out` (its class entries
    /// need only blocks and blocks_free; blocks of a class's window and cursor, read
    /// as they are, count free: S4).
    STA_RACY_READER static void add_process_stats(span_state& st, process_stats& out) noexcept {
        out.bytes_given_back += st.bytes_given_back;
        out.segments_unmapped += st.segments_unmapped;
        out.bytes_retained += st.retained.held;
        walk_segments(st, [&out](const void*, bool, const span_view* views) {
            ++out.segments;
            for (std::uint32_t k = 0; k < spans_per_segment; ++k) {
                const span_view& v = views[k];
                if (v.what == span_view::clean) {
                    ++out.spans_clean;
                    out.bytes_clean += v.usable;
                } else if (v.what == span_view::purged) {
                    ++out.spans_purged;
                } else if (v.what == span_view::in_use) {
                    ++out.spans_in_use;
                    process_class_stats& c = out.classes[classes::ordinal_of_slot(v.slot)];
                    ++c.spans;
                    c.blocks += v.blocks;
                    c.blocks_free += v.blocks_free;
                }
            }
        });
        for (std::uint32_t n = 0; n < classes::count; ++n) {
            const std::uint32_t slot = classes::slot_of_ordinal(n);
            const std::byte *from = st.cursor[slot], *to = st.cursor_end[slot];
            const std::size_t bumped = to > from && to - from <= std::ptrdiff_t{span_bytes}
                                           ? (to - from) / steps[slot]
                                           : 0;
            out.classes[n].blocks_free += bits_set(st.bits[slot]) + bumped;
        }
    }

    /// The blocks the class's cursor holds (S5).
    static std::size_t cursor_blocks(const span_state& st, std::uint32_t slot) noexcept {
        return static_cast<std::size_t>(st.cursor_end[slot] - st.cursor[slot]) / steps[slot];
    }

    /// `sp`'s cursor stops (S5): the blocks it still holds go to the bitmap, and the
    /// class takes words from the first on; frontier is the word the cursor reached.
    static void stop_cursor(span_state& st, span* sp) noexcept {
        if (!sp->bumping)
            return;
        sp->bumping = false;
        std::byte*& next = st.cursor[sp->slot];
        const std::uint32_t from =
            next == st.cursor_end[sp->slot] ? sp->capacity : block_index(sp, next);
        next = st.cursor_end[sp->slot] = nullptr;
        sp->scan = 0;
        sp->frontier = static_cast<std::uint16_t>((from + 63) / 64);
        if (from == sp->capacity)
            return;
        set_bits(span_bitmap(sp), from, sp->capacity);
        sp->used -= sp->capacity - from;
    }

    static void unlink_partial(span_state& st, span* sp) noexcept {
        if (sp->prev != nullptr)
            sp->prev->next = sp->next;
        else
            st.partial[sp->slot] = sp->next;
        if (sp->next != nullptr)
            sp->next->prev = sp->prev;
        sp->next = sp->prev = nullptr;
    }

    /// A clean span starts serving a class, its class's current span: every block held by
    /// the class's cursor, the bitmap clear but the bits below its first block and its
    /// tail's (S2, S4, S5).
    static void start(span_state& st, span* sp, std::uint32_t slot) noexcept {
        const std::size_t bytes = steps[slot];
        const span_shape& shape = span_shapes<Classes>[slot];
        sp->slot = static_cast<std::uint8_t>(slot);
        sp->block_bytes = static_cast<std::uint32_t>(bytes);
        sp->capacity = shape.capacity; // the rest: a tail (S2)
        const std::uint32_t index = span_index(sp);
        sp->first = index == 0 ? shape.first_in_span_0 : 0;
        sp->recip = shape.recip;
        sp->bitmap = bitmap_of_span(segment_of(sp), index, bytes);
        sp->used = span_blocks(sp); // all held by the cursor
        sp->wake_at = sp->used - (sp->used < heartbeat_frees ? sp->used : heartbeat_frees);
        const std::uint32_t words = (sp->capacity + 63) / 64;
        sp->scan = static_cast<std::uint16_t>(words); // spent, the bitmap's end (refill)
        sp->frontier = static_cast<std::uint16_t>(words);
        sp->role = span_role::current;
        sp->bumping = true;
        sp->next = sp->prev = nullptr;
        std::uint64_t* const bitmap = span_bitmap(sp);
        bitmap[0] = 0; // a class of 1 KiB or more: one word, and no call to memset
        for (std::uint32_t w = 1; w < words; ++w)
            bitmap[w] = 0;
        if (sp->first != 0) [[unlikely]] // span 0: the places below the first block (S2)
            set_bits(bitmap, 0, sp->first);
        if (shape.tail) { // the tail's bit (S2): set, never a block's
            const std::uint32_t w = sp->capacity / 64;
            bitmap[w] = (w < words ? bitmap[w] : 0) | std::uint64_t{1} << (sp->capacity % 64);
        }
        std::byte* const begin = span_begin(sp);
        st.cursor[slot] = begin + std::size_t{sp->first} * bytes;
        st.cursor_end[slot] = begin + std::size_t{sp->capacity} * bytes;
    }

    /// Sets bits from .. to - 1 of a bitmap.
    static void set_bits(std::uint64_t* bitmap, std::uint32_t from, std::uint32_t to) noexcept {
        for (std::uint32_t i = from; i < to;) {
            const std::uint32_t w = i / 64;
            const std::uint32_t top = to - w * 64 >= 64 ? 64 : to - w * 64;
            const std::uint64_t below_top =
                top == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << top) - 1;
            bitmap[w] |= below_top & (~std::uint64_t{0} << (i % 64));
            i = (w + 1) * 64;
        }
    }

    /// The bits of word w of `sp`'s bitmap below its capacity: all but the tail's (S2);
    /// take_word leaves out those below its first block.
    static std::uint64_t blocks_of_word(const span* sp, std::uint32_t w) noexcept {
        const std::uint32_t first = w * 64;
        return sp->capacity - first >= 64 ? ~std::uint64_t{0}
                                          : (std::uint64_t{1} << (sp->capacity - first)) - 1;
    }

    /// A span for a class, clean or purged (layout/span_life.hpp), else from a new
    /// segment; nullptr when the OS refuses.
    static span* take_clean(span_state& st) noexcept {
        if (span* const sp = span_life::take_idle(st))
            return sp;
        return map_segment(st) ? span_life::take_idle(st) : nullptr;
    }

    /// Map a segment and its bitmaps; its spans join the purged list (their pages are not
    /// resident: S11), or with prefault the clean list, so that they come out in
    /// address order, span 0 (its blocks after the headers) last. False, with nothing
    /// changed, when the OS refuses.
    STA_NOINLINE static bool map_segment(span_state& st) noexcept {
        st.retained.release_all(); // kept big pages go first (heaps/retained_mappings.hpp)
        constexpr std::size_t block_bytes = segment_bytes - segment_header_bytes;
        // The spans of a segment start purged (not resident) unless prefaulted: noted so
        // before the mapping, which then meets the memory limit with its headers alone.
        if (!st.prefault)
            os_memory.note_purged(block_bytes);
        // The OS's own pages come with a guard page below (S1): no overflow from below
        // reaches the headers. A test's page source maps without one.
        const bool guarded = st.map_pages == &os_map_pages;
        void* const memory = guarded ? os_map_aligned_guarded(segment_bytes, segment_bytes)
                                     : map_aligned(st.map_pages, segment_bytes, segment_bytes);
        // Metadata from the OS itself: st.map_pages is the source of block memory.
        auto* const bitmaps =
            memory != nullptr ? static_cast<std::byte*>(os_map_pages(bitmap_area_bytes)) : nullptr;
        if (bitmaps == nullptr || !segment_map_covers(memory)) { // refused before any use
            if (bitmaps != nullptr)
                os_unmap_pages(bitmaps, bitmap_area_bytes);
            if (memory != nullptr)
                span_life::unmap_segment_pages(memory, guarded);
            if (!st.prefault)
                os_memory.forget_purged(block_bytes);
            return false;
        }
        const std::size_t held = st.mappings - st.segments_unmapped;
        // The density rule walks the spans only while the newest segment is plain: one
        // that is huge still (no span of it purged) was judged dense, and is spent now.
        // Near the memory limit, plain pages: a huge page is resident whole, and the
        // account counts a purged span as not (os/memory_account.hpp).
        const bool huge =
            !os_memory.near_limit() &&
            (held >= st.huge_pages_from || (st.huge_pages_dense && held >= huge_pages_dense_from &&
                                            ((st.segments != nullptr && st.segments->huge) ||
                                             dense_enough_for_huge_pages(st, held))));
        advise_pages(memory, segment_bytes, huge, st.prefault);
        auto* const seg = new (memory) segment{};
        seg->owner = &st; // S9
        seg->huge = huge;
        seg->guarded = guarded;
        seg->bitmaps = bitmaps;
        {
            const spin_guard walking(st.walk_lock); // S14
            seg->older = st.segments;
            if (st.segments != nullptr)
                st.segments->newer = seg;
            st.segments = seg;
        }
        ++st.mappings;
        mark_pool_segment(seg);
        if constexpr (threaded)
            st.home->segment_mapped();
        std::byte* const blocks = static_cast<std::byte*>(memory) + segment_header_bytes;
        if (!st.prefault) {
            os_leave_unused(blocks, block_bytes);
            st.bytes_purged += block_bytes;
            seg->idle_spans = spans_per_segment;
        }
        const std::uint32_t now = os_now_ms();
        st.purge.note_mapped(now); // after an unmap, a refault (pool/purge_delay.hpp)
        for (std::uint32_t k = 0; k < spans_per_segment; ++k) { // pushed: 0, 31, 30, ..., 1
            span* const sp = &seg->spans[k == 0 ? 0 : spans_per_segment - k];
            if (st.prefault) {
                span_life::make_clean(st, sp, now);
            } else {
                sp->role = span_role::purged;
                span_life::push_front(st.purged, sp);
            }
        }
        hooks::page_mapped(blocks, block_bytes);
        STA_PROBE2(segment_mapped, memory, static_cast<int>(huge));
        return true;
    }

    /// The density rule of huge pages (huge_pages_dense): the blocks the state's classes
    /// hold (S4: handed out or on caches; a window's blocks not handed out are free) fill
    /// at least half of the `held` segments. Measured on the drop-in (docs/design.md,
    /// "Decisions"): a program that builds its heap (lua binary_trees, sqlite3, xmllint,
    /// python3) holds 3.0-3.4 MiB when it maps its third segment; a small one (python3 -c
    /// pass, lua -e '', one sqlite3 query, Lua's string_building) maps one. A walk of the
    /// spans of fewer than huge_pages_auto_from segments, made by map_segment only while
    /// the newest segment is plain (fresh 32 KiB blocks, a segment every 62: 249
    /// instructions a block with a walk at every segment, 214 with this one).
    static bool dense_enough_for_huge_pages(const span_state& st, std::size_t held) noexcept {
        std::size_t in_use = 0;
        for (const segment* seg = st.segments; seg != nullptr; seg = seg->older)
            for (const span& sp : seg->spans)
                if (sp.role != span_role::clean && sp.role != span_role::purged)
                    in_use += std::size_t{sp.used} * sp.block_bytes;
        for (std::uint32_t n = 0; n < classes::count; ++n) { // a window's blocks are free
            const std::uint32_t slot = classes::slot_of_ordinal(n);
            in_use -=
                (std::size_t{bits_set(st.bits[slot])} + cursor_blocks(st, slot)) * steps[slot];
        }
        return in_use >= held * (segment_bytes / 2);
    }

    // ---- what a state holds (its family's stats, checked-build reports) ----------------

    /// The pool_stats of `st`'s family (memory_pool::stats; one state: the seed's mode, or
    /// the calling thread's).
    static void add_stats(const span_state& st, pool_stats& out) noexcept {
        out.mapping_bytes = segment_bytes;
        out.mappings = st.mappings;
        out.bytes_reserved = st.mappings * (segment_bytes - segment_header_bytes);
        out.bytes_mapped = st.mappings * (segment_bytes + bitmap_area_bytes);
        out.bytes_purged = st.bytes_purged;
        out.bytes_given_back = st.bytes_given_back;
        out.segments_unmapped = st.segments_unmapped;
        for (const segment* seg = st.segments; seg != nullptr; seg = seg->older)
            out.bytes_resident += os_resident_bytes(seg, segment_bytes) +
                                  os_resident_bytes(seg->bitmaps, bitmap_area_bytes);
        for (const segment* seg = st.segments; seg != nullptr; seg = seg->older)
            for (const span& sp : seg->spans) {
                if (sp.role == span_role::clean || sp.role == span_role::purged) {
                    ++(sp.role == span_role::clean ? out.spans_clean : out.spans_purged);
                    out.bytes_free += span_usable_bytes(&sp);
                    continue;
                }
                ++out.spans_in_use;
                const std::size_t bytes = span_class_bytes(&sp);
                class_stats& c = out.classes[classes::ordinal_of_slot(sp.slot)];
                const std::size_t blocks = span_blocks(&sp) - sp.used; // in the bitmap (S4)
                c.free_blocks += blocks;
                out.bytes_free +=
                    blocks * bytes + span_usable_bytes(&sp) - span_blocks(&sp) * bytes;
            }
        for (std::uint32_t n = 0; n < classes::count; ++n) {
            const std::uint32_t slot = classes::slot_of_ordinal(n);
            class_stats& c = out.classes[n];
            std::size_t blocks = std::size_t{bits_set(st.bits[slot])} + cursor_blocks(st, slot);
            for (void* b = st.heads[slot]; b != nullptr; b = hooks::load_link(b))
                ++blocks;
            c.free_blocks += blocks;
            out.bytes_free += blocks * steps[slot];
        }
        out.bytes_in_use_high_water = out.bytes_reserved;
    }

    /// The class of the free block p (0 when p is not a free block): for a checked
    /// build's report of a double free.
    static std::size_t free_list_class_of(const span_state& st, const void* p) noexcept {
        for (std::uint32_t n = 0; n < classes::count; ++n) {
            const std::uint32_t slot = classes::slot_of_ordinal(n);
            for (void* b = st.heads[slot]; b != nullptr; b = hooks::load_link(b))
                if (b == p)
                    return steps[slot];
            const auto d =
                static_cast<std::size_t>(static_cast<const std::byte*>(p) - st.window[slot]);
            const std::size_t bytes = steps[slot];
            if (st.window[slot] != nullptr && d < 64 * bytes && d % bytes == 0 &&
                ((st.bits[slot] >> (d / bytes)) & 1) != 0)
                return bytes;
            const std::byte* const next = st.cursor[slot];
            if (p >= next && p < st.cursor_end[slot] &&
                static_cast<std::size_t>(static_cast<const std::byte*>(p) - next) % bytes == 0)
                return bytes;
        }
        if (!is_pool_segment(p))
            return 0;
        const span* const sp = span_of(p);
        if (owner_of(p) != &st || sp->capacity == 0)
            return 0;
        const std::size_t bytes = span_class_bytes(sp);
        const auto offset =
            static_cast<std::size_t>(static_cast<const std::byte*>(p) - span_begin(sp));
        if (offset % bytes != 0 || !is_block_place(sp, offset / bytes))
            return 0;
        const std::size_t i = offset / bytes;
        return ((span_bitmap(sp)[i / 64] >> (i % 64)) & 1) != 0 ? bytes : 0;
    }
    static std::ptrdiff_t offset_in_memory(const span_state& st, const void* p) noexcept {
        for (const segment* seg = st.segments; seg != nullptr; seg = seg->older)
            if (seg == segment_of(p))
                return reinterpret_cast<const std::byte*>(p) -
                       reinterpret_cast<const std::byte*>(seg);
        return -1;
    }
};

/// The span layout of one pool family: the fast paths, inlined at the call site and
/// reaching the family's state through its home, over span_slow's code.
template <class Engine>
struct span_core : span_slow<typename Engine::classes, Engine::threaded> {
    using slow = span_slow<typename Engine::classes, Engine::threaded>;
    using slow::steps;
    using slow::threaded;
    using typename slow::classes;
    STA_FORCE_INLINE static span_state& s() noexcept { return Engine::state(); }

    /// A block of the class of a canonical pooled slot: heads, else the cursor of a span
    /// in its first pass, else the window (S5: the window and the cursor are never both
    /// filled, so their order costs a block of a window the cursor's test, and a fresh
    /// block none: 32 B fresh 9.7 instructions, docs/dispatch.md "The cursor before the
    /// window").
    /// A family with freed marks hands every block out with its second word cleared (M1).
    STA_FORCE_INLINE static void* alloc(std::uint32_t slot) noexcept {
        span_state& st = s();
        if (free_block* const block = st.heads[slot]) {
            if constexpr (Engine::freed_marks) // M4: its link is followed only if its
                if (!has_freed_mark(block, st.mark_key)) [[unlikely]] // mark checks it
                    return slow::refuse_overwritten_at_malloc(block);
            st.heads[slot] = static_cast<free_block*>(hooks::load_link(block));
            return handed_out(block);
        }
        if (std::byte* const block = st.cursor[slot]; block != st.cursor_end[slot]) [[likely]] {
            st.cursor[slot] = block + steps[slot];
            STA_ASSUME(block != nullptr); // S5: a cursor with blocks lies in a span
            return handed_out(block);
        }
        const std::uint64_t bits = st.bits[slot];
        if (bits != 0) [[likely]] {
            st.bits[slot] = bits & (bits - 1);
            std::byte* const block = block_at(st.window[slot], lowest_bit(bits), steps[slot]);
            STA_ASSUME(block != nullptr); // S5: a window with bits lies in a span
            return handed_out(block);
        }
        return refill(slot);
    }
    /// A block leaves the pool: without its mark in a family with freed marks (M1).
    STA_FORCE_INLINE static void* handed_out(void* block) noexcept {
        if constexpr (Engine::freed_marks)
            clear_freed_mark(block);
        return block;
    }

    /// A block freed with the size of its class (`slot`, the class the caller's size names:
    /// a block a shrink kept in a larger class goes on the smaller class's cache, and
    /// serves it): onto the class's cache (S5), or, while the frees outrun the allocations
    /// (direct_frees: a scene torn down), to its span's bitmap at once, while it is warm,
    /// where a flush would walk it again (22 instructions a block in the tree scene's
    /// teardown): the tree scene's round 12.24 M -> 11.68 M instructions and 8 % less CPU
    /// time, the GUI scene's 12.57 M -> 12.15 M, for a test more on every sized free
    /// (docs/dispatch.md, "A flush sooner while a program frees"). The drop-in's family
    /// (freed marks) caches its sized frees always. Another thread's block goes home.
    STA_FORCE_INLINE static void release(std::uint32_t slot, void* p) noexcept {
        span_state& st = s();
        if constexpr (threaded)
            if (owner_of(p) != &st) [[unlikely]]
                return send_home(p); // S10
        if constexpr (!Engine::freed_marks)
            if (st.direct_frees) [[unlikely]]
                return slow::release_to_span(st, span_of(p), p);
        hooks::block_pushed(p, steps[slot]);
        slow::template cache<Engine::freed_marks>(st, slot, p); // M1: the drop-in's sized
                                                                // delete without its checks
    }

    /// Any pooled block, freed without a size (the C API, the drop-in malloc): its bit in
    /// its span's bitmap, whatever span it lies in, never the class's cache. Frees in
    /// bursts (a document freed whole) set bits while the blocks and their span headers
    /// are warm, where a cache would link them and a flush walk them again, colder: xmllint
    /// and lua through the drop-in took 5-8 % longer with a cache (docs/dispatch.md). A
    /// class that allocates refills every 64 blocks at the most, and frees into the current
    /// span count down to its heartbeat (S7): the slow-path checks run under any pattern of
    /// calls, a loop of malloc and free included.
    /// A family with freed marks marks the block (M1: realloc's move, the checks off).
    STA_FORCE_INLINE static void release_unsized(void* p) noexcept {
        span_state& st = s();
        if constexpr (threaded)
            if (owner_of(p) != &st) [[unlikely]]
                return send_home(p); // S10, M3
        slow::release_to_span(st, span_of(p), p);
        if constexpr (Engine::freed_marks)
            set_freed_mark(p, st.mark_key);
    }

    /// The release checks' view of a pooled address (realloc's): freed when p is the start
    /// of a live block (its bit clear and not on its class's cache; another thread's
    /// block: its boundary alone, the bitmap is its owner's), else what is wrong.
    static free_verdict block_state(const void* p) noexcept {
        const span* const sp = span_of(p);
        const std::uint32_t i = exact_block_index(sp, p);
        if (i == no_block)
            return free_verdict::not_a_block;
        if constexpr (threaded)
            if (owner_of(p) != &s())
                return is_block_place(sp, i) ? free_verdict::freed : free_verdict::not_a_block;
        if (slow::never_handed_out(s(), sp, p))
            return free_verdict::not_a_block;
        if (Engine::freed_marks && has_any_mark(p, s().mark_key)) // M2, M3
            return has_sent_mark(p, s().mark_key) ? free_verdict::double_free
                                                  : slow::marked_state(s(), sp, p);
        return ((span_bitmap(sp)[i / 64] >> (i % 64)) & 1) != 0 ? slow::set_bit_verdict(sp, i)
                                                                : free_verdict::freed;
    }

    /// release_unsized with the release checks of the C API and the drop-in malloc: p
    /// must be the start of a block of its span's class (exact_block_index) and its bit
    /// clear (a block freed twice finds it set, a block of a clean or purged span too, and
    /// the boundary at the start of the span's tail its set tail bit, S2). Anything else
    /// is returned, and nothing is done. Not seen: a block freed twice whose bitmap word
    /// its class took into its window in between (64 blocks at the most, S5). Another
    /// thread's block goes home unchecked for the bit; its owner's drain checks it
    /// (drain_block).
    STA_FORCE_INLINE static free_verdict release_checked(void* p) noexcept {
        span* const sp = span_of(p);
        const std::uint32_t i = exact_block_index(sp, p);
        if (i == no_block) [[unlikely]]
            return free_verdict::not_a_block;
        span_state& st = s();
        if constexpr (threaded)
            if (owner_of(p) != &st) [[unlikely]] {
                send_home(p); // S10
                return free_verdict::freed;
            }
        return slow::set_free_bit(st, sp, p, i);
    }

    /// A free without a size with the release checks, for a heap whose malloc clears the
    /// freed mark (pool/freed_mark.hpp, M1; the drop-in malloc): p must be the start of a
    /// block of its span's class that its class handed out; one that carries the mark is
    /// looked at closer (M2). It goes on its class's cache (S5): a block freed and taken
    /// again by a program that churns never reaches its bitmap. While the state frees more
    /// than it allocates (direct_frees: a document freed whole) its bit is set at once
    /// instead, while the block and its span are warm, where a flush would walk the cache
    /// again colder (xmllint and lua took 5-8 % longer with every free on the caches,
    /// docs/dispatch.md). Either way the block carries the mark from here on. Anything
    /// else is returned, and nothing is done. Another thread's block goes home unmarked
    /// (M3). try_release_marked is its fast path.
    static free_verdict release_marked(void* p) noexcept {
        span* const sp = span_of(p);
        const std::uint32_t i = exact_block_index(sp, p);
        if (i == no_block)
            return free_verdict::not_a_block;
        span_state& st = s();
        if constexpr (threaded)
            if (owner_of(p) != &st) {
                send_home(p); // S10
                return free_verdict::freed;
            }
        if (slow::never_handed_out(st, sp, p))
            return free_verdict::not_a_block;
        if (has_sent_mark(p, st.mark_key)) // freed by another thread already (M3)
            return free_verdict::double_free;
        if (has_freed_mark(p, st.mark_key))
            if (const free_verdict verdict = slow::marked_state(st, sp, p);
                verdict != free_verdict::freed)
                return verdict;
        return keep_marked(st, sp, p, i) ? free_verdict::freed : slow::set_bit_verdict(sp, i);
    }
    /// release_marked's common cases, inline: a block on a block boundary of another
    /// thread's state goes home; one of the calling thread's state, handed out, without a
    /// mark, goes on its class's cache, or has its bit set while direct_frees holds (true).
    /// Anything else is left to release_marked (false: nothing done), so that this path
    /// makes no call but tail calls, and saves no register.
    STA_FORCE_INLINE static bool try_release_marked(void* p) noexcept {
        span* const sp = span_of(p);
        const std::uint32_t i = exact_block_index(sp, p);
        if (i == no_block) [[unlikely]]
            return false;
        span_state& st = s();
        if constexpr (threaded)
            if (owner_of(p) != &st) [[unlikely]] {
                send_home(p); // S10, M3
                return true;
            }
        if (slow::never_handed_out(st, sp, p) ||
            (!frees_unread(st, sp) && has_any_mark(p, st.mark_key))) [[unlikely]]
            return false;
        return keep_marked(st, sp, p, i); // false, unchanged: release_marked refuses it
    }
    /// While the frees outrun the allocations (direct_frees) and its class's cache is
    /// empty, a checked free does not read its block: a block freed already has its bit
    /// set or lies in its class's window (keep_marked tests both), and none is on the
    /// cache. A block on its way home from another thread (M3) is not seen here: its link
    /// in the outbox or the inbox is overwritten by the mark, and the drain refuses it
    /// (M4). The teardown of a heap the caches no longer hold pays no cache miss a block:
    /// start_up's frees at exit, docs/dispatch.md "A burst's free reads no block".
    STA_FORCE_INLINE static bool frees_unread(const span_state& st, const span* sp) noexcept {
        return st.direct_frees && st.heads[sp->slot] == nullptr;
    }
    /// The tail of both: a block of the calling thread's state, checked, is kept marked:
    /// on its class's cache, or, while direct_frees holds, with its bit set at once
    /// (false, nothing done: the bit was set already).
    STA_FORCE_INLINE static bool keep_marked(span_state& st, span* sp, void* p,
                                             std::uint32_t i) noexcept {
        if (st.direct_frees) [[unlikely]] {
            if (slow::in_window(st, sp, i) || test_and_set_bit(span_bitmap(sp)[i / 64], i))
                [[unlikely]]
                return false;
            hooks::block_pushed(p, span_class_bytes(sp));
            link_freed(p, nullptr, st.mark_key); // M1, written without a read of p
            if (--sp->used == sp->wake_at) [[unlikely]]
                slow::span_event(st, sp);
            return true;
        }
        hooks::block_pushed(p, span_class_bytes(sp));
        slow::template cache<true>(st, sp->slot, p);
        return true;
    }
    /// heads[slot] and the window are empty: the calling thread's state (adopted first if
    /// it has none, or exchanged if it took one for its frees: home's for_refill) refills
    /// the class (span_slow::refill).
    /// A family with freed marks serves the drop-in malloc: the block goes out without its
    /// mark (M1), and no block sets errno to ENOMEM, so that malloc returns alloc's answer
    /// as it is.
    STA_NOINLINE static void* refill(std::uint32_t slot) noexcept {
        span_state* st = Engine::home::existing(); // never nullptr for one owner
        bool adopted = st == nullptr;
        if constexpr (threaded)
            if (adopted || st->taken_for_frees) [[unlikely]] {
                adopted = true;
                if ((st = Engine::home::for_refill()) == nullptr)
                    return no_memory();
            }
        if (Engine::freed_marks && st->mark_key == 0) // once, before it hands out a block:
            st->mark_key = new_mark_key();            // other threads read the key (send_home), M5
        void* const block = slow::refill(*st, slot, adopted);
        return block != nullptr ? handed_out(block) : no_memory();
    }
    static void* no_memory() noexcept {
        if constexpr (Engine::freed_marks)
            errno = ENOMEM;
        return nullptr;
    }
    /// Another thread's block goes home, through the calling thread's outbox (S10, S13).
    /// A thread without a state adopts one here, so that a consumer that only frees
    /// batches its frees as a thread that allocates does (xmalloc-test, docs/dispatch.md
    /// "A consumer batches its frees"); once its end was handled it sends the block alone
    /// (home: for_frees).
    STA_NOINLINE static void send_home(void* p) noexcept {
        slow::send_home(Engine::home::for_frees(), p);
    }

    // ---- what the pool holds (stats, checked-build reports) ----------------------------

    /// What the pool holds (span_slow::add_stats), a checked build's report of a double
    /// free (span_slow::free_list_class_of), a pointer's place in the pool's memory.
    static void add_stats(pool_stats& out) noexcept { slow::add_stats(s(), out); }
    static std::size_t free_list_class_of(const void* p) noexcept {
        return slow::free_list_class_of(s(), p);
    }
    static std::ptrdiff_t offset_in_memory(const void* p) noexcept {
        return slow::offset_in_memory(s(), p);
    }
};

/// The templates the compiled part instantiates for one key of switches (src/pool): the
/// span layout's slow paths for each class set and thread mode, and a per-thread family's
/// over them (home/per_thread.hpp, pool/next_tiers.hpp). KIND is `template` there and
/// `extern template` below.
#define STA_POOL_SPAN_TEMPLATES(KIND, KEY)                                                         \
    KIND struct span_slow<quarter_classes, true, KEY>;                                             \
    KIND struct span_slow<quarter_classes, false, KEY>;                                            \
    KIND struct span_slow<power_of_two_classes, true, KEY>;                                        \
    KIND struct span_slow<power_of_two_classes, false, KEY>;                                       \
    KIND struct family_ops<span_state, span_slow<quarter_classes, true, KEY>>;                     \
    KIND struct family_ops<span_state, span_slow<power_of_two_classes, true, KEY>>;                \
    KIND struct heap_tier_ops<span_state, span_slow<quarter_classes, true, KEY>>;                  \
    KIND struct heap_tier_ops<span_state, span_slow<power_of_two_classes, true, KEY>>

#if STA_POOL_COMPILED && !defined(STA_POOL_COMPILING)
// The compiled part's instantiations (src/pool/spans_release.cpp, spans_checked.cpp): a
// unit whose switches are at their defaults uses them; any other names its own (the
// config_key parameter), so these declarations do not apply to it.
STA_POOL_SPAN_TEMPLATES(extern template, compiled_release_key);
STA_POOL_SPAN_TEMPLATES(extern template, compiled_checked_key);
#endif

} // namespace sta::detail
