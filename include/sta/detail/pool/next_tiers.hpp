// sta-pool: where requests above 32 KiB go — the pool's second and third tiers.
//
//   (32 KiB, page_bytes / 2]   the pool's private heap, unsynchronized
//                              (detail/heaps/private_heap.hpp);
//   above page_bytes / 2       std::malloc, the process heap: memory other threads
//                              can reuse once it is freed; with STA_POOL_BIG_FROM_OS
//                              (the drop-in malloc, where std::malloc is the pool
//                              itself) a mapping of its own from the OS, whole pages,
//                              resized by mremap; the free keeps its pages in the
//                              freeing thread's retained mappings (heaps/retained_mappings.hpp)
//                              for the next big request, a growth into kept pages that
//                              follow a block needs no syscall, and a shrink keeps the
//                              tail.
//   above PTRDIFF_MAX          refused (nullptr) before any allocator is asked.
//
// The tier of a block is a function of its size and the page size, so the sized free
// and realloc find it again; that is why the page size cannot change once either the
// pool or its heap holds memory (set_page_bytes refuses).
#pragma once

#include "sta/detail/block_move.hpp"
#include "sta/detail/config.hpp"
#include "sta/detail/os/clock.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/size_class.hpp"
#include "sta/detail/pool/state.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace sta::detail {

/// The bytes before a heap-tier block of a per-thread family: its owner (NT1 below).
inline constexpr std::size_t heap_owner_prefix = 16;

/// A heap block another thread sent home, freed by its owner `st` (NT1).
inline void heap_free_sent(pool_state& st, void* p) noexcept {
    st.heap.free(static_cast<std::byte*>(p) - heap_owner_prefix);
}

/// The heap tier's work on a per-thread family's state, the same for every tag: State is
/// the layout's state, Slow its slow paths (drain). Defined below the class, so that where
/// the compiled part holds them (extern template, layout/spans.hpp) a unit instantiates
/// none of them; next_tiers calls them after it has found the state.
template <class State, class Slow>
struct heap_tier_ops {
    /// A block of `bytes` from `st`'s heap with its owner before it (NT1), after what was
    /// sent home is free again; nullptr when the heap has none.
    static void* alloc(State& st, std::size_t bytes) noexcept;
    /// `p`, a block of `owner`'s heap of `bytes`, freed by the owner's thread.
    static void free(pool_state& owner, void* p, std::size_t bytes) noexcept;
    /// `p` resized in `owner`'s heap by the owner's thread; nullptr (p untouched) on failure.
    static void* realloc(pool_state& owner, void* p, std::size_t bytes) noexcept;
};

template <class State, class Slow>
void* heap_tier_ops<State, Slow>::alloc(State& st, std::size_t bytes) noexcept {
    Slow::drain(st); // heap blocks sent home are free again
    auto* const block = static_cast<std::byte*>(st.heap.alloc(bytes + heap_owner_prefix));
    if (block == nullptr)
        return nullptr;
    pool_state* const owner = &st;
    std::memcpy(block, &owner, sizeof owner); // NT1
    return block + heap_owner_prefix;
}

template <class State, class Slow>
void heap_tier_ops<State, Slow>::free(pool_state& owner, void* p, std::size_t bytes) noexcept {
    owner.heap.free(static_cast<std::byte*>(p) - heap_owner_prefix, bytes + heap_owner_prefix);
}

template <class State, class Slow>
void* heap_tier_ops<State, Slow>::realloc(pool_state& owner, void* p, std::size_t bytes) noexcept {
    auto* const block = static_cast<std::byte*>(owner.heap.realloc(
        static_cast<std::byte*>(p) - heap_owner_prefix, bytes + heap_owner_prefix));
    return block != nullptr ? block + heap_owner_prefix : nullptr; // the prefix moved along
}

