// sta-pool: the inline-branch dispatch — "free list non-empty ? pop : bump", all
// inlined at the call site, no function pointer on the fast path.
//
//   alloc(bytes):  key = bytes - 1
//                  key >= 32 KiB (size 0 wraps too) -> out of line: zero / next tiers
//                  slot = countl_zero(u32(key) | 7)       sizes 1..8 share slot 29
//                  heads[slot] ? pop : bump step[slot]    step[29] never fits (I3):
//                                                         the 8 B class refills out of line
//
// It has no tables to keep in step with the lists, so it has no invariant of its
// own beyond those of pool_state.
#pragma once

#include "sta/detail/next_tiers.hpp"
#include "sta/detail/pool_state.hpp"

#include <array>
#include <bit>

namespace sta::detail {

template <class Tag>
class branch_engine {
  public:
    static constexpr const char* name = "sta::memory_pool<inline_branch>";

    static pool_state& state() noexcept { return state_; }

    STA_FORCE_INLINE static void* alloc(std::size_t bytes) noexcept {
        const std::size_t key = bytes - 1;
        if (key >= max_class_bytes) [[unlikely]]
            return alloc_outside(bytes);
        return alloc_slot(slot_of_key(key));
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void* alloc() noexcept {
        if constexpr (Bytes == 0 || Bytes > max_class_bytes)
            return alloc_outside(Bytes);
        else
            return alloc_slot(slot_of_key(Bytes - 1));
    }
    STA_FORCE_INLINE static void free(void* p, std::size_t bytes) noexcept {
        const std::size_t key = bytes - 1;
        if (key >= max_class_bytes) [[unlikely]]
            return free_outside(p, bytes);
        push(slot_of_key(key), p);
    }
    template <std::size_t Bytes>
    STA_FORCE_INLINE static void free(void* p) noexcept {
        if constexpr (Bytes == 0 || Bytes > max_class_bytes)
            free_outside(p, Bytes);
        else
            push(slot_of_key(Bytes - 1), p);
    }

    STA_FORCE_INLINE static void push(std::uint32_t slot, void* p) noexcept {
        hooks::store_link(p, state_.heads[slot]);
        hooks::block_pushed(p, class_bytes_of_slot(slot));
        state_.heads[slot] = static_cast<free_block*>(p);
    }

    static bool slot_serves_list(std::uint32_t) noexcept { return true; } // no slots to keep

  private:
    using core = pool_core<branch_engine>;
    static constinit inline pool_state state_{};

    static constexpr std::uint32_t slot_of_key(std::size_t key) noexcept {
        return static_cast<std::uint32_t>(std::countl_zero(static_cast<std::uint32_t>(key) | 7u));
    }

    /// Bytes the cursor advances for each slot; the 8 B class never fits here.
    static constexpr std::array<std::size_t, slot_count> steps = [] {
        std::array<std::size_t, slot_count> s{};
        for (std::uint32_t slot = largest_class_slot; slot < smallest_class_slot; ++slot)
            s[slot] = class_bytes_of_slot(slot);
        s[smallest_class_slot] = ~std::size_t{0};
        return s;
    }();

    STA_FORCE_INLINE static void* alloc_slot(std::uint32_t slot) noexcept {
        if (free_block* block = state_.heads[slot]) {
            state_.heads[slot] = static_cast<free_block*>(hooks::load_link(block));
            return block;
        }
        std::byte* const cursor = state_.cursor;
        if (steps[slot] <= static_cast<std::size_t>(state_.end - cursor)) [[likely]] {
            state_.cursor = cursor + steps[slot];
            return cursor;
        }
        return bump_slow(slot);
    }

    STA_NOINLINE static void* bump_slow(std::uint32_t slot) noexcept {
        if (slot == smallest_class_slot)
            return core::bump_smallest();
        return core::bump_after_new_page(class_bytes_of_slot(slot));
    }

    STA_NOINLINE static void* alloc_outside(std::size_t bytes) noexcept {
        // malloc(0)-like: a unique 8 B block. Above 32 KiB: the next tiers.
        return bytes == 0 ? alloc_slot(smallest_class_slot)
                          : next_tiers<branch_engine>::alloc(bytes);
    }
    STA_NOINLINE static void free_outside(void* p, std::size_t bytes) noexcept {
        if (bytes == 0)
            push(smallest_class_slot, p);
        else
            next_tiers<branch_engine>::free(p, bytes);
    }

    friend core;
};

} // namespace sta::detail
