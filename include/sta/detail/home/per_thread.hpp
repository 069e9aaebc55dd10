// sta-pool: a pool per thread (sta::threads::per_thread in memory_pool.hpp; the seed's
// single pool is home/one_owner.hpp).
//
// per_thread_home — every thread its own pool. Each thread reaches its state through
//   one thread-local pointer; on the owner's path that is the only difference from
//   one_owner: no atomics, no locks, no fences.
//
//      thread A                       thread B
//      current_ ──> state A           current_ ──> state B <── spans of B know it
//                   inbox (atomic) <─────────────── B frees a block of A's span:
//                     │                              one compare-and-swap push
//                     └── A drains it on its slow path (refill, the heap tier)
//
//   A thread that has not allocated yet points at `idle_`, a state with no memory that
//   is never written: its lists are empty and its bump ranges zero, so the first
//   allocation takes the slow path, which adopts a state (own()). A free on such a
//   thread finds the block's span owned by someone else and sends the block home.
//
//   Thread exit (os/thread_exit.hpp): the state is parked — its heap handed over — on the
//   family's parked list, and current_ goes back to idle_. Its spans stay where they
//   are, owned by the parked state: live blocks can still be freed by any thread (into
//   the parked state's inbox), and the next thread that needs a pool adopts the most
//   recently parked state, memory, lists and all, and drains its inbox first. (The
//   exiting thread does not drain: the layout's slow paths find their state through
//   current_, which mingw's emulated TLS may already have torn down.) States
//   are never destroyed (frees can reach them at any time), so a block's owner pointer
//   is always valid; threads that come and go reuse the same few states.
//
//   Invariants:
//   PH1 current_ of a thread is idle_ or a state no other thread's current_ points at;
//       a parked state is on the parked list and no thread's current_.
//   PH2 idle_ is never written after constant initialisation.
//   PH3 made_ counts every state ever made, parked or not; none is ever destroyed.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/home/contract.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/os/thread_exit.hpp"
#include "sta/detail/pool/checked_build.hpp"
#include "sta/detail/pool/state.hpp"

#include <atomic>
#include <cstddef>
#include <new>
#include <thread>

namespace sta::detail {

/// The lock of a per-thread family's lists: held for a few instructions when a thread
/// adopts or parks a state, never on an allocation or a free.
struct spin_lock {
    std::atomic_flag taken = ATOMIC_FLAG_INIT;
    void lock() noexcept {
        while (taken.test_and_set(std::memory_order_acquire))
            while (taken.test(std::memory_order_relaxed))
                std::this_thread::yield();
    }
    void unlock() noexcept { taken.clear(std::memory_order_release); }
};
struct spin_guard {
    explicit spin_guard(spin_lock& l) noexcept : l_(l) { l_.lock(); }
    ~spin_guard() { l_.unlock(); }
    spin_guard(const spin_guard&) = delete;
    spin_guard& operator=(const spin_guard&) = delete;

  private:
    spin_lock& l_;
};

template <class State, class Engine>
struct per_thread_home {
    static constexpr bool threaded = true;

    /// The calling thread's state: idle_ until it first allocates.
    STA_FORCE_INLINE static State& state() noexcept { return *current_; }
    /// The calling thread's state, adopted now if it has none; nullptr when the OS
    /// refuses the memory for a new one.
    STA_FORCE_INLINE static State* own() noexcept {
        State* const s = current_;
        return s != &idle_ ? s : adopt();
    }
    /// Any thread may call: nothing to check.
    STA_FORCE_INLINE static void check_thread() noexcept {}

    static std::size_t page_bytes() noexcept { return page_bytes_.load(std::memory_order_relaxed); }
    static void set_page_bytes(std::size_t bytes) noexcept {
        page_bytes_.store(bytes, std::memory_order_relaxed);
    }
    /// The page size bounds the heap tier of every thread's pool: it is chosen before
    /// any of them holds memory.
    static bool holds_memory() noexcept {
        return segments_.load(std::memory_order_relaxed) != 0 ||
               heap_used_.load(std::memory_order_relaxed);
    }
    static void segment_mapped() noexcept { segments_.fetch_add(1, std::memory_order_relaxed); }
    static void heap_used() noexcept {
        if (!heap_used_.load(std::memory_order_relaxed))
            heap_used_.store(true, std::memory_order_relaxed);
    }
    static checked_registry& registry() noexcept {
        static checked_registry* const shared = [] {
            auto* const r = new checked_registry; // never deleted
            r->shared = true;
            return r;
        }();
        return *shared;
    }

