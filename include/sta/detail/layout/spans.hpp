// sta-pool: the span layout — memory in aligned spans that each serve one class. The
// structures, their picture and the invariants: layout/span_types.hpp; what becomes of
// a span whose blocks have all come back: layout/span_life.hpp.
//
// A block finds its span, and so its class, by masking its address: the sized free
// needs no lookup table and the C API needs no per-block header. Allocation stays in
// one span per class until that span is exhausted (free-list sharding), so blocks
// handed out together lie together, and a span whose blocks have all come back is
// clean again: any class can take it, in bump (ascending address) order. When the
// current span is exhausted the class takes, in this order: the span's own free
// blocks if at least a quarter of it is free; else the most recently woken partial
// span of the class; else a clean span; else a new segment. A span's free blocks
// become the class's list in ascending address order (in_address_order), whatever
// order they were freed in, so a heap that has lived still hands out neighbours. A
// span retired with less than a quarter free sleeps until frees bring it there (its
// `wake_at`), so a span with a few free slots is not taken again and again for a few
// blocks each time. A span whose blocks have all come back goes clean, and
// after the purge delay gives its pages back (layout/span_life.hpp).
//
#pragma once

#include "sta/detail/diag/tool_hooks.hpp"
#include "sta/detail/layout/span_life.hpp"
#include "sta/detail/layout/span_types.hpp"
#include "sta/detail/os/clock.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/next_tiers.hpp"
#include "sta/detail/pool/segment_map.hpp"
#include "sta/detail/pool/state.hpp"
#include "sta/detail/pool/stats.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>

namespace sta::detail {

template <class Engine>
struct span_core {
    STA_FORCE_INLINE static span_state& s() noexcept { return Engine::state(); }

    // ---- the fast path's fields ----------------------------------------------------
    STA_FORCE_INLINE static free_block*& head(std::uint32_t slot) noexcept {
        return s().heads[slot];
    }
    STA_FORCE_INLINE static std::byte*& cursor(std::uint32_t slot) noexcept {
        return s().cursors[slot];
    }
    STA_FORCE_INLINE static std::byte* end(std::uint32_t slot) noexcept { return s().ends[slot]; }
    /// Every class has a cursor of its own, so every class bumps by its own size.
    static constexpr std::array<std::size_t, slot_count> steps = [] {
        std::array<std::size_t, slot_count> out{};
        for (std::uint32_t slot = largest_class_slot; slot <= smallest_class_slot; ++slot)
            out[slot] = class_bytes_of_slot(slot);
        return out;
    }();

    /// A freed block of the class's current span goes on the class's list (LIFO: the
    /// warmest block comes back first; S4: it stays "used", held by the class). Any
    /// other block goes to its own span's list. `slot` is the class the caller's size
    /// names; a block kept in a larger class by a shrink is never its current span's.
    static constexpr bool release_feeds_head = false; // only sometimes: see the table
    STA_FORCE_INLINE static void release(std::uint32_t slot, void* p) noexcept {
        span_state& st = s();
        if (((reinterpret_cast<std::uintptr_t>(p) ^ st.current_base[slot]) / span_bytes) == 0)
            [[likely]] {
            hooks::store_link(p, st.heads[slot]);
            hooks::block_pushed(p, class_bytes_of_slot(slot));
            st.heads[slot] = static_cast<free_block*>(p);
            return;
        }
        span* const sp = span_of(p);
        if constexpr (threaded)
            if (sp->owner != &st) [[unlikely]]
                return send_home(sp, p); // S10
        release_to_span(st, sp, p);
    }

    /// A block of `sp`, freed by the thread that holds `st` (its owner, or the thread
    /// draining a parked state), goes to the span's own list (S4, S7).
    STA_FORCE_INLINE static void release_to_span(span_state& st, span* sp, void* p) noexcept {
        hooks::store_link(p, sp->free);
        hooks::block_pushed(p, span_class_bytes(sp));
        sp->free = static_cast<free_block*>(p);
        if (--sp->used == sp->wake_at) [[unlikely]]
            span_event(st, sp);
    }

