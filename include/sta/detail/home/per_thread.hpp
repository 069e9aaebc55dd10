// sta-pool: a pool per thread (sta::threads::per_thread in memory_pool.hpp; the seed's
// single pool is home/one_owner.hpp).
//
// per_thread_home — every thread its own pool. Each thread reaches its state through
//   one pointer of its own, `current` (os/thread_slot.hpp: a native thread_local, or
//   with mingw-w64 g++ a TLS slot read from the TEB); on the owner's path that is the
//   only difference from one_owner: no atomics, no locks, no fences.
//
//      thread A                       thread B
//      current ──> state A            current ──> state B <── spans of B know it
//                   inbox (atomic) <─────────────── B frees a block of A's span:
//                     │                              one compare-and-swap push
//                     └── A drains it on its slow path (refill, the heap tier)
//
//   A thread that has not allocated yet points at `idle_`, a state with no memory that
//   is never written: its lists are empty and its bump ranges zero, so the first
//   allocation takes the slow path, which adopts a state (own()). A free on such a
//   thread finds the block's span owned by someone else and sends the block home.
//
//   Thread exit (os/thread_exit.hpp, after the thread's thread_local destructors): the
//   state is parked on the family's parked list, and current goes back to idle_.
//   Parking takes what other threads sent home, ends the classes' current spans and
//   gives every span whose blocks have all come back to the OS (the layout's
//   drain_parked, which names the state it works on and never reads current), releases
//   the kept big mappings and hands the heap over. Its spans stay where they are, owned
//   by the parked state: live blocks can still be freed by any thread, and a thread
//   that sends a block home to a parked state takes it back itself, under the state's
//   lock, so that memory freed after its thread ended is reused and given back without
//   waiting for a new thread (sent_home). The next thread that needs a pool adopts the most
//   recently parked state, memory, lists and all. States are never destroyed (frees can
//   reach them at any time), so a block's owner pointer is always valid; threads that
//   come and go reuse the same few states.
//
//   Invariants:
//   PH1 current of a thread is idle_ or a state no other thread's current points at;
//       a parked state is on the parked list and no thread's current.
//   PH2 idle_ is never written after constant initialisation.
//   PH3 made_ counts every state ever made, parked or not; none is ever destroyed.
//   PH4 a state's `parked` is true exactly while it is on the parked list or being put
//       there; it changes, and a parked state's lists change, only under its
//       parked_lock.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/home/contract.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/os/thread_slot.hpp"
#include "sta/detail/pool/checked_build.hpp"
#include "sta/detail/pool/state.hpp"

#include "sta/detail/atomic.hpp"
#include <cstddef>
#include <cstdint>
#include <new>

namespace sta::detail {

template <class State, class Engine>
struct per_thread_home {
    static constexpr bool threaded = true;

    /// The calling thread's state: idle_ until it first allocates.
    STA_FORCE_INLINE static State& state() noexcept { return *current::get(); }
    /// The calling thread's state, adopted now if it has none; nullptr when the OS
    /// refuses the memory for a new one.
    STA_FORCE_INLINE static State* own() noexcept {
        State* const s = current::get();
        return s != &idle_ ? s : adopt();
    }
    /// The calling thread's state, or nullptr while it has none (it never allocated, or
    /// its state was parked): nothing is made or adopted.
    STA_FORCE_INLINE static State* existing() noexcept {
        State* const s = current::get();
        return s != &idle_ ? s : nullptr;
    }
    /// Any thread may call: nothing to check.
    STA_FORCE_INLINE static void check_thread() noexcept {}

    static std::size_t page_bytes() noexcept { return page_bytes_.load(memory_order_relaxed); }
    static void set_page_bytes(std::size_t bytes) noexcept {
        page_bytes_.store(bytes, memory_order_relaxed);
    }
    /// The page size bounds the heap tier of every thread's pool: it is chosen before
    /// any of them holds memory.
    static bool holds_memory() noexcept {
        return segments_.load(memory_order_relaxed) != 0 || heap_used_.load(memory_order_relaxed);
    }
    static void segment_mapped() noexcept { segments_.fetch_add(1, memory_order_relaxed); }
    static void heap_used() noexcept {
        if (!heap_used_.load(memory_order_relaxed))
            heap_used_.store(true, memory_order_relaxed);
    }
    static checked_registry& registry() noexcept {
        static checked_registry* const shared = new_checked_registry(true);
        return *shared;
    }

    /// The span layout's options for segments, for every state made from now on (a
    /// state already made keeps its own: memory_pool::set_huge_pages sets both).
    static void set_huge_pages_for_new(std::uint32_t from_segments, bool dense) noexcept {
        huge_pages_for_new_.store(from_segments, memory_order_relaxed);
        huge_pages_dense_for_new_.store(dense, memory_order_relaxed);
    }
    static void set_prefault_for_new(bool on) noexcept {
        prefault_for_new_.store(on, memory_order_relaxed);
    }
    static void set_purge_delay_for_new(std::uint32_t ms) noexcept {
        purge_delay_for_new_.store(ms, memory_order_relaxed);
    }

    /// A thread pushed a block onto `owner`'s inbox. When the owner's thread has ended,
    /// the sender takes it back itself (PH4): nothing freed waits for a new thread.
    static void sent_home(pool_state& owner) noexcept {
        if (owner.parked.load(memory_order_seq_cst)) [[unlikely]]
            drain_parked(static_cast<State&>(owner));
    }

    /// Does some parked state keep free memory for its delay? One relaxed load or two.
    static bool parked_wait() noexcept {
        return parked_noted_.load(memory_order_relaxed) !=
                   parked_seen_.load(memory_order_relaxed) ||
               parked_still_wait_.load(memory_order_relaxed);
    }

