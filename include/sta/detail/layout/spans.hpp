// sta-pool: the span layout — memory in aligned spans that each serve one class.
//
//   segment: segment_bytes (2 MiB) from the OS, aligned to segment_bytes
//   +---------------------------+----------------+----------------+-----+----------------+
//   | segment header            | span 0 blocks  | span 1 blocks  | ... | span 31 blocks |
//   | span headers[32] (64 B ea)| 60 KiB         | 64 KiB         |     | 64 KiB         |
//   +---------------------------+----------------+----------------+-----+----------------+
//   ^ base = p & ~(segment_bytes - 1)            span_of(p) = &base->spans[(p >> 16) & 31]
//
//   a span serving the 32 B class, while it is its class's current span:
//   +------+------+------+------+------+------+------------------------------+---+
//   | live | free | live | head | head | live | bump range [cursor, end)     |   |
//   +------+--+---+------+--+---+------+------+------------------------------+---+
//             |             +-- heads[slot]: the class allocates from these first,
//             |                 then from the bump range, both in this span only;
//             |                 a block of this span freed now goes here (LIFO)
//             +-- span.free: blocks freed into the span while it was not current
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
// blocks each time. Segments are never returned to the OS.
//
// Invariants (check_spans in span_checker.hpp enforces them in tests):
//  S1  `segments` lists every mapped segment, newest first, mappings of them; each
//      is segment_bytes long, aligned to segment_bytes, and its headers lie in its
//      first segment_meta_bytes.
//  S2  A span serving a class holds `capacity` blocks of class_bytes_of_slot(slot) at
//      [begin, limit), begin = base + index * span_bytes (+ segment_meta_bytes for
//      span 0). A clean span has slot 0 and capacity 0.
//  S3  Every span has one role. clean: on the clean list. current: `current[slot]` of
//      its class, on no list, and current_base[slot] is its 64 KiB-aligned address (0
//      when the class has no current span). partial: on `partial[slot]`. sleeping: on
//      no list.
//  S4  used = capacity - (blocks on span.free). For the current span the blocks of
//      heads[slot] and of [cursors[slot], ends[slot]) count as used: the class holds
//      them (a block of the current span freed goes to heads[slot] and stays counted).
//      So live blocks = used - (what the class holds).
//  S5  heads[slot] holds only blocks of current[slot]; [cursors[slot], ends[slot])
//      lies in it and ends at its limit; both are empty when there is no current span.
//  S6  In every span, live blocks, span.free, and (current) the class's list and bump
//      range tile [begin, limit) exactly.
//  S7  wake_at is 0 for current and partial spans; a sleeping span has
//      wake_at < used, and wakes (becomes partial) when a free brings used to it.
//  S8  A span whose blocks are all free (used == 0) is clean, unless it is current.
//  S9  Every span's owner is the state that mapped its segment, from then on: a state
//      never gives a segment away (a per-thread state whose thread ended is adopted
//      whole by a later thread, home/per_thread.hpp), so the owner of a block never changes
//      while the block is live.
//  S10 Per-thread pools: a block is put on a span's lists or a class's list only by
//      the span's owner. A block freed by another thread goes to the owner's inbox
//      (pool/state.hpp) and counts as used (S4) until the owner drains it.
//  T1  (table dispatch) a non-empty heads[slot] has its alloc slot at get<N>.
#pragma once

#include "sta/detail/diag/tool_hooks.hpp"
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

inline constexpr std::size_t span_bytes = std::size_t{64} * 1024;
inline constexpr std::size_t segment_bytes = std::size_t{1} << segment_shift; // 2 MiB
inline constexpr std::uint32_t spans_per_segment =
    static_cast<std::uint32_t>(segment_bytes / span_bytes);
/// The segment header and the span headers; span 0's blocks start after them.
inline constexpr std::size_t segment_meta_bytes = 4096;

enum class span_role : std::uint8_t { clean, current, partial, sleeping };

struct span_state;

struct alignas(64) span {
    free_block* free = nullptr;        // S4: blocks freed into the span, LIFO
    std::uint32_t used = 0;            // S4
    std::uint32_t wake_at = 0;         // S7: a free that brings `used` here takes the slow path
    std::uint32_t capacity = 0;        // S2: blocks of the class in the span
    std::uint8_t slot = 0;             // S2: the class's canonical slot; 0 when clean
    span_role role = span_role::clean; // S3
    span* next = nullptr;              // S3: the clean list or the class's partial list
    span* prev = nullptr;              // the partial list only
    span_state* owner = nullptr;       // S9: the state whose segment this is
};

