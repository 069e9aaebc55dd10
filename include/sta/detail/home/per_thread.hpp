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
//   state is parked on the family's parked list, and current goes back to idle_. Parking
//   takes what other threads sent home, ends the classes' current spans (the layout's
//   drain_parked, which names the state it works on and never reads current) and hands the
//   heap over. What the state keeps free — its clean spans, its kept big mappings — stays
//   for the purge delay, which other threads' slow paths keep (give_back_parked), so that a
//   thread started a round takes it back without a page fault. Its spans stay where they
//   are, owned by the parked state: live blocks can still be freed by any thread, and a
//   thread that sends a block home to a parked state takes it back itself, under the
//   state's lock, so that memory freed after its thread ended is reused and given back
//   without waiting for a new thread (sent_home). The next thread that needs a pool adopts
//   the most recently parked state, memory, lists and all. States are never destroyed
//   (frees can reach them at any time), so a block's owner pointer is always valid; threads
//   that come and go reuse the same few states.
//
//   The code is in two parts. family_ops<State, Slow> holds what is the same for every
//   pool tag — adopting, parking, giving back what parked states keep — over the
//   family's shared data (thread_family) and the layout's slow paths (Slow, which names
//   no tag): it is compiled once for the default switches (src/pool) and declared extern
//   where the layout is (layout/spans.hpp). per_thread_home<State, Engine> is the tag's:
//   its thread slot, its idle state, its family, and one-line calls into family_ops.
//
//   Invariants:
//   PH1 current of a thread is idle_ or a state no other thread's current points at;
//       a parked state is on the parked list and no thread's current.
//   PH2 idle_ is never written after constant initialisation.
//   PH3 a family's `made` counts every state ever made, parked or not; none is ever destroyed.
//   PH4 a state's `parked` is true exactly while it is on the parked list or being put
//       there; it changes, and a parked state's lists change, only under its
//       parked_lock.
//   PH5 `all` lists every state made, newest first, through next_made, which never
//       changes once the state is on it: a walk may read the list without the lock
//       from a head read under it (process_stats).
//   PH6 a state whose options_epoch is the family's has its options (purge delay, huge
//       pages, prefault): a state made takes them; one that is behind takes them at its
//       next slow-path check (the layout's give_back_due), or when a walk of the
//       parked states meets it.
//   PH7 a state whose taken_for_frees is set was taken by its thread, holding no
//       memory, for its frees of other threads' blocks (for_frees: a parked state that
//       holds none, or a new one), so that they go home batched (S13), and has not
//       refilled a class since;
//       at its first refill (for_refill) it is exchanged for a parked state that holds
//       memory, if there is one. A thread whose end was handled takes none (a state
//       taken then would never be parked): its blocks go home one by one.
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

/// What one family of per-thread pools (one pool tag) shares: the options every state
/// made from now on takes, the parked list and the counts. Constant-initialised, never
/// destroyed.
struct thread_family {
    explicit constexpr thread_family(bool prefault) noexcept : prefault_for_new(prefault) {}

    atomic<std::size_t> page_bytes{default_page_bytes};
    atomic<std::size_t> segments{0};
    atomic<bool> heap_used{false};
    atomic<std::uint32_t> huge_pages_for_new{default_huge_pages_from};
    atomic<bool> huge_pages_dense_for_new{default_huge_pages_dense};
    atomic<bool> prefault_for_new;
    atomic<std::uint32_t> purge_delay_for_new{default_purge_delay_ms};
    /// PH6: counts changes of the options above that every state takes, not only new ones.
    atomic<std::uint32_t> options_epoch{0};
    /// Parked states that keep memory for its delay (give_back_parked): notes made, the
    /// notes the last walk saw, whether a state still waited after it, and when it ran.
    static constexpr std::uint32_t parked_check_ms = 10;
    atomic<std::uint32_t> parked_noted{0};
    atomic<std::uint32_t> parked_seen{0};
    atomic<bool> parked_still_wait{false};
    atomic<std::uint32_t> parked_checked_ms{0};
    spin_lock lock{};             // guards parked, made and all
    pool_state* parked = nullptr; // PH1, PH4
    std::size_t made = 0;         // PH3
    pool_state* all = nullptr;    // PH5