    /// heads[slot] is empty and the bump range too short: find the class a span with
    /// blocks to hand out (see the file comment for the order), then hand out one.
    /// A thread without a pool adopts one first; blocks other threads sent home are
    /// taken back first, and may give the class its list again.
    STA_NOINLINE static void* refill(std::uint32_t slot) noexcept {
        span_state* const own = Engine::home::own();
        if (own == nullptr)
            return nullptr;
        span_state& st = *own;
        give_back_due(st);
        if constexpr (threaded) {
            // The class may hold blocks now: the state was just adopted with its lists
            // and bump ranges, or the drain gave some back (or emptied the span).
            (void)drain(st);
            if (free_block* const block = st.heads[slot]) {
                st.heads[slot] = static_cast<free_block*>(hooks::load_link(block));
                return block;
            }
            const std::size_t bytes = class_bytes_of_slot(slot);
            if (bytes <= static_cast<std::size_t>(st.ends[slot] - st.cursors[slot])) {
                std::byte* const block = st.cursors[slot];
                st.cursors[slot] = block + bytes;
                return block;
            }
        }
        if (span* const cur = st.current[slot]) {
            const std::uint32_t freed = cur->capacity - cur->used;
            if (freed >= reuse_threshold(cur->capacity))
                return take_list(st, slot, cur);
            cur->role = span_role::sleeping;
            cur->wake_at = cur->capacity - reuse_threshold(cur->capacity);
            set_current(st, slot, nullptr); // S7 holds: freed < threshold, so used > wake_at
        }
        if (span* const sp = st.partial[slot]) {
            unlink_partial(st, sp);
            sp->role = span_role::current;
            set_current(st, slot, sp);
            st.cursors[slot] = st.ends[slot] = span_limit(sp);
            return take_list(st, slot, sp);
        }
        span* const sp = take_clean(st);
        if (sp == nullptr)
            return nullptr;
        start(st, sp, slot);
        std::byte* const block = st.cursors[slot];
        st.cursors[slot] = block + class_bytes_of_slot(slot);
        return block;
    }

    /// What `st` has kept free for its delay goes back to the OS: clean spans' pages and
    /// big blocks' retained mappings; and, for a per-thread family, what parked states
    /// kept (home/per_thread.hpp). The clock is read only when something waits.
    static void give_back_due(span_state& st) noexcept {
        const bool own = waits(st);
        bool parked = false;
        if constexpr (threaded)
            parked = Engine::home::parked_wait();
        if (!own && !parked)
            return;
        const std::uint32_t now = os_now_ms();
        if (own)
            give_back_due(st, now);
        if constexpr (threaded)
            if (parked)
                Engine::home::give_back_parked(now);
    }
    /// The same for `st` alone, at `now`.
    static void give_back_due(span_state& st, std::uint32_t now) noexcept {
        (void)span_life::purge_due(st, now);
        if (st.purge_delay_ms != purge_never)
            (void)st.retained.release_due(now, st.purge_delay_ms);
    }
    /// Does `st` keep something free that its delay will give back?
    static bool waits(const span_state& st) noexcept {
        return st.purge_delay_ms != purge_never &&
               (st.clean_oldest != nullptr || st.retained.count != 0);
    }

    /// Give back at once everything `st` holds free (trim, malloc_trim): every clean
    /// span's pages, the kept big mappings, the private heap's spare chunk. The bytes
    /// given back.
    static std::size_t trim(span_state& st) noexcept {
        return span_life::purge_all(st) + st.retained.release_all() + st.heap.trim();
    }

    /// Blocks of different classes lie in different spans: never in place.
    static bool resize_in_place(std::byte*, std::size_t, std::size_t) noexcept { return false; }

    /// The class of a pooled block is its span's, whatever size the caller names.
    static std::size_t class_bytes_of_block(const void* p, std::size_t) noexcept {
        return pooled_block_bytes(p);
    }

    // ---- slow paths ------------------------------------------------------------------

    static constexpr bool threaded = Engine::home::threaded;

    /// S10: another thread's block goes to its owner's inbox; an owner whose thread
    /// ended has the sender take it back at once (home/per_thread.hpp).
    STA_NOINLINE static void send_home(span* sp, void* p) noexcept {
        sp->owner->inbox.push(p);
        Engine::home::sent_home(*sp->owner);
    }