struct segment {
    segment* older = nullptr; // S1
    alignas(64) span spans[spans_per_segment];
};
static_assert(sizeof(segment) <= segment_meta_bytes, "the headers fit before span 0");
static_assert(segment_meta_bytes % max_block_align == 0);

STA_FORCE_INLINE segment* segment_of(const void* p) noexcept {
    return reinterpret_cast<segment*>(reinterpret_cast<std::uintptr_t>(p) & ~(segment_bytes - 1));
}
static_assert(sizeof(span) == 64 && offsetof(segment, spans) == 64);
/// The span header of any address inside a segment: the segment's base, plus the span's
/// index scaled to its header in one shift and one mask.
STA_FORCE_INLINE span* span_of(const void* p) noexcept {
    constexpr unsigned header_shift = 6; // log2(sizeof(span))
    constexpr unsigned span_shift = 16;  // log2(span_bytes)
    static_assert(std::size_t{1} << span_shift == span_bytes);
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t scaled_index =
        (a >> (span_shift - header_shift)) & ((spans_per_segment - 1) << header_shift);
    return reinterpret_cast<span*>((a & ~(segment_bytes - 1)) + offsetof(segment, spans) +
                                   scaled_index);
}
inline std::uint32_t span_index(const span* sp) noexcept {
    return static_cast<std::uint32_t>(sp - segment_of(sp)->spans);
}
inline std::byte* span_begin(const span* sp) noexcept {
    const std::uint32_t i = span_index(sp);
    return reinterpret_cast<std::byte*>(segment_of(sp)) + i * span_bytes +
           (i == 0 ? segment_meta_bytes : 0);
}
/// Block bytes of a span's class.
inline std::size_t span_class_bytes(const span* sp) noexcept {
    return class_bytes_of_slot(sp->slot);
}
/// Block bytes of a pooled block: its span's class, whatever size a caller names.
inline std::size_t pooled_block_bytes(const void* p) noexcept {
    return span_class_bytes(span_of(p));
}
inline std::size_t span_usable_bytes(const span* sp) noexcept {
    return span_index(sp) == 0 ? span_bytes - segment_meta_bytes : span_bytes;
}
inline std::byte* span_limit(const span* sp) noexcept {
    return span_begin(sp) + std::size_t{sp->capacity} * span_class_bytes(sp);
}
/// Free blocks a span needs before its class takes it again: a quarter (at least one).
constexpr std::uint32_t reuse_threshold(std::uint32_t capacity) noexcept {
    return capacity / 4 != 0 ? capacity / 4 : 1;
}

struct span_state : pool_state {
    free_block* heads[slot_count] = {}; // S5: the current span's blocks, indexed by slot
    std::byte* cursors[slot_count] = {};
    std::byte* ends[slot_count] = {};
    span* current[slot_count] = {}; // S3
    /// The 64 KiB-aligned address of current[slot] (0 when none): the free path's test
    /// "is this block of the current span?" is one xor and one shift, no header read.
    std::uintptr_t current_base[slot_count] = {};
    span* partial[slot_count] = {};             // S3: doubly linked through next / prev
    span* clean = nullptr;                      // S3: singly linked through next
    segment* segments = nullptr;                // S1
    bool huge_pages = STA_POOL_HUGE_PAGES != 0; // advice for segments mapped from now on
    bool prefault = STA_POOL_PREFAULT != 0;
};