    /// Does some parked state keep free memory for its delay? One relaxed load or two.
    bool parked_wait() const noexcept {
        return parked_noted.load(memory_order_relaxed) != parked_seen.load(memory_order_relaxed) ||
               parked_still_wait.load(memory_order_relaxed);
    }
};

/// A family's slow paths, the same for every tag: State is the layout's state, Slow its
/// slow paths (drain, drain_parked, send_outbox, trim, give_back_due, waits). The member
/// functions are defined below the class, so that where the compiled part holds them
/// (extern template, layout/spans.hpp) a unit instantiates none of them.
template <class State, class Slow>
struct family_ops {
    /// Which parked states take may choose (Slow::holds_memory says what a state holds).
    enum class wanted { any, holding_nothing, holding_memory };
    /// A parked state, or a new one marked unparked, for a thread that needs one; nullptr
    /// when the OS refuses the memory for a new one. `hooks` is what a new state calls.
    /// any: a parked state that holds memory first, else the newest parked one.
    /// holding_nothing: for a thread's first free (home: for_frees), which would keep
    /// what it took from the purges that the parked list's memory gets. holding_memory:
    /// only a parked state, none made (home: for_refill).
    static State* take(thread_family& f, const home_hooks& hooks,
                       wanted want = wanted::any) noexcept;
    /// `s`, taken, is its thread's now: what was freed into it while it was parked.
    static void adopted(State& s) noexcept;
    /// The thread that owned `s` ends: what it holds for others goes home, it is marked
    /// parked and gives back what it can (PH4). The caller then points its thread's slot
    /// away from `s` and calls park.
    static void retire(thread_family& f, State& s) noexcept;
    /// `s`, retired, onto the parked list (PH1).
    static void park(thread_family& f, State& s) noexcept;
    /// A sender takes back what it sent to a parked state, with what others sent.
    static void drain_parked(thread_family& f, State& s) noexcept;
    /// What parked states kept for their delay, given back once it has passed: a walk of
    /// the parked list, at most once per parked_check_ms of the clock, by whichever
    /// thread's slow path gets here (the layout's give_back_due). A state another thread
    /// holds is passed over until the next walk.
    static void give_back_parked(thread_family& f, std::uint32_t now) noexcept;
    /// Give back, at once, what every parked state could give (trim): its clean spans'
    /// pages. The bytes given back.
    static std::size_t trim_parked(thread_family& f) noexcept;
    static thread_pools_stats stats(thread_family& f) noexcept;
    /// PH6: `s` takes the family's options if they changed since it last did.
    static void take_options(thread_family& f, State& s) noexcept;

  private:
    /// A new state in memory of its own from the OS, counted in made (PH3).
    static State* make(thread_family& f, const home_hooks& hooks) noexcept;
    /// A parked state keeps free memory whose delay has not passed: the next slow path of
    /// any thread of the family that finds it due gives it back (give_back_parked).
    static void note_parked_wait(thread_family& f, State& s) noexcept;
    /// The family's options into `s`, as of `epoch` (PH6).
    static void copy_options(thread_family& f, State& s, std::uint32_t epoch) noexcept;
};

template <class State, class Slow>
State* family_ops<State, Slow>::take(thread_family& f, const home_hooks& hooks,
                                     wanted want) noexcept {
    State* s = nullptr;
    {
        const spin_guard lock(f.lock);
        // any: one that holds memory first (its thread's memory is reused), else the newest
        const bool memory = want != wanted::holding_nothing;
        pool_state** link = &f.parked;
        while (*link != nullptr && Slow::holds_memory(static_cast<State&>(**link)) != memory)
            link = &(*link)->next_parked;
        if (*link == nullptr && want == wanted::any)
            link = &f.parked;
        if ((s = static_cast<State*>(*link)) != nullptr)
            *link = s->next_parked;
    }
    if (s == nullptr && (want == wanted::holding_memory || (s = make(f, hooks)) == nullptr))
        return nullptr;
    {
        const spin_guard held(s->parked_lock); // a sender may be draining it (PH4)
        s->parked.store(false, memory_order_seq_cst);
    }
    s->next_parked = nullptr;
    return s;
}