/// The tiers above the pool. The private heap is the calling thread's pool's
/// (pool_state::heap); in a per-thread family each heap block starts with its owner
/// (NT1), so that a free from another thread can send it home.
///
///   per-thread heap block:  [ owner state* | 8 unused ][ bytes of the caller ]
///                           ^ from the heap            ^ p, 16-aligned
///
///  NT1 per-thread families: the pointer at p - 16 of a heap-tier block is the state
///      whose heap holds the block (p - 16 is that heap's block of bytes + 16).
///  NT2 seed mode: a heap-tier block is the pool's heap's own block, no prefix.
/// A per-thread family's heap tier ops: over its layout's slow paths, which name no tag.
template <class Engine>
using threaded_tier = heap_tier_ops<typename Engine::state_type, typename Engine::core::slow>;

template <class Engine>
struct next_tiers {
    using home = typename Engine::home;
    static constexpr std::size_t owner_prefix = home::threaded ? heap_owner_prefix : 0;

    static bool in_heap(std::size_t bytes) noexcept { return bytes <= home::page_bytes() / 2; }

    static void* alloc(std::size_t bytes) noexcept {
        if (in_heap(bytes))
            return heap_alloc(bytes);
        return bytes <= max_request_bytes ? big_alloc(bytes) : nullptr;
    }

    static void free(void* p, std::size_t bytes) noexcept {
        if (in_heap(bytes))
            heap_free(p, bytes);
        else
            big_free(p, bytes);
    }

    /// Both sizes above 32 KiB. nullptr on failure, and p is then untouched.
    static void* realloc(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
        if (new_bytes > max_request_bytes)
            return nullptr;
        const bool old_in_heap = in_heap(old_bytes);
        if (old_in_heap == in_heap(new_bytes))
            return old_in_heap ? heap_realloc(p, old_bytes, new_bytes)
                               : big_realloc(p, old_bytes, new_bytes);
        return move(p, old_bytes, new_bytes); // across the page/2 boundary
    }

    // ---- the private heap (also the C API's tier for poor fits, c_api/span_heap.hpp) ---------

    static void* heap_alloc(std::size_t bytes) noexcept {
        auto* const st = home::own();
        if (st == nullptr)
            return nullptr;
        if constexpr (!home::threaded) {
            return st->heap.alloc(bytes);
        } else {
            void* const p = threaded_tier<Engine>::alloc(*st, bytes);
            if (p != nullptr)
                home::heap_used(); // freezes the page size (memory_pool.hpp)
            return p;
        }
    }

    static void heap_free(void* p, std::size_t bytes) noexcept {
        if constexpr (!home::threaded) {
            home::state().heap.free(p, bytes);
        } else {
            pool_state* const owner = owner_of(p);
            if (owner == &home::state())
                threaded_tier<Engine>::free(*owner, p, bytes);
            else {
                // drained by the owner (layout/spans.hpp), sent-marked in a family with
                // freed marks (M3, M4: the key is the process's, whether or not the owner
                // has refilled yet)
                owner->inbox.push(p, p, Engine::freed_marks ? new_mark_key() : 0);
                home::sent_home(*owner);
            }
        }
    }

    static void* heap_realloc(void* p, std::size_t old_bytes, std::size_t bytes) noexcept {
        if constexpr (!home::threaded) {
            return home::state().heap.realloc(p, bytes);
        } else {
            pool_state* const owner = owner_of(p);
            if (owner != &home::state())
                return move(p, old_bytes, bytes); // another thread's heap: never touched
            return threaded_tier<Engine>::realloc(*owner, p, bytes);
        }
    }

    // ---- the retained mappings of big blocks (STA_POOL_BIG_FROM_OS, per-thread) ------

    static constexpr bool retains = STA_POOL_BIG_FROM_OS != 0 && home::threaded;
    /// Did the calling thread's last big allocation reuse a kept mapping (not zero)?
    static bool last_big_was_retained() noexcept {
        if constexpr (retains)
            return home::state().retained.last_taken;
        else
            return false;
    }

  private:
    // ---- above page_bytes / 2: std::malloc, or the OS (STA_POOL_BIG_FROM_OS) ----------

