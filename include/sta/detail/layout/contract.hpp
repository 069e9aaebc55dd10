// sta-pool: what a layout gives a dispatch engine, checked by the compiler.
//
//   basic_memory_pool<Dispatch, Tag, Layout, Threads>   the public API, hooks, checks
//     engine = Dispatch::engine<Layout, Threads, Tag>   the fast path: size -> slot -> block
//       home = Threads::home<state, engine>             where the state lives (home/contract.hpp)
//       core = Layout::core<engine>                     where blocks live: lists, cursors,
//                                                       refills, the slow paths
//
// A layout core reaches its state through the engine's home and gives the engine the
// fields and functions below (the engine's own contract: dispatch/contract.hpp). It
// never sees a size class computed any other way than pool/size_class.hpp computes it.
#pragma once

#include "sta/detail/pool/size_class.hpp"
#include "sta/detail/pool/state.hpp"
#include "sta/detail/pool/stats.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace sta::detail {

/// What a layout core gives an engine. Slots are canonical pooled slots (17..29).
template <class Core>
concept layout_core = requires(std::uint32_t slot, void* p, const void* cp, std::byte* block,
                               std::size_t bytes, pool_stats& stats) {
    // The fast paths, inlined at the call site: a block of the class (nullptr when the
    // OS refuses), and the free of a pooled block.
    requires size_class_set<typename Core::classes>; // the slots it takes are of this set
    { Core::alloc(slot) }
    noexcept->std::same_as<void*>;
    { Core::release(slot, p) }
    noexcept->std::same_as<void>;
    // The slow path of alloc: a block, or nullptr when the OS refuses.
    { Core::refill(slot) }
    noexcept->std::same_as<void*>;
    // realloc between two classes without moving, if the layout can.
    { Core::resize_in_place(block, bytes, bytes) }
    noexcept->std::same_as<bool>;
    // The class a live pooled block really has (a sized free names one).
    { Core::class_bytes_of_block(cp, bytes) }
    noexcept->std::same_as<std::size_t>;
    // Derived statistics, and what a checked-build report says about a bad pointer.
    { Core::add_stats(stats) }
    noexcept->std::same_as<void>;
    { Core::free_list_class_of(cp) }
    noexcept->std::same_as<std::size_t>;
    { Core::offset_in_memory(cp) }
    noexcept->std::same_as<std::ptrdiff_t>;
};

/// A layout whose classes allocate from a free list and a bump cursor, which the seed's
/// self-rewriting table flips between (dispatch/self_rewriting_table.hpp): the seed's
/// shared cursor. release_feeds_head says whether a free always fills head(slot) (else
/// the table looks whether it did, to point the slot at it).
template <class Core>
concept list_and_cursor_core = layout_core<Core> && requires(std::uint32_t slot) {
    { Core::head(slot) } -> std::same_as<free_block*&>;
    { Core::cursor(slot) } -> std::same_as<std::byte*&>;
    { Core::end(slot) } -> std::same_as<std::byte*>;
    { Core::steps[slot] } -> std::convertible_to<std::size_t>;
    requires std::same_as<decltype(Core::release_feeds_head), const bool>;
};

/// A layout whose blocks know their owner, for per-thread pools. Its part that names no
/// engine, Core::slow, gives the slow paths a family of states runs (home/per_thread.hpp
/// compiles them once for every tag over it): blocks other threads freed into a state's
/// inbox are taken back by `drain` (the state's owner only; true when there were any),
/// which the home calls when a thread adopts a state and the heap tier before it
/// allocates.
template <class Core, class State>
concept threaded_layout_core = layout_core<Core> && requires(State& st, std::uint32_t ms) {
    typename Core::slow;
    { Core::slow::drain(st) }
    noexcept->std::same_as<bool>;
    // A parked state, held by the thread parking it or sending it blocks: what was sent
    // home goes back, and what is free goes back to the OS (home/per_thread.hpp).
    { Core::slow::drain_parked(st) }
    noexcept;
    // The blocks `st`'s thread freed for other states and holds in its outbox go home
    // now (the thread, before it parks its state).
    { Core::slow::send_outbox(st) }
    noexcept;
    // Everything `st` holds free back to the OS now; the bytes given back.
    { Core::slow::trim(st) }
    noexcept->std::same_as<std::size_t>;
    // What a parked state kept for the purge delay, given back once it is due at `ms`;
    // whether it still keeps some.
    { Core::slow::give_back_due(st, ms) }
    noexcept;
    { Core::slow::waits(st) }
    noexcept->std::same_as<bool>;
};

/// A layout policy: its state (constant-initialisable, never destroyed) and its core.
template <class Layout>
concept pool_layout = requires {
    typename Layout::state;
    { Layout::name } -> std::convertible_to<const char*>;
    requires size_class_set<typename Layout::classes>; // its classes under the inline branch
}
&&std::derived_from<typename Layout::state, pool_state>&&
    std::is_trivially_destructible_v<typename Layout::state>;

} // namespace sta::detail