template <class State, class Slow>
void family_ops<State, Slow>::adopted(State& s) noexcept {
    (void)Slow::drain(s);
}

template <class State, class Slow>
State* family_ops<State, Slow>::make(thread_family& f, const home_hooks& hooks) noexcept {
    constexpr std::size_t bytes = (sizeof(State) + 4095) & ~std::size_t{4095};
    void* const memory = os_map_pages(bytes);
    if (memory == nullptr)
        return nullptr;
    State* const s = new (memory) State{};
    s->page_bytes = f.page_bytes.load(memory_order_relaxed);
    copy_options(f, *s, f.options_epoch.load(memory_order_acquire));
    s->home = &hooks;
    const spin_guard lock(f.lock);
    ++f.made;
    s->next_made = f.all; // PH5
    f.all = s;
    return s;
}

template <class State, class Slow>
void family_ops<State, Slow>::retire(thread_family& f, State& s) noexcept {
    Slow::send_outbox(s); // before the lock: sending may drain a parked owner
    const spin_guard held(s.parked_lock);
    s.parked.store(true, memory_order_seq_cst);
    Slow::drain_parked(s);
    s.heap.hand_over();
    note_parked_wait(f, s);
}

template <class State, class Slow>
void family_ops<State, Slow>::park(thread_family& f, State& s) noexcept {
    const spin_guard lock(f.lock);
    s.next_parked = f.parked;
    f.parked = &s;
}

template <class State, class Slow>
void family_ops<State, Slow>::drain_parked(thread_family& f, State& s) noexcept {
    const spin_guard held(s.parked_lock);
    if (!s.parked.load(memory_order_relaxed))
        return; // adopted meanwhile: its new thread drains it
    Slow::drain_parked(s);
    s.heap.hand_over(); // the heap's owner is whoever adopts the state, not the sender
    note_parked_wait(f, s);
}

template <class State, class Slow>
void family_ops<State, Slow>::give_back_parked(thread_family& f, std::uint32_t now) noexcept {
    if (now - f.parked_checked_ms.load(memory_order_relaxed) < thread_family::parked_check_ms)
        return;
    f.parked_checked_ms.store(now, memory_order_relaxed);
    const std::uint32_t noted = f.parked_noted.load(memory_order_relaxed);
    bool still = false;
    {
        const spin_guard lock(f.lock);
        for (pool_state* p = f.parked; p != nullptr; p = p->next_parked) {
            State& s = static_cast<State&>(*p);
            const spin_guard held(s.parked_lock);
            take_options(f, s);
            Slow::give_back_due(s, now);
            s.heap.hand_over();
            still = still || Slow::waits(s);
        }
    }
    f.parked_still_wait.store(still, memory_order_relaxed);
    f.parked_seen.store(noted, memory_order_relaxed);
}

template <class State, class Slow>
std::size_t family_ops<State, Slow>::trim_parked(thread_family& f) noexcept {
    std::size_t given = 0;
    const spin_guard lock(f.lock);
    for (pool_state* s = f.parked; s != nullptr; s = s->next_parked) {
        const spin_guard held(s->parked_lock);
        given += Slow::trim(static_cast<State&>(*s));
        s->heap.hand_over(); // trimmed by this thread, owned by whoever adopts it
    }
    return given;
}

template <class State, class Slow>
thread_pools_stats family_ops<State, Slow>::stats(thread_family& f) noexcept {
    const spin_guard lock(f.lock);
    thread_pools_stats out;
    out.pools_made = f.made;
    for (pool_state* s = f.parked; s != nullptr; s = s->next_parked)
        ++out.pools_parked;
    out.segments_mapped = f.segments.load(memory_order_relaxed);
    return out;
}

template <class State, class Slow>
void family_ops<State, Slow>::take_options(thread_family& f, State& s) noexcept {
    const std::uint32_t epoch = f.options_epoch.load(memory_order_acquire);
    if (s.options_epoch != epoch)
        copy_options(f, s, epoch);
}

