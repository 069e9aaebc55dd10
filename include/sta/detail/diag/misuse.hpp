// sta-pool: the one misuse reporter. Every part of the library that finds misuse in a
// checked build (STA_POOL_CHECKS) — a call from the wrong thread (diag/owner_mark.hpp), a
// double free, a size mismatch, a foreign pointer (pool/checked_build.hpp, the TLSF heap) — ends
// here: one line on stderr, "sta-pool: <subject>: <what happened>", then abort.
#pragma once

#include "sta/detail/config.hpp"
#include "sta/detail/os/probes.hpp"

#include <cstddef>
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

/// What a checked free found at its pointer (the C API's and the drop-in malloc's release
/// checks: layout/spans.hpp, release_checked; c_api/span_heap.hpp).
enum class free_verdict : unsigned char {
    freed,       // a live block: now free
    double_free, // a block that is free already
    not_a_block, // not the start of a block of its span's class, or of a span of no class
    bad_header,  // outside the spans, and no header of this heap in front of it
    overwritten, // a free block whose mark is gone: written after its free, or overflowed
    overflowed,  // a live block whose canary is gone: written past its end (the hardened heap)
    wrong_size,  // a size or an alignment the block cannot have (report_bad_size)
};

/// A free the release checks refuse: "<library>: <function>: double free of 0x...
/// (32-byte block)" or "... invalid pointer 0x... (<why>)", one line on stderr, then
/// abort. `block_bytes`: the class of the span the pointer lies in (0: none).
[[noreturn]] STA_COLD inline void report_bad_free(const char* library, const char* function,
                                                  const void* p, free_verdict verdict,
                                                  std::size_t block_bytes) noexcept {
    STA_PROBE2(free_refused, p, static_cast<int>(verdict));
    switch (verdict) {
    case free_verdict::double_free:
        std::fprintf(stderr, "%s: %s: double free of %p (%zu-byte block)\n", library, function, p,
                     block_bytes);
        break;
    case free_verdict::not_a_block:
        std::fprintf(stderr,
                     "%s: %s: invalid pointer %p (not the start of a %zu-byte block of its "
                     "span)\n",
                     library, function, p, block_bytes);
        break;
    case free_verdict::overwritten: // block_bytes 0: a block of no class (a heap's)
        if (block_bytes != 0)
            std::fprintf(stderr,
                         "%s: %s: free block %p (%zu-byte) was overwritten (a write after free, "
                         "or past the end of the block before it)\n",
                         library, function, p, block_bytes);
        else
            std::fprintf(stderr,
                         "%s: %s: free block %p was overwritten (a write after free, or past "
                         "the end of the block before it)\n",
                         library, function, p);
        break;
    case free_verdict::overflowed:
        std::fprintf(stderr,
                     "%s: %s: block %p (%zu bytes) was written past its end (its canary is "
                     "gone)\n",
                     library, function, p, block_bytes);
        break;
    default:
        std::fprintf(stderr,
                     "%s: %s: invalid pointer %p (not a block of this heap, or freed "
                     "already)\n",
                     library, function, p);
        break;
    }
    std::fflush(stderr);
    std::abort();
}

/// A free that names its block's size or alignment (C23's free_sized and
/// free_aligned_sized), refused by the release checks: "<library>: <function>: size 200
/// does not match the block 0x... (112 bytes)", one line on stderr, then abort. `what`:
/// "size" or "alignment"; `block_bytes`: what the block holds.
[[noreturn]] STA_COLD inline void report_bad_size(const char* library, const char* function,
                                                  const void* p, const char* what,
                                                  std::size_t value,
                                                  std::size_t block_bytes) noexcept {
    STA_PROBE2(free_refused, p, static_cast<int>(free_verdict::wrong_size));
    std::fprintf(stderr, "%s: %s: %s %zu does not match the block %p (%zu bytes)\n", library,
                 function, what, value, p, block_bytes);
    std::fflush(stderr);
    std::abort();
}

} // namespace sta::detail