    /// Take back every block other threads sent home (the owner only). True when there
    /// was any.
    static bool drain(span_state& st) noexcept {
        void* b = st.inbox.take_all();
        if (b == nullptr)
            return false;
        while (b != nullptr) {
            void* const next = hooks::load_link(b);
            if (is_pool_segment(b))
                Engine::push(span_of(b)->slot, b); // keeps the table's slots (T1)
            else
                next_tiers<Engine>::heap_free_sent(st, b);
            b = next;
        }
        return true;
    }

    /// A parked state (its thread ended), held by the thread that parks it or that sent
    /// it blocks: every block sent home goes back to its span and the spans of classes
    /// go back to the state's lists; the spans that come clean wait for their delay like
    /// any (the home has other threads give them back: home/per_thread.hpp). Nothing
    /// here reaches a state but `st`.
    static void drain_parked(span_state& st) noexcept {
        for (void* b = st.inbox.take_all(); b != nullptr;) {
            void* const next = hooks::load_link(b);
            if (is_pool_segment(b))
                release_to_span(st, span_of(b), b);
            else
                next_tiers<Engine>::heap_free_sent(st, b);
            b = next;
        }
        for (std::uint32_t slot = 0; slot < slot_count; ++slot)
            if (st.current[slot] != nullptr)
                retire_current(st, slot);
    }

    /// The class stops allocating from its current span: the blocks of its list go back
    /// to the span, the bump range leaves it (its blocks were never handed out: the span
    /// ends where the bump stopped), and the span takes the role its free blocks give it.
    static void retire_current(span_state& st, std::uint32_t slot) noexcept {
        span* const sp = st.current[slot];
        const std::size_t bytes = span_class_bytes(sp);
        const auto bumped = static_cast<std::uint32_t>(
            static_cast<std::size_t>(st.cursors[slot] - span_begin(sp)) / bytes);
        sp->used -= sp->capacity - bumped;
        sp->capacity = bumped;
        for (void* b = st.heads[slot]; b != nullptr;) {
            void* const next = hooks::load_link(b);
            hooks::store_link(b, sp->free);
            sp->free = static_cast<free_block*>(b);
            --sp->used;
            b = next;
        }
        st.heads[slot] = nullptr;
        st.cursors[slot] = st.ends[slot] = nullptr;
        set_current(st, slot, nullptr);
        if (sp->used == 0) {
            span_life::make_clean(st, sp, os_now_ms());
        } else if (sp->capacity - sp->used >= reuse_threshold(sp->capacity)) {
            sp->role = span_role::sleeping;
            sp->wake_at = sp->used; // wake_partial below puts it on the partial list
            wake_partial(st, sp);
        } else {
            sp->role = span_role::sleeping;
            sp->wake_at = sp->capacity - reuse_threshold(sp->capacity);
        }
    }

    /// The class takes the span's free blocks as its list (S4: they count as used).
    static void* take_list(span_state& st, std::uint32_t slot, span* sp) noexcept {
        free_block* const block = in_address_order(sp);
        sp->free = nullptr;
        sp->used = sp->capacity;
        st.heads[slot] = static_cast<free_block*>(hooks::load_link(block));
        return block;
    }

    /// The span's free list relinked in ascending address order, so that the class
    /// hands its blocks out in the order a walk over them goes: one pass over the list
    /// into a bitmap of the span's blocks, one pass over the bitmap. A span is taken
    /// with at least a quarter of it free, so this costs a few instructions per block.
    static free_block* in_address_order(span* sp) noexcept {
        constexpr std::size_t max_words = span_bytes / min_class_bytes / 64;
        const std::size_t used_words = (std::size_t{sp->capacity} + 63) / 64;
        std::uint64_t bits[max_words];
        for (std::size_t w = 0; w < used_words; ++w)
            bits[w] = 0;
        std::byte* const begin = span_begin(sp);
        const unsigned shift = static_cast<unsigned>(std::countr_zero(span_class_bytes(sp)));
        for (void* b = sp->free; b != nullptr; b = hooks::load_link(b)) {
            const std::size_t i =
                static_cast<std::size_t>(static_cast<std::byte*>(b) - begin) >> shift;
            bits[i / 64] |= std::uint64_t{1} << (i % 64);
        }
        void* head = nullptr;
        void* last = nullptr;
        for (std::size_t w = 0; w < used_words; ++w)
            for (std::uint64_t m = bits[w]; m != 0; m &= m - 1) {
                void* const b =
                    begin + ((w * 64 + static_cast<std::size_t>(std::countr_zero(m))) << shift);
                if (last != nullptr)
                    hooks::store_link(last, b);
                else
                    head = b;
                last = b;
            }
        if (last != nullptr)
            hooks::store_link(last, nullptr);
        return static_cast<free_block*>(head);
    }

