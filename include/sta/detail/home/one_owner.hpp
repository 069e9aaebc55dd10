// sta-pool: the seed's mode — one constant-initialised state per (dispatch, layout, tag)
// for the whole program (sta::threads::one_owner in memory_pool.hpp). The first thread
// that calls owns it; checked builds report a call from any other thread
// (diag/owner_mark.hpp), release builds do not look. No atomics, no locks anywhere.
#pragma once

#include "sta/detail/home/contract.hpp"
#include "sta/detail/pool/checked_build.hpp"
#include "sta/detail/pool/state.hpp"

#include <cstddef>

namespace sta::detail {

template <class State, class Engine>
struct one_owner_home {
    static constexpr bool threaded = false;

    STA_FORCE_INLINE static State& state() noexcept { return through_register(state_); }
    /// The state to write to: there is only one.
    STA_FORCE_INLINE static State* own() noexcept { return &through_register(state_); }
    /// The state, which always exists.
    STA_FORCE_INLINE static State* existing() noexcept { return &state_; }
    STA_FORCE_INLINE static void check_thread() noexcept {
        state_.owner.check(Engine::name, "", "the pool");
    }

    static std::size_t page_bytes() noexcept { return state_.page_bytes; }
    static void set_page_bytes(std::size_t bytes) noexcept { state_.page_bytes = bytes; }
    static bool holds_memory() noexcept {
        return state_.mappings != 0 || state_.heap.holds_memory();
    }
    static void segment_mapped() noexcept {}
    static void heap_used() noexcept {}
    static checked_registry& registry() noexcept { return registry_of(state_); }
    /// The one state, never parked: fn(State&, false).
    template <class Fn>
    static void for_each_state(Fn&& fn) noexcept {
        fn(state_, false);
    }

  private:
    static constinit inline State state_{};
};

} // namespace sta::detail