    /// What parked states kept for their delay, given back once it has passed: a walk of
    /// the parked list, at most once per parked_check_ms of the clock, by whichever
    /// thread's slow path gets here (the layout's give_back_due). A state another thread
    /// holds is passed over until the next walk.
    static void give_back_parked(std::uint32_t now) noexcept {
        if (now - parked_checked_ms_.load(memory_order_relaxed) < parked_check_ms)
            return;
        parked_checked_ms_.store(now, memory_order_relaxed);
        const std::uint32_t noted = parked_noted_.load(memory_order_relaxed);
        bool still = false;
        {
            const spin_guard lock(lock_);
            for (pool_state* p = parked_; p != nullptr; p = p->next_parked) {
                State& s = static_cast<State&>(*p);
                const spin_guard held(s.parked_lock);
                Engine::core::give_back_due(s, now);
                s.heap.hand_over();
                still = still || Engine::core::waits(s);
            }
        }
        parked_still_wait_.store(still, memory_order_relaxed);
        parked_seen_.store(noted, memory_order_relaxed);
    }

    /// Give back, at once, what every parked state could give (trim): its clean spans'
    /// pages. The bytes given back.
    static std::size_t trim_parked() noexcept {
        std::size_t given = 0;
        const spin_guard lock(lock_);
        for (pool_state* s = parked_; s != nullptr; s = s->next_parked) {
            const spin_guard held(s->parked_lock);
            given += Engine::core::trim(static_cast<State&>(*s));
            s->heap.hand_over(); // trimmed by this thread, owned by whoever adopts it
        }
        return given;
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
        out.segments_mapped = segments_.load(memory_order_relaxed);
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
        {
            const spin_guard held(s->parked_lock); // a sender may be draining it (PH4)
            s->parked.store(false, memory_order_seq_cst);
        }
        s->next_parked = nullptr;
        if (!current::set(s)) { // the OS has no slot for it (mingw g++: TlsAlloc refused)
            thread_ended(s);
            return nullptr;
        }
        (void)Engine::core::drain(*s); // what was freed into it while it was parked
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
        s->huge_pages_from = huge_pages_for_new_.load(memory_order_relaxed);
        s->huge_pages_dense = huge_pages_dense_for_new_.load(memory_order_relaxed);
        s->prefault = prefault_for_new_.load(memory_order_relaxed);
        s->purge.set_base(purge_delay_for_new_.load(memory_order_relaxed));
        s->home = &hooks_;
        const spin_guard lock(lock_);
        ++made_;
        return s;
    }

    /// The thread that owned `s` ends: park its state (PH1, PH4). A parked state has no
    /// thread to reuse what it holds: the kept big mappings and every clean span go back
    /// to the OS now.
    static void thread_ended(State* s) noexcept {
        Engine::core::send_outbox(*s); // before the lock: sending may drain a parked owner
        {
            const spin_guard held(s->parked_lock);
            s->parked.store(true, memory_order_seq_cst);
            Engine::core::drain_parked(*s);
            s->retained.release_all();
            s->heap.hand_over();
            note_parked_wait(*s);
        }
        if (current::get() == s)
            (void)current::set(&idle_);
        const spin_guard lock(lock_);
        s->next_parked = parked_;
        parked_ = s;
    }

    /// A sender takes back what it sent to a parked state, with what others sent.
    STA_NOINLINE static void drain_parked(State& s) noexcept {
        const spin_guard held(s.parked_lock);
        if (!s.parked.load(memory_order_relaxed))
            return; // adopted meanwhile: its new thread drains it
        Engine::core::drain_parked(s);
        s.heap.hand_over(); // the heap's owner is whoever adopts the state, not the sender
        note_parked_wait(s);
    }

    /// A parked state keeps free memory whose delay has not passed: the next slow path of
    /// any thread of the family that finds it due gives it back (give_back_parked).
    static void note_parked_wait(State& s) noexcept {
        if (Engine::core::waits(s))
            parked_noted_.fetch_add(1, memory_order_relaxed);
    }

    static constexpr home_hooks hooks_{&parked_wait, &give_back_parked, &sent_home,
                                       &segment_mapped};
    static constinit inline State idle_{}; // PH2
    /// The calling thread's state (PH1): reads idle_ until the thread adopts one, and its
    /// thread's end parks it (os/thread_slot.hpp).
    using current = thread_slot<State, &idle_, &thread_ended>;
    static constinit inline atomic<std::size_t> page_bytes_{default_page_bytes};
    static constinit inline atomic<std::size_t> segments_{0};
    static constinit inline atomic<bool> heap_used_{false};
    static constinit inline atomic<std::uint32_t> huge_pages_for_new_{default_huge_pages_from};
    static constinit inline atomic<bool> huge_pages_dense_for_new_{default_huge_pages_dense};
    static constinit inline atomic<bool> prefault_for_new_{STA_POOL_PREFAULT != 0};
    static constinit inline atomic<std::uint32_t> purge_delay_for_new_{default_purge_delay_ms};
    /// Parked states that keep memory for its delay (give_back_parked): notes made, the
    /// notes the last walk saw, whether a state still waited after it, and when it ran.
    static constexpr std::uint32_t parked_check_ms = 10;
    static constinit inline atomic<std::uint32_t> parked_noted_{0};
    static constinit inline atomic<std::uint32_t> parked_seen_{0};
    static constinit inline atomic<bool> parked_still_wait_{false};
    static constinit inline atomic<std::uint32_t> parked_checked_ms_{0};
    static constinit inline spin_lock lock_{}; // guards parked_ and made_
    static constinit inline pool_state* parked_ = nullptr;
    static constinit inline std::size_t made_ = 0;
};

} // namespace sta::detail