template <class State, class Slow>
void family_ops<State, Slow>::copy_options(thread_family& f, State& s,
                                           std::uint32_t epoch) noexcept {
    s.options_epoch = epoch;
    // A delay set anew starts over (its stretch after refaults with it); the same one
    // keeps its stretch.
    if (const std::uint32_t ms = f.purge_delay_for_new.load(memory_order_relaxed);
        ms != s.purge.base_ms)
        s.purge.set_base(ms);
    s.huge_pages_from = f.huge_pages_for_new.load(memory_order_relaxed);
    s.huge_pages_dense = f.huge_pages_dense_for_new.load(memory_order_relaxed);
    s.prefault = f.prefault_for_new.load(memory_order_relaxed);
}

template <class State, class Slow>
void family_ops<State, Slow>::note_parked_wait(thread_family& f, State& s) noexcept {
    if (Slow::waits(s))
        f.parked_noted.fetch_add(1, memory_order_relaxed);
}

/// One pool tag's family of per-thread states (the file comment).
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
    /// The state through which the calling thread sends other threads' blocks home: its
    /// own, adopted now if it has none (one that holds no memory) — unless its end was
    /// handled already (a free in a later thread_local or key destructor, or in the C
    /// library's own clean-up after them, would make a state that nobody parks): nullptr
    /// then, and the block goes home alone.
    static State* for_frees() noexcept {
        State* const s = current::get();
        return s != &idle_           ? s
               : current::exit_ran() ? nullptr
                                     : adopt(ops::wanted::holding_nothing);
    }
    /// The calling thread's state for its class's refill, adopted now if it has none; a
    /// state it took for its frees (for_frees) is exchanged at its first refill for a
    /// parked one that holds memory, if there is one: the thread reuses what an ended
    /// thread left, as it would had its first call been an allocation. nullptr when
    /// the OS refuses the memory for a new one.
    static State* for_refill() noexcept {
        State* const s = current::get();
        if (s == &idle_)
            return adopt();
        if (!s->taken_for_frees) // the layout calls it for an idle or a taken state only
            return s;
        s->taken_for_frees = false;
        State* const full = ops::take(family_, hooks_, ops::wanted::holding_memory);
        if (full == nullptr)
            return s;
        thread_ended(s); // back to the parked list, its outbox sent home
        return adopted(full);
    }
    /// The calling thread's state, or nullptr while it has none (it never allocated, or
    /// its state was parked): nothing is made or adopted.
    STA_FORCE_INLINE static State* existing() noexcept {
        State* const s = current::get();
        return s != &idle_ ? s : nullptr;
    }
    /// Any thread may call: nothing to check.
    STA_FORCE_INLINE static void check_thread() noexcept {}

    static std::size_t page_bytes() noexcept {
        return family_.page_bytes.load(memory_order_relaxed);
    }
    static void set_page_bytes(std::size_t bytes) noexcept {
        family_.page_bytes.store(bytes, memory_order_relaxed);
    }
    /// The page size bounds the heap tier of every thread's pool: it is chosen before
    /// any of them holds memory.
    static bool holds_memory() noexcept {
        return family_.segments.load(memory_order_relaxed) != 0 ||
               family_.heap_used.load(memory_order_relaxed);
    }
    static void segment_mapped() noexcept { family_.segments.fetch_add(1, memory_order_relaxed); }
    static void heap_used() noexcept {
        if (!family_.heap_used.load(memory_order_relaxed))
            family_.heap_used.store(true, memory_order_relaxed);
    }
    /// A member template, so that an explicit instantiation of the home (the compiled
    /// part's, memory_pool.hpp) leaves it out: only a checked build defines a registry.
    template <int = 0>
    static checked_registry& registry() noexcept {
        static checked_registry* const shared = new_checked_registry(true);
        return *shared;
    }

    /// The span layout's options for segments, for every state made from now on (a
    /// state already made keeps its own: memory_pool::set_huge_pages sets both).
    static void set_huge_pages_for_new(std::uint32_t from_segments, bool dense) noexcept {
        family_.huge_pages_for_new.store(from_segments, memory_order_relaxed);
        family_.huge_pages_dense_for_new.store(dense, memory_order_relaxed);
    }
    static void set_prefault_for_new(bool on) noexcept {
        family_.prefault_for_new.store(on, memory_order_relaxed);
    }
    static void set_purge_delay_for_new(std::uint32_t ms) noexcept {
        family_.purge_delay_for_new.store(ms, memory_order_relaxed);
    }

    /// A thread pushed a block onto `owner`'s inbox. When the owner's thread has ended,
    /// the sender takes it back itself (PH4): nothing freed waits for a new thread.
    static void sent_home(pool_state& owner) noexcept {
        if (owner.parked.load(memory_order_seq_cst)) [[unlikely]]
            ops::drain_parked(family_, static_cast<State&>(owner));
    }
    static bool parked_wait() noexcept { return family_.parked_wait(); }
    /// PH6: the options for new states are every state's now: each takes them at its
    /// next slow-path check.
    static void options_changed() noexcept {
        family_.options_epoch.fetch_add(1, memory_order_release);
    }
    static void take_options(pool_state& s) noexcept {
        ops::take_options(family_, static_cast<State&>(s));
    }
    /// The options states are made with (and take, PH6).
    struct options {
        std::uint32_t purge_delay_ms;
        std::uint32_t huge_pages_from;
        bool huge_pages_dense;
        bool prefault;
    };
    static options options_for_new() noexcept {
        return {family_.purge_delay_for_new.load(memory_order_relaxed),
                family_.huge_pages_for_new.load(memory_order_relaxed),
                family_.huge_pages_dense_for_new.load(memory_order_relaxed),
                family_.prefault_for_new.load(memory_order_relaxed)};
    }
    static void give_back_parked(std::uint32_t now) noexcept {
        ops::give_back_parked(family_, now);
    }
    static std::size_t trim_parked() noexcept { return ops::trim_parked(family_); }

    /// fork() in a threaded program: the parent holds the family's lock across the
    /// fork (pthread_atfork's prepare), so the child's copy is never taken by a thread
    /// that does not exist there; both release it after. The child's states of threads
    /// that did not survive are never adopted (they were not parked).
    static void before_fork() noexcept { family_.lock.lock(); }
    static void after_fork() noexcept { family_.lock.unlock(); }

    static thread_pools_stats stats() noexcept { return ops::stats(family_); }

    /// Every state the family made (PH5), each with whether it is parked now:
    /// fn(State&, bool parked). The caller reads another thread's state as a snapshot.
    template <class Fn>
    static void for_each_state(Fn&& fn) noexcept {
        pool_state* head = nullptr;
        {
            const spin_guard lock(family_.lock);
            head = family_.all;
        }
        for (pool_state* s = head; s != nullptr; s = s->next_made)
            fn(static_cast<State&>(*s), s->parked.load(memory_order_acquire));
    }

  private:
    using ops = family_ops<State, typename Engine::core::slow>;

    /// A parked state, or a new one, becomes the calling thread's (`want`:
    /// family_ops::take); one taken for its thread's frees says so until its first refill
    /// (for_refill).
    STA_NOINLINE static State* adopt(typename ops::wanted want = ops::wanted::any) noexcept {
        State* const s = ops::take(family_, hooks_, want);
        if (s == nullptr)
            return nullptr;
        s->taken_for_frees = want == ops::wanted::holding_nothing;
        return adopted(s);
    }
    /// `s`, taken, becomes the calling thread's.
    static State* adopted(State* s) noexcept {
        if (!current::set(s)) { // the OS has no slot for it (mingw g++: TlsAlloc refused)
            thread_ended(s);
            return nullptr;
        }
        ops::adopted(*s);
        return s;
    }

    /// The thread that owned `s` ends: park its state (PH1, PH4). What it keeps free waits
    /// for its delay there, for the next thread to adopt.
    static void thread_ended(State* s) noexcept {
        ops::retire(family_, *s);
        if (current::get() == s)
            (void)current::set(&idle_);
        ops::park(family_, *s);
    }

    static constexpr home_hooks hooks_{&parked_wait, &give_back_parked, &sent_home, &segment_mapped,
                                       &take_options};
    static constinit inline State idle_{}; // PH2
    /// The calling thread's state (PH1): reads idle_ until the thread adopts one, and its
    /// thread's end parks it (os/thread_slot.hpp).
    using current = thread_slot<State, &idle_, &thread_ended>;
    static constinit inline thread_family family_{STA_POOL_PREFAULT != 0};
};

} // namespace sta::detail
