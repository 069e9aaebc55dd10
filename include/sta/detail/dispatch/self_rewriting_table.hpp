// sta-pool: the seed's dispatch — two tables of 33 function pointers whose alloc
// slots rewrite themselves.
//
//   alloc_table[slot]                       free_table[slot]
//   +-----------+                            +-----------+
//   | 0  zero/huge handler                   | 0  zero/huge handler
//   | 1..16  next tiers                      | 1..16  next tiers
//   | 17..28 bump<N> or get<N>  <--+         | 17..28 put<N>
//   | 29..32 bump<8> or get<8>     |         | 29..32 put<8>
//   +-----------+                  |         +-----------+
//                                  |
//   get<N>, finding its list empty, points the slot at bump<N>; bump<N>, finding its
//   range exhausted, asks the layout to refill, and points the slot at get<N> when the
//   refill gave the class a list. put<N> points the slot at get<N> when the class's list
//   is not empty after the free (always, in the seed's shared-cursor layout).
//
//   A layout without a list and a cursor to flip between (the span layout: a list and a
//   bitmap window, layout/spans.hpp) gets a table that does not rewrite itself: every
//   alloc slot is take<N>, the layout's own fast path.
//
// "Is the free list empty?" is asked only when the answer is likely "no"; the rest
// of the time the answer is encoded in the table itself.
//
// Invariant T1 (checked by the accounting checkers): a non-empty list has its slot at
// get<N>. The converse need not hold: get<N> finds out lazily that its list has drained.
#pragma once

#include "sta/detail/layout/contract.hpp"
#include "sta/detail/pool/freed_mark.hpp"
#include "sta/detail/pool/next_tiers.hpp"
#include "sta/detail/pool/state.hpp"

#include <array>
#include <utility>

namespace sta::detail {

template <class Layout, class Threads, class Tag>
class self_rewriting_table_engine {
  public:
    using alloc_fn = void* (*)(std::size_t bytes) noexcept;
    using free_fn = void (*)(void* p, std::size_t bytes) noexcept;

    struct state_type : Layout::state {
        std::array<alloc_fn, slot_count> alloc_table = initial_alloc_row();
        std::array<free_fn, slot_count> free_table = initial_free_row();
    };
    using core = typename Layout::template core<self_rewriting_table_engine>;
    /// Where the state lives: one for the program, or one per thread (home/per_thread.hpp).
    using home = typename Threads::template home<state_type, self_rewriting_table_engine>;
    /// One pool per thread (the Threads policy), known without instantiating the home.
    static constexpr bool threaded = Threads::threaded;
    /// Its blocks carry the freed marks (pool/freed_mark.hpp): the drop-in malloc\'s family.
    static constexpr bool freed_marks = family_freed_marks<Tag>;

    static constexpr const char* name = "sta::memory_pool<self_rewriting_table>";
    /// The tables' 33 slots are the seed's lzcnt slots: powers of two with any layout.
    using classes = power_of_two_classes;

    STA_FORCE_INLINE static state_type& state() noexcept { return home::state(); }

