// sta-pool: the one misuse reporter. Every part of the library that finds misuse in a
// checked build (STA_POOL_CHECKS) — a call from the wrong thread (diag/owner_mark.hpp), a
// double free, a size mismatch, a foreign pointer (pool/checked_build.hpp, the TLSF heap) — ends
// here: one line on stderr, "sta-pool: <subject>: <what happened>", then abort.
#pragma once

#include "sta/detail/config.hpp"

#include <cstdio>
#include <cstdlib>

namespace sta::detail {

/// Print "sta-pool: <subject>: <what>" and abort. `subject` names the object misused
/// (sta::arena, sta::memory_pool<inline_branch>, sta::lazy_slot "circle").
[[noreturn]] STA_COLD inline void report_misuse(const char* subject, const char* what) noexcept {
    std::fprintf(stderr, "sta-pool: %s: %s\n", subject, what);
    std::fflush(stderr);
    std::abort();
}

} // namespace sta::detail