    /// The span layout's options for segments, for every state made from now on (a
    /// state already made keeps its own: memory_pool::set_huge_pages sets both).
    static void set_huge_pages_for_new(bool on) noexcept {
        huge_pages_for_new_.store(on, std::memory_order_relaxed);
    }
    static void set_prefault_for_new(bool on) noexcept {
        prefault_for_new_.store(on, std::memory_order_relaxed);
    }

    /// fork() in a threaded program: the parent holds the family's lock across the
    /// fork (pthread_atfork's prepare), so the child's copy is never taken by a thread
    /// that does not exist there; both release it after. The child's states of threads
    /// that did not survive are never adopted (they were not parked).
    static void before_fork() noexcept { lock_.lock(); }
    static void after_fork() noexcept { lock_.unlock(); }

    static thread_pools_stats stats() noexcept {
        const spin_guard lock(lock_);
        thread_pools_stats out;
        out.pools_made = made_;
        for (pool_state* s = parked_; s != nullptr; s = s->next_parked)
            ++out.pools_parked;
        out.segments_mapped = segments_.load(std::memory_order_relaxed);
        return out;
    }

  private:
    /// A parked state, or a new one, becomes the calling thread's.
    STA_NOINLINE static State* adopt() noexcept {
        State* s = nullptr;
        {
            const spin_guard lock(lock_);
            if ((s = static_cast<State*>(parked_)) != nullptr)
                parked_ = s->next_parked;
        }
        if (s == nullptr && (s = make()) == nullptr)
            return nullptr;
        s->next_parked = nullptr;
        current_ = s;
        (void)call_at_thread_exit<&thread_ended>(s); // without a slot the state stays ours
        (void)Engine::core::drain(*s);               // what was freed into it while it was parked
        return s;
    }

    /// A new state in memory of its own from the OS, counted in made_ (PH3).
    static State* make() noexcept {
        constexpr std::size_t bytes = (sizeof(State) + 4095) & ~std::size_t{4095};
        void* const memory = os_map_pages(bytes);
        if (memory == nullptr)
            return nullptr;
        State* const s = new (memory) State{};
        s->page_bytes = page_bytes();
        s->huge_pages = huge_pages_for_new_.load(std::memory_order_relaxed);
        s->prefault = prefault_for_new_.load(std::memory_order_relaxed);
        const spin_guard lock(lock_);
        ++made_;
        return s;
    }

    /// The thread that owned `p` ends: park its state (PH1). The big blocks' pages it
    /// kept for its thread's next requests (heaps/retained_mappings.hpp) go back to the OS: a
    /// parked state has no thread to make them.
    static void thread_ended(void* p) noexcept {
        State* const s = static_cast<State*>(p);
        s->heap.hand_over();
        s->retained.release_all();
        if (current_ == s)
            current_ = &idle_;
        const spin_guard lock(lock_);
        s->next_parked = parked_;
        parked_ = s;
    }

    static constinit inline State idle_{}; // PH2
    STA_TLS_MODEL static constinit inline thread_local State* current_ = &idle_;
    static constinit inline std::atomic<std::size_t> page_bytes_{default_page_bytes};
    static constinit inline std::atomic<std::size_t> segments_{0};
    static constinit inline std::atomic<bool> heap_used_{false};
    static constinit inline std::atomic<bool> huge_pages_for_new_{STA_POOL_HUGE_PAGES != 0};
    static constinit inline std::atomic<bool> prefault_for_new_{STA_POOL_PREFAULT != 0};
    static constinit inline spin_lock lock_{}; // guards parked_ and made_
    static constinit inline pool_state* parked_ = nullptr;
    static constinit inline std::size_t made_ = 0;
};

} // namespace sta::detail
