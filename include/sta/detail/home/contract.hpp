// sta-pool: what a home gives the layers above it. A home is where a pool's state lives,
// and so which threads may call the pool: home/one_owner.hpp (the seed's mode, one state
// for the program) and home/per_thread.hpp (a state per thread). The dispatch engines,
// the layouts' slow paths and the tiers above the pool reach their state only through
// these members; basic_memory_pool checks them with static_assert.
#pragma once

#include "sta/detail/pool/checked_build.hpp"
#include "sta/detail/pool/state.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace sta::detail {

/// What a per-thread pool family has made, for tests and reports.
struct thread_pools_stats {
    std::size_t pools_made = 0;      ///< states ever made (each a thread's pool at some time)
    std::size_t pools_parked = 0;    ///< states whose thread ended, waiting for a new thread
    std::size_t segments_mapped = 0; ///< OS mappings made by all of them together
};

template <class Home, class State>
concept pool_home = requires(std::size_t bytes) {
    // True when every thread has a state of its own (per_thread).
    requires std::same_as<decltype(Home::threaded), const bool>;
    // The calling thread's state (a per-thread home's idle state until it allocates),
    // and the state to write to, made or adopted now: nullptr when the OS refuses.
    { Home::state() }
    noexcept->std::same_as<State&>;
    { Home::own() }
    noexcept->std::same_as<State*>;
    // The thread rule: a checked one_owner pool reports a call from another thread.
    { Home::check_thread() }
    noexcept;
    // The page size (the bound of the heap tier), frozen once memory is held.
    { Home::page_bytes() }
    noexcept->std::same_as<std::size_t>;
    { Home::set_page_bytes(bytes) }
    noexcept;
    { Home::holds_memory() }
    noexcept->std::same_as<bool>;
    // The layout mapped a segment; the heap tier handed out a block.
    { Home::segment_mapped() }
    noexcept;
    { Home::heap_used() }
    noexcept;
    // Checked builds: the registry of live blocks (pool/checked_build.hpp).
    { Home::registry() }
    noexcept->std::same_as<checked_registry&>;
};

/// A home with a state per thread: options for the states it makes later, the fork
/// handlers, and what the family has made.
template <class Home, class State>
concept per_thread_pool_home = pool_home<Home, State> && Home::threaded &&
    requires(bool on, std::uint32_t from_segments) {
    // The state a thread sends other threads' blocks home through (nullptr: one by one),
    // and the one it refills a class of (nullptr: no memory for one).
    { Home::for_frees() }
    noexcept->std::same_as<State*>;
    { Home::for_refill() }
    noexcept->std::same_as<State*>;
    { Home::set_huge_pages_for_new(from_segments, on) }
    noexcept;
    { Home::set_prefault_for_new(on) }
    noexcept;
    { Home::before_fork() }
    noexcept;
    { Home::after_fork() }
    noexcept;
    { Home::stats() }
    noexcept->std::same_as<thread_pools_stats>;
};

} // namespace sta::detail