    STA_FORCE_INLINE static void* alloc(std::size_t bytes) noexcept {
        return state().alloc_table[slot_of(bytes)](bytes);
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void* alloc() noexcept {
        return state().alloc_table[slot_of(Bytes)](Bytes);
    }
    STA_FORCE_INLINE static void free(void* p, std::size_t bytes) noexcept {
        state().free_table[slot_of(bytes)](p, bytes);
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void free(void* p) noexcept {
        // The free slots never change, so a compile-time size needs no table.
        constexpr std::uint32_t slot = slot_of(Bytes);
        if constexpr (is_pooled_slot(slot))
            put<canonical_slot(slot)>(p, Bytes);
        else
            state().free_table[slot](p, Bytes);
    }

    /// Push a block on a canonical slot's list (carving uses it).
    static void push(std::uint32_t slot, void* p) noexcept { state().free_table[slot](p, 0); }
    /// The smallest class, for a request of 0 bytes.
    static void* alloc_smallest() noexcept { return state().alloc_table[smallest_class_slot](0); }
    /// A block of the class of a canonical pooled slot (pooled_slot_of_key).
    STA_FORCE_INLINE static void* alloc_slot(std::uint32_t slot) noexcept {
        return state().alloc_table[slot](class_bytes_of_slot(slot));
    }

    /// Does the layout give the table a list and a cursor to flip between?
    static constexpr bool rewrites = list_and_cursor_core<core>;

    /// T1 for the accounting checkers: does the alloc slot serve its free list?
    static bool slot_serves_list(std::uint32_t slot) noexcept {
        if constexpr (!rewrites)
            return true;
        return state().alloc_table[slot] == alloc_row(all_slots{}, true)[slot];
    }

    /// The alloc slots of a fresh state: every pooled slot at bump<N>.
    static constexpr std::array<alloc_fn, slot_count> initial_alloc_row() noexcept {
        auto row = alloc_row(all_slots{}, false);
        for (std::uint32_t slot = 0; slot < slot_count; ++slot)
            if (!is_pooled_slot(slot))
                row[slot] = slot == 0 ? &outside<self_rewriting_table_engine>::alloc
                                      : &next_tiers<self_rewriting_table_engine>::alloc;
        return row;
    }
    static constexpr std::array<free_fn, slot_count> initial_free_row() noexcept {
        auto row = free_row(all_slots{});
        for (std::uint32_t slot = 0; slot < slot_count; ++slot)
            if (!is_pooled_slot(slot))
                row[slot] = slot == 0 ? &outside<self_rewriting_table_engine>::free
                                      : &next_tiers<self_rewriting_table_engine>::free;
        return row;
    }

  private:
    template <std::uint32_t Slot>
    static void set_alloc_slot(alloc_fn fn) noexcept {
        state().alloc_table[Slot] = fn;
        if constexpr (Slot == smallest_class_slot) { // 30..32 alias the 8 B class
            state().alloc_table[30] = fn;
            state().alloc_table[31] = fn;
            state().alloc_table[32] = fn;
        }
    }

    template <std::uint32_t Slot>
    static void* bump(std::size_t) noexcept {
        constexpr std::size_t step = core::steps[Slot];
        std::byte*& cursor = core::cursor(Slot);
        std::byte* const block = cursor;
        if (step <= static_cast<std::size_t>(core::end(Slot) - block)) [[likely]] {
            cursor = block + step;
            return block;
        }
        void* const refilled = core::refill(Slot);
        if (core::head(Slot) != nullptr) // the refill gave the class a list: serve it
            set_alloc_slot<Slot>(&get<Slot>);
        return refilled;
    }

    template <std::uint32_t Slot>
    static void* get(std::size_t bytes) noexcept {
        free_block*& head = core::head(Slot);
        if (free_block* block = head) [[likely]] {
            head = static_cast<free_block*>(hooks::load_link(block));
            return block;
        }
        set_alloc_slot<Slot>(&bump<Slot>); // the list drained: back to the cursor
        return bump<Slot>(bytes);
    }

    template <std::uint32_t Slot>
    static void put(void* p, std::size_t) noexcept {
        core::release(Slot, p);
        if constexpr (rewrites)
            if (core::release_feeds_head || core::head(Slot) != nullptr)
                set_alloc_slot<Slot>(&get<Slot>); // a free block exists: serve the list
    }

    /// A layout without a list and a cursor: its own fast path, every time.
    template <std::uint32_t Slot>
    static void* take(std::size_t) noexcept {
        return core::alloc(Slot);
    }

    template <std::uint32_t Slot>
    static constexpr alloc_fn pooled_alloc_fn(bool want_get) noexcept {
        if constexpr (!is_pooled_slot(Slot))
            return nullptr;
        else if constexpr (!rewrites)
            return &take<canonical_slot(Slot)>;
        else
            return want_get ? &get<canonical_slot(Slot)> : &bump<canonical_slot(Slot)>;
    }
    template <std::uint32_t Slot>
    static constexpr free_fn pooled_free_fn() noexcept {
        if constexpr (is_pooled_slot(Slot))
            return &put<canonical_slot(Slot)>;
        else
            return nullptr;
    }
    template <std::uint32_t... Slots>
    static constexpr std::array<alloc_fn, slot_count>
    alloc_row(std::integer_sequence<std::uint32_t, Slots...>, bool want_get) noexcept {
        return {pooled_alloc_fn<Slots>(want_get)...};
    }
    template <std::uint32_t... Slots>
    static constexpr std::array<free_fn, slot_count>
    free_row(std::integer_sequence<std::uint32_t, Slots...>) noexcept {
        return {pooled_free_fn<Slots>()...};
    }
    using all_slots = std::make_integer_sequence<std::uint32_t, slot_count>;
};

} // namespace sta::detail