template <class Engine>
struct span_core {
    static span_state& s() noexcept { return Engine::state(); }

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
        release_to_span(sp, p);
    }

    /// A block of `sp`, freed by its owner, goes to the span's own list (S4, S7).
    STA_FORCE_INLINE static void release_to_span(span* sp, void* p) noexcept {
        hooks::store_link(p, sp->free);
        hooks::block_pushed(p, span_class_bytes(sp));
        sp->free = static_cast<free_block*>(p);
        if (--sp->used == sp->wake_at) [[unlikely]]
            span_event(sp);
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
                return take_list(slot, cur);
            cur->role = span_role::sleeping;
            cur->wake_at = cur->capacity - reuse_threshold(cur->capacity);
            set_current(slot, nullptr); // S7 holds: freed < threshold, so used > wake_at
        }
        if (span* const sp = st.partial[slot]) {
            unlink_partial(sp);
            sp->role = span_role::current;
            set_current(slot, sp);
            st.cursors[slot] = st.ends[slot] = span_limit(sp);
            return take_list(slot, sp);
        }
        span* const sp = take_clean();
        if (sp == nullptr)
            return nullptr;
        start(sp, slot);
        std::byte* const block = st.cursors[slot];
        st.cursors[slot] = block + class_bytes_of_slot(slot);
        return block;
    }

    /// Blocks of different classes lie in different spans: never in place.
    static bool resize_in_place(std::byte*, std::size_t, std::size_t) noexcept { return false; }

    /// The class of a pooled block is its span's, whatever size the caller names.
    static std::size_t class_bytes_of_block(const void* p, std::size_t) noexcept {
        return pooled_block_bytes(p);
    }

    // ---- slow paths ------------------------------------------------------------------

    static constexpr bool threaded = Engine::home::threaded;

    /// S10: another thread's block goes to its owner's inbox.
    STA_NOINLINE static void send_home(span* sp, void* p) noexcept { sp->owner->inbox.push(p); }

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

    /// The class takes the span's free blocks as its list (S4: they count as used).
    static void* take_list(std::uint32_t slot, span* sp) noexcept {
        span_state& st = s();
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
    STA_NOINLINE static void span_event(span* sp) noexcept {
        span_state& st = s();
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
                unlink_partial(sp);
            make_clean(sp);
            return;
        }
        // A sleeping span reached a quarter free: its class may take it again.
        sp->role = span_role::partial;
        sp->wake_at = 0;
        sp->prev = nullptr;
        sp->next = st.partial[sp->slot];
        if (sp->next != nullptr)
            sp->next->prev = sp;
        st.partial[sp->slot] = sp;
    }

    static void set_current(std::uint32_t slot, span* sp) noexcept {
        s().current[slot] = sp;
        s().current_base[slot] =
            sp == nullptr ? 0
                          : reinterpret_cast<std::uintptr_t>(span_begin(sp)) & ~(span_bytes - 1);
    }

    static void unlink_partial(span* sp) noexcept {
        span_state& st = s();
        if (sp->prev != nullptr)
            sp->prev->next = sp->next;
        else
            st.partial[sp->slot] = sp->next;
        if (sp->next != nullptr)
            sp->next->prev = sp->prev;
        sp->next = sp->prev = nullptr;
    }

    static void make_clean(span* sp) noexcept {
        span_state& st = s();
        sp->free = nullptr;
        sp->used = 0;
        sp->wake_at = 0;
        sp->capacity = 0;
        sp->slot = 0;
        sp->role = span_role::clean;
        sp->prev = nullptr;
        sp->next = st.clean;
        st.clean = sp;
    }

    /// A clean span becomes the class's current span, all of it in the bump range.
    static void start(span* sp, std::uint32_t slot) noexcept {
        span_state& st = s();
        const std::size_t bytes = class_bytes_of_slot(slot);
        sp->slot = static_cast<std::uint8_t>(slot);
        sp->capacity = static_cast<std::uint32_t>(span_usable_bytes(sp) / bytes);
        sp->used = sp->capacity;
        sp->wake_at = 0;
        sp->free = nullptr;
        sp->role = span_role::current;
        sp->next = sp->prev = nullptr;
        set_current(slot, sp);
        st.heads[slot] = nullptr;
        st.cursors[slot] = span_begin(sp);
        st.ends[slot] = span_limit(sp);
    }

    /// A clean span, from the clean list or a new segment; nullptr when the OS refuses.
    static span* take_clean() noexcept {
        span_state& st = s();
        if (st.clean == nullptr && !map_segment())
            return nullptr;
        span* const sp = st.clean;
        st.clean = sp->next;
        sp->next = nullptr;
        return sp;
    }

    /// Map a segment; its spans join the clean list so that they come out in address
    /// order. False, with nothing changed, when the OS refuses.
    STA_NOINLINE static bool map_segment() noexcept {
        span_state& st = s();      // refill adopted the state, and it is the thread's now
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
        st.segments = seg;
        ++st.mappings;
        mark_pool_segment(seg);
        Engine::home::segment_mapped();
        for (std::uint32_t i = spans_per_segment; i-- != 0;) {
            seg->spans[i].owner = &st; // S9
            make_clean(&seg->spans[i]);
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
        for_each_span([&out](span& sp) {
            if (sp.role == span_role::clean) {
                ++out.spans_clean;
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
