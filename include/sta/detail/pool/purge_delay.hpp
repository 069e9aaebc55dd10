// sta-pool: how long a pool keeps free memory before giving it back to the OS — the
// delay that a clean span (layout/span_life.hpp) and a big block's retained mapping
// (heaps/retained_mappings.hpp) wait, and how it follows what the program does.
//
//   wait_ms
//     ^
//  cap|                 ______________                  cap = base x max_stretch
//     |            ____|              |____
//     |       ____|                        |____
// base|______|                                  |______________
//     +--------------------------------------------------------> time
//            ^    ^    ^                   ^    ^
//            refaults: memory given back   no refault for stretch_hold_waits
//            and taken again within the    waits: the wait halves (at a purge)
//            cap; each batch of            down to the base
//            refaults_to_stretch doubles
//            the wait
//
// A program that rebuilds its working set in a loop (a GUI that rebuilds a window every
// second, an interpreter after a collection, a document closed and opened) would give
// back at every turn the spans that the next turn takes again, and pay their page faults
// twice. Each time memory given back is taken again within the cap (a refault: a purged
// span that had served blocks taken again, a segment mapped after one was unmapped), the
// pool notes it; a batch of them doubles the wait, so the next turn finds the memory
// still there. A program that frees once and keeps running (the report's "memory given
// back") takes no purged span again and keeps the base; a stretched wait halves back
// towards the base at a purge once no batch of refaults came for stretch_hold_waits
// waits, so a loop that stopped gives its memory back within a few seconds.
//
// Near the memory limit (os/memory_account.hpp) nothing waits: wait_now() is 0 and
// never() false, so freed memory goes back at the next slow path of its owner (or, for
// a parked state, of any thread of its family).
//
// Everything here runs on slow paths (a refill that takes a purged span, a segment
// mapped, a purge): nothing on an allocation's or a free's fast path. One per state.
#pragma once

#include "sta/detail/os/memory_account.hpp"

#include <cstdint>

namespace sta::detail {

/// A purge delay that never passes: freed memory is kept until the process ends (the
/// seed's trade).
inline constexpr std::uint32_t purge_never = 0xFFFFFFFFu;

struct purge_delay {
    /// The longest wait, in multiples of the base: 8 x 500 ms = 4 s by default (mimalloc
    /// 3.4.3 waits 1 s, jemalloc decays over 10 s).
    static constexpr std::uint32_t max_stretch = 8;
    /// Refaults that double the wait: one span taken again (a block left in a span, an
    /// allocation after a big free) does not; a working set taken again does.
    static constexpr std::uint32_t refaults_to_stretch = 8;
    /// The refaults a segment mapped after an unmap counts for: its 32 spans were given
    /// back whole, and the new one will be touched again.
    static constexpr std::uint32_t refaults_of_segment = refaults_to_stretch;
    /// Waits without a batch of refaults after which a stretched wait halves.
    static constexpr std::uint32_t stretch_hold_waits = 4;

    /// The option: set_purge_delay, STA_MALLOC_PURGE_DELAY_MS (purge_never: never).
    std::uint32_t base_ms;
    /// What a clean span waits now: base_ms .. base_ms x max_stretch (purge_never
    /// with a base of never).
    std::uint32_t wait_ms;
    /// Refaults noted since the last batch.
    std::uint32_t refaults = 0;
    /// When the last batch of refaults came, or the wait last halved (os_now_ms).
    std::uint32_t changed_ms = 0;
    /// When a segment was last unmapped, and how many unmapped since no mapping followed.
    std::uint32_t unmapped_ms = 0;
    std::uint32_t unmapped_pending = 0;

    constexpr explicit purge_delay(std::uint32_t base) noexcept : base_ms(base), wait_ms(base) {}

    /// The option set anew: the wait starts over from it.
    void set_base(std::uint32_t ms) noexcept {
        base_ms = wait_ms = ms;
        refaults = 0;
        unmapped_pending = 0;
    }
    /// Is freed memory kept for ever? Not near the memory limit.
    bool never() const noexcept { return wait_ms == purge_never && !os_memory.near_limit(); }
    /// What freed memory waits now before it goes back: wait_ms, nothing near the limit.
    std::uint32_t wait_now() const noexcept { return os_memory.near_limit() ? 0 : wait_ms; }

    /// Memory given back `idle_ms` after it was freed (a purged span's since_ms) is taken
    /// again at `now`: a refault of `weight`, when it came back within the cap.
    void note_refault(std::uint32_t now, std::uint32_t idle_ms, std::uint32_t weight) noexcept {
        if (wait_ms == purge_never || idle_ms >= cap())
            return;
        refaults += weight;
        if (refaults < refaults_to_stretch)
            return;
        refaults = 0;
        changed_ms = now;
        const std::uint64_t doubled = std::uint64_t{wait_ms} * 2;
        wait_ms = doubled < cap() ? static_cast<std::uint32_t>(doubled) : cap();
    }
    /// A segment goes back to the OS at `now`.
    void note_unmapped(std::uint32_t now) noexcept {
        unmapped_ms = now;
        ++unmapped_pending;
    }
    /// A segment is mapped at `now`: after an unmap within the cap, a refault of a whole
    /// segment (it was free for at least the wait before it went).
    void note_mapped(std::uint32_t now) noexcept {
        if (unmapped_pending == 0)
            return;
        --unmapped_pending;
        note_refault(now, now - unmapped_ms + wait_ms, refaults_of_segment);
    }
    /// A purge at `now`: a stretched wait with no batch of refaults for
    /// stretch_hold_waits waits halves, towards the base.
    void note_purge(std::uint32_t now) noexcept {
        if (wait_ms <= base_ms ||
            std::uint64_t{now - changed_ms} < std::uint64_t{wait_ms} * stretch_hold_waits)
            return;
        changed_ms = now;
        refaults = 0;
        wait_ms = wait_ms / 2 > base_ms ? wait_ms / 2 : base_ms;
    }

  private:
    std::uint32_t cap() const noexcept {
        const std::uint64_t c = std::uint64_t{base_ms} * max_stretch;
        return c < purge_never ? static_cast<std::uint32_t>(c) : purge_never - 1;
    }
};

} // namespace sta::detail
