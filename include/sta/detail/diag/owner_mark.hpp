// sta-pool: detail::owner_mark — the one owner-thread check. Every object of the
// library that belongs to one thread at a time holds one as a [[no_unique_address]]
// member: a seed-mode pool (pool/state.hpp), an arena, a thread_heap, a lazy_slot, the
// count block of a local_ptr, an activation slot.
//
// In checked builds (STA_POOL_CHECKS) an owner_mark remembers the first thread that
// touches its object and reports misuse (diag/misuse.hpp), naming both threads, when another
// thread touches it; hand_over() forgets the owner so that the next thread to touch the
// object owns it. In release builds it is an empty struct: it takes no room and every
// function compiles to nothing.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/diag/misuse.hpp"
#include "sta/detail/os/thread_identity.hpp"

#include <cstdint>
#include <cstdio>

namespace sta::detail {

#if STA_POOL_CHECKS

/// Invariant: key == 0 and number == 0 until the first check() (or after hand_over());
/// afterwards key is the thread pointer of the owner and number its gettid /
/// GetCurrentThreadId.
struct owner_mark {
    std::uintptr_t key = 0;
    unsigned long number = 0;

    /// Claim the object now for the calling thread (used where the creator is known).
    void claim() noexcept {
        key = thread_key();
        number = thread_number();
    }
    /// The object has no owner until a thread next touches it.
    void hand_over() noexcept { key = 0, number = 0; }
    bool owned() const noexcept { return key != 0; }

    /// `kind` and `name` name the object in the message (sta::lazy_slot "circle");
    /// `noun` is how the message refers to it ("it", "the pool", "the arena").
    STA_FORCE_INLINE void check(const char* kind, const char* name = "",
                                const char* noun = "it") noexcept {
        if (key != thread_key()) [[unlikely]]
            claim_or_report(kind, name, noun);
    }

    STA_COLD void claim_or_report(const char* kind, const char* name, const char* noun) noexcept {
        if (key == 0) {
            claim();
            return;
        }
        char subject[160];
        std::snprintf(subject, sizeof subject, "%s%s%s%s", kind, *name ? " \"" : "", name,
                      *name ? "\"" : "");
        char what[256];
        std::snprintf(what, sizeof what,
                      "called from thread %lu, but %s belongs to thread %lu; it is used by one "
                      "thread at a time (see the README, \"The thread rule\")",
                      thread_number(), noun, number);
        report_misuse(subject, what);
    }
};

#else

struct owner_mark {
    void claim() noexcept {}
    void hand_over() noexcept {}
    bool owned() const noexcept { return false; }
    STA_FORCE_INLINE void check(const char*, const char* = "", const char* = "it") noexcept {}
};

#endif

} // namespace sta::detail