    /// A free brought `used` to `wake_at`: the span empties, or wakes.
    STA_NOINLINE static void span_event(span_state& st, span* sp) noexcept {
        if (sp->used == 0) {
            if (sp->role == span_role::current) {
                // The class holds none of it (S4) and every block is back: bump order.
                st.cursors[sp->slot] = span_begin(sp);
                st.ends[sp->slot] = span_limit(sp);
                sp->free = nullptr;
                sp->used = sp->capacity;
                return;
            }
            if (sp->role == span_role::partial)
                unlink_partial(st, sp);
            const std::uint32_t now = os_now_ms();
            span_life::make_clean(st, sp, now);
            (void)span_life::purge_due(st, now);
            return;
        }
        wake_partial(st, sp);
    }

    /// A sleeping span reached a quarter free: its class may take it again.
    static void wake_partial(span_state& st, span* sp) noexcept {
        sp->role = span_role::partial;
        sp->wake_at = 0;
        sp->prev = nullptr;
        sp->next = st.partial[sp->slot];
        if (sp->next != nullptr)
            sp->next->prev = sp;
        st.partial[sp->slot] = sp;
    }

    static void set_current(span_state& st, std::uint32_t slot, span* sp) noexcept {
        st.current[slot] = sp;
        st.current_base[slot] =
            sp == nullptr ? 0
                          : reinterpret_cast<std::uintptr_t>(span_begin(sp)) & ~(span_bytes - 1);
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

    /// A clean span becomes the class's current span, all of it in the bump range.
    static void start(span_state& st, span* sp, std::uint32_t slot) noexcept {
        const std::size_t bytes = class_bytes_of_slot(slot);
        sp->slot = static_cast<std::uint8_t>(slot);
        sp->capacity = static_cast<std::uint32_t>(span_usable_bytes(sp) / bytes);
        sp->used = sp->capacity;
        sp->wake_at = 0;
        sp->free = nullptr;
        sp->role = span_role::current;
        sp->next = sp->prev = nullptr;
        set_current(st, slot, sp);
        st.heads[slot] = nullptr;
        st.cursors[slot] = span_begin(sp);
        st.ends[slot] = span_limit(sp);
    }

    /// A span for a class, clean or purged (layout/span_life.hpp), else from a new
    /// segment; nullptr when the OS refuses.
    static span* take_clean(span_state& st) noexcept {
        if (span* const sp = span_life::take_idle(st))
            return sp;
        return map_segment(st) ? span_life::take_idle(st) : nullptr;
    }

    /// Map a segment; its spans, never touched, join the purged list (their pages are
    /// not resident) so that they come out in address order. False, with nothing
    /// changed, when the OS refuses.
    STA_NOINLINE static bool map_segment(span_state& st) noexcept {
        st.retained.release_all(); // kept big pages go first (heaps/retained_mappings.hpp)
        void* const memory = map_aligned(st.map_pages, segment_bytes, segment_bytes);
        if (memory == nullptr)
            return false;
        if (!segment_map_covers(memory)) { // no bit for it: refused before any use
            os_unmap_pages(memory, segment_bytes);
            return false;
        }
        advise_pages(memory, segment_bytes, st.huge_pages, st.prefault);
        auto* const seg = new (memory) segment{};
        seg->older = st.segments;
        if (st.segments != nullptr)
            st.segments->newer = seg;
        st.segments = seg;
        ++st.mappings;
        mark_pool_segment(seg);
        Engine::home::segment_mapped();
        // Prefaulted pages are resident: clean spans. Others are not until touched:
        // purged ones, in the state purged pages are in (S11).
        if (!st.prefault)
            os_leave_unused(static_cast<std::byte*>(memory) + segment_meta_bytes,
                            segment_bytes - segment_meta_bytes);
        const std::uint32_t now = os_now_ms();
        for (std::uint32_t i = spans_per_segment; i-- != 0;) {
            span* const sp = &seg->spans[i];
            sp->owner = &st; // S9
            if (st.prefault) {
                span_life::make_clean(st, sp, now);
            } else {
                sp->role = span_role::purged;
                span_life::push_front(st.purged, sp);
                st.bytes_purged += span_usable_bytes(sp);
                ++seg->idle_spans;
            }
        }
        hooks::page_mapped(static_cast<std::byte*>(memory) + segment_meta_bytes,
                           segment_bytes - segment_meta_bytes);
        return true;
    }

    // ---- what the pool holds (stats, checked-build reports) ----------------------------

    template <class Fn>
    static void for_each_span(Fn&& fn) noexcept {
        for (segment* seg = s().segments; seg != nullptr; seg = seg->older)
            for (span& sp : seg->spans)
                fn(sp);
    }

    static void add_stats(pool_stats& out) noexcept {
        const span_state& st = s();
        out.mapping_bytes = segment_bytes;
        out.mappings = st.mappings;
        out.bytes_reserved = st.mappings * (segment_bytes - segment_meta_bytes);
        out.bytes_mapped = st.mappings * segment_bytes;
        out.bytes_purged = st.bytes_purged;
        out.bytes_given_back = st.bytes_given_back;
        out.segments_unmapped = st.segments_unmapped;
        for (const segment* seg = st.segments; seg != nullptr; seg = seg->older)
            out.bytes_resident += os_resident_bytes(seg, segment_bytes);
        for_each_span([&out](span& sp) {
            if (sp.role == span_role::clean || sp.role == span_role::purged) {
                ++(sp.role == span_role::clean ? out.spans_clean : out.spans_purged);
                out.bytes_free += span_usable_bytes(&sp);
                return;
            }
            ++out.spans_in_use;
            const std::size_t bytes = span_class_bytes(&sp);
            class_stats& c = out.classes[smallest_class_slot - sp.slot];
            std::size_t blocks = 0;
            for (void* b = sp.free; b != nullptr; b = hooks::load_link(b))
                ++blocks;
            c.free_blocks += blocks;
            out.bytes_free += blocks * bytes + span_usable_bytes(&sp) - sp.capacity * bytes;
        });
        for (std::uint32_t slot = largest_class_slot; slot <= smallest_class_slot; ++slot) {
            const std::size_t bytes = class_bytes_of_slot(slot);
            class_stats& c = out.classes[smallest_class_slot - slot];
            std::size_t blocks = static_cast<std::size_t>(st.ends[slot] - st.cursors[slot]) / bytes;
            for (void* b = st.heads[slot]; b != nullptr; b = hooks::load_link(b))
                ++blocks;
            c.free_blocks += blocks;
            out.bytes_free += blocks * bytes;
        }
        out.bytes_in_use_high_water = out.bytes_reserved;
    }

    static std::size_t free_list_class_of(const void* p) noexcept {
        const span_state& st = s();
        for (std::uint32_t slot = largest_class_slot; slot <= smallest_class_slot; ++slot)
            for (void* b = st.heads[slot]; b != nullptr; b = hooks::load_link(b))
                if (b == p)
                    return class_bytes_of_slot(slot);
        std::size_t found = 0;
        for_each_span([&found, p](span& sp) {
            for (void* b = sp.free; found == 0 && b != nullptr; b = hooks::load_link(b))
                if (b == p)
                    found = span_class_bytes(&sp);
        });
        return found;
    }
    static std::ptrdiff_t offset_in_memory(const void* p) noexcept {
        for (segment* seg = s().segments; seg != nullptr; seg = seg->older)
            if (seg == segment_of(p))
                return reinterpret_cast<const std::byte*>(p) - reinterpret_cast<std::byte*>(seg);
        return -1;
    }
};

} // namespace sta::detail
