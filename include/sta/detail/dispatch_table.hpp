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
//   put<N> pushes a block and points alloc_table[N] at get<N>;
//   get<N>, finding its list empty, points the slot back at bump<N>.
//
// "Is the free list empty?" is asked only when the answer is likely "no"; the rest
// of the time the answer is encoded in the table itself.
//
// Invariant T1 (checked by check_accounting): a non-empty list has its slot at get<N>.
// The converse need not hold: get<N> finds out lazily that its list has drained.
#pragma once

#include "sta/detail/next_tiers.hpp"
#include "sta/detail/pool_state.hpp"

#include <array>
#include <utility>

namespace sta::detail {

template <class Tag>
class table_engine {
  public:
    using alloc_fn = void* (*)(std::size_t bytes) noexcept;
    using free_fn = void (*)(void* p, std::size_t bytes) noexcept;

    struct state_type : pool_state {
        alloc_fn alloc_table[slot_count];
        free_fn free_table[slot_count];
    };

    static constexpr const char* name = "sta::memory_pool<self_rewriting_table>";

    static pool_state& state() noexcept { return state_; }

    STA_FORCE_INLINE static void* alloc(std::size_t bytes) noexcept {
        return state_.alloc_table[slot_of(bytes)](bytes);
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void* alloc() noexcept {
        return state_.alloc_table[slot_of(Bytes)](Bytes);
    }
    STA_FORCE_INLINE static void free(void* p, std::size_t bytes) noexcept {
        state_.free_table[slot_of(bytes)](p, bytes);
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void free(void* p) noexcept {
        // The free slots never change, so a compile-time size needs no table.
        constexpr std::uint32_t slot = slot_of(Bytes);
        if constexpr (is_pooled_slot(slot))
            put<canonical_slot(slot)>(p, Bytes);
        else
            state_.free_table[slot](p, Bytes);
    }

    /// Push a block on a canonical slot's list (carving uses it).
    static void push(std::uint32_t slot, void* p) noexcept { state_.free_table[slot](p, 0); }

    /// T1 for the accounting checker: does the alloc slot serve its free list?
    static bool slot_serves_list(std::uint32_t slot) noexcept {
        return state_.alloc_table[slot] == alloc_row(all_slots{}, true)[slot];
    }

    static constexpr state_type initial_state() noexcept {
        state_type s{};
        const auto bumps = alloc_row(all_slots{}, false);
        const auto puts = free_row(all_slots{});
        for (std::uint32_t slot = 0; slot < slot_count; ++slot) {
            s.alloc_table[slot] = slot == 0               ? &alloc_zero_or_huge
                                  : !is_pooled_slot(slot) ? &alloc_next_tier
                                                          : bumps[slot];
            s.free_table[slot] = slot == 0               ? &free_zero_or_huge
                                 : !is_pooled_slot(slot) ? &free_next_tier
                                                         : puts[slot];
        }
        return s;
    }

  private:
    using core = pool_core<table_engine>;
    static state_type state_;

    template <std::uint32_t Slot>
    static void set_alloc_slot(alloc_fn fn) noexcept {
        state_.alloc_table[Slot] = fn;
        if constexpr (Slot == smallest_class_slot) { // 30..32 alias the 8 B class
            state_.alloc_table[30] = fn;
            state_.alloc_table[31] = fn;
            state_.alloc_table[32] = fn;
        }
    }

    template <std::uint32_t Slot>
    static void* bump(std::size_t) noexcept {
        if constexpr (Slot == smallest_class_slot) {
            return core::bump_smallest();
        } else {
            constexpr std::size_t bytes = class_bytes_of_slot(Slot);
            std::byte* const block = state_.cursor;
            if (bytes <= static_cast<std::size_t>(state_.end - block)) [[likely]] {
                state_.cursor = block + bytes;
                return block;
            }
            return core::bump_after_new_page(bytes);
        }
    }

    template <std::uint32_t Slot>
    static void* get(std::size_t bytes) noexcept {
        if (free_block* block = state_.heads[Slot]) [[likely]] {
            state_.heads[Slot] = static_cast<free_block*>(hooks::load_link(block));
            return block;
        }
        set_alloc_slot<Slot>(&bump<Slot>); // the list drained: back to the cursor
        return bump<Slot>(bytes);
    }

    template <std::uint32_t Slot>
    static void put(void* p, std::size_t) noexcept {
        hooks::store_link(p, state_.heads[Slot]);
        hooks::block_pushed(p, class_bytes_of_slot(Slot));
        state_.heads[Slot] = static_cast<free_block*>(p);
        set_alloc_slot<Slot>(&get<Slot>); // a free block exists: serve the list
    }

    static void* alloc_zero_or_huge(std::size_t bytes) noexcept {
        // malloc(0)-like: a unique 8 B block. Sizes above 2 GiB go to the next tier.
        return bytes == 0 ? state_.alloc_table[smallest_class_slot](0)
                          : next_tiers<table_engine>::alloc(bytes);
    }
    static void free_zero_or_huge(void* p, std::size_t bytes) noexcept {
        if (bytes == 0)
            put<smallest_class_slot>(p, 0);
        else
            next_tiers<table_engine>::free(p, bytes);
    }
    static void* alloc_next_tier(std::size_t bytes) noexcept {
        return next_tiers<table_engine>::alloc(bytes);
    }
    static void free_next_tier(void* p, std::size_t bytes) noexcept {
        next_tiers<table_engine>::free(p, bytes);
    }

    template <std::uint32_t Slot>
    static constexpr alloc_fn pooled_alloc_fn(bool want_get) noexcept {
        if constexpr (is_pooled_slot(Slot))
            return want_get ? &get<canonical_slot(Slot)> : &bump<canonical_slot(Slot)>;
        else
            return nullptr;
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

    friend core;
};

template <class Tag>
constinit typename table_engine<Tag>::state_type
    table_engine<Tag>::state_ = table_engine<Tag>::initial_state();

} // namespace sta::detail