    static constexpr bool big_from_os = STA_POOL_BIG_FROM_OS != 0;
    static void* big_alloc(std::size_t bytes) noexcept {
        if constexpr (big_from_os) {
            const std::size_t length = os_round_up(bytes);
            void* const p = big_map(length);
            if (p != nullptr)
                os_memory.big_taken(length); // process_stats: the big blocks in use
            return p;
        } else {
            return std::malloc(bytes);
        }
    }
    /// The pages of a big block: a kept mapping, or a new one.
    static void* big_map(std::size_t length) noexcept {
        if constexpr (retains)
            if (auto* const st = home::own()) {
                if (void* const p = st->retained.take(length))
                    return p;
                if (void* const p = os_map_big_pages(length, big_huge_pages(*st)))
                    return p;
                if (os_memory.limit.load(memory_order_relaxed) == 0)
                    return nullptr;
                // The memory limit refused it (os/memory_account.hpp): what this state
                // and the parked ones hold free goes back, and once more.
                (void)Engine::core::trim(*st);
                (void)home::trim_parked();
                return os_map_big_pages(length, big_huge_pages(*st));
            }
        return os_map_big_pages(length, default_huge_pages_from != huge_pages_never);
    }
    /// Big mappings of 2 MiB or more take huge pages (os_map_big_pages) unless the
    /// state's segments never do (set_huge_pages(false), STA_MALLOC_HUGE_PAGES=0).
    template <class State>
    static bool big_huge_pages(const State& st) noexcept {
        if constexpr (requires { st.huge_pages_from; })
            return st.huge_pages_from != huge_pages_never;
        else
            return default_huge_pages_from != huge_pages_never;
    }
    static void big_free(void* p, std::size_t bytes) noexcept {
        if constexpr (big_from_os) {
            os_memory.big_freed(os_round_up(bytes));
            if constexpr (retains)
                if (auto* const st = home::own())
                    if (const std::uint32_t now = os_now_ms();
                        st->retained.keep(p, os_round_up(bytes), now)) {
                        (void)st->retained.release_due(now, st->purge.wait_now());
                        return;
                    }
            os_unmap_pages(p, os_round_up(bytes));
        } else {
            std::free(p);
        }
    }
    static void* big_realloc(void* p, std::size_t old_bytes, std::size_t bytes) noexcept {
        if constexpr (!big_from_os) {
            return std::realloc(p, bytes);
        } else {
            const std::size_t from = os_round_up(old_bytes), to = os_round_up(bytes);
            if (from == to)
                return p;
            void* const q = big_resize(p, from, to);
            if (q != nullptr) {
                os_memory.big_freed(from);
                os_memory.big_taken(to);
            }
            return q;
        }
    }
    /// The pages of a big block resized from `from` to `to` (whole pages, not equal).
    static void* big_resize(void* p, std::size_t from, std::size_t to) noexcept {
        if constexpr (retains)
            if (auto* const st = home::own()) {
                if (to > from && st->retained.grow_in_place(p, from, to))
                    return p; // the kept pages that follow it
                if (to < from) {
                    if (!st->retained.keep(static_cast<std::byte*>(p) + to, from - to, os_now_ms()))
                        os_unmap_pages(static_cast<std::byte*>(p) + to, from - to);
                    return p;
                }
            }
        return os_remap_pages(p, from, to);
    }

    static pool_state* owner_of(const void* p) noexcept {
        pool_state* owner;
        std::memcpy(&owner, static_cast<const std::byte*>(p) - owner_prefix, sizeof owner);
        return owner;
    }
    static void* move(void* p, std::size_t old_bytes, std::size_t new_bytes) noexcept {
        return move_block(
            p, old_bytes, new_bytes, [new_bytes] { return alloc(new_bytes); },
            [p, old_bytes] { free(p, old_bytes); });
    }
};

/// The requests no class serves, out of line for every dispatch: size 0 gets a unique
/// block of the smallest class (like malloc(0)), the rest go to the next tiers.
template <class Engine>
struct outside {
    STA_NOINLINE static void* alloc(std::size_t bytes) noexcept {
        return bytes == 0 ? Engine::alloc_smallest() : next_tiers<Engine>::alloc(bytes);
    }
    STA_NOINLINE static void free(void* p, std::size_t bytes) noexcept {
        if (bytes == 0)
            Engine::push(Engine::classes::slot_of_key(0), p);
        else
            next_tiers<Engine>::free(p, bytes);
    }
};

} // namespace sta::detail
