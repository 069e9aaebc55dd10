// sta-pool: detail::owner_mark — the owner-thread rule for objects that are not pools
// (sta::lazy_slot, the count block of sta::local_ptr).
//
// In checked builds (STA_POOL_CHECKS) an owner_mark remembers the first thread that
// touches its object and aborts, with one line naming both threads, when another
// thread touches it. In release builds it is an empty struct: a member declared
// [[no_unique_address]] takes no room and check() compiles to nothing.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/thread_identity.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace sta::detail {

#if STA_POOL_CHECKS

/// Invariant: key == 0 and number == 0 until the first check(); afterwards key is the
/// thread pointer of the owner and number its gettid / GetCurrentThreadId.
struct owner_mark {
    std::uintptr_t key = 0;
    unsigned long number = 0;

    /// Claim the object now for the calling thread (used where the creator is known).
    void claim() noexcept {
        key = thread_key();
        number = thread_number();
    }

    /// `kind` and `name` name the object in the message: sta::lazy_slot "circle".
    STA_FORCE_INLINE void check(const char* kind, const char* name = "") noexcept {
        if (key != thread_key()) [[unlikely]]
            claim_or_die(kind, name);
    }

    STA_COLD void claim_or_die(const char* kind, const char* name) noexcept {
        if (key == 0) {
            claim();
            return;
        }
        std::fprintf(stderr,
                     "sta-pool: %s%s%s%s: called from thread %lu, but it belongs to thread %lu; "
                     "it is used by one thread only (see the README, \"The thread rule\")\n",
                     kind, *name ? " \"" : "", name, *name ? "\"" : "", thread_number(), number);
        std::fflush(stderr);
        std::abort();
    }
};

#else

struct owner_mark {
    void claim() noexcept {}
    STA_FORCE_INLINE void check(const char*, const char* = "") noexcept {}
};

#endif

} // namespace sta::detail
