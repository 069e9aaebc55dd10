// sta-pool: the one place where sanitizers and valgrind are told about pool memory.
//
// A pool hides bugs from the tools: a use after free inside recycled memory is an
// ordinary access to them. These hooks make the pool's view theirs. Every call site
// calls them unconditionally; what each backend does is decided here alone, and
// which backends run follows STA_POOL_ASAN and STA_POOL_VALGRIND (detail/config.hpp):
//
//   backend    when                                  what a free block looks like
//   ASan       -fsanitize=address (gcc or clang)     poisoned: any access is reported
//   valgrind   STA_POOL_VALGRIND=1; by default in    MALLOCLIKE/FREELIKE blocks; free
//              checked builds with the header        and unallocated memory NOACCESS
//              <valgrind/memcheck.h>, not under ASan
//   none       otherwise (release)                   empty inline functions: the fast
//                                                    path is instruction for instruction
//                                                    the same (tests/hooks_cost)
//
// Allocation unpoisons exactly the REQUESTED bytes, not the class: a write one byte
// past the request is caught even though the block has room.
//
//   page_mapped        a fresh page's usable part joins the pool (nothing allocated)
//   page_unmapped      pool memory goes back to the OS: the tools forget what they were
//                      told of it, so that whoever maps those addresses next starts clean
//   block_allocated    a block leaves the pool for a caller who asked for `requested`
//   block_freed        a block comes back from a caller
//   block_resized      realloc kept the block in place with a new requested size
//   block_pushed       a block went on a free list (freed, or carved from a tail)
//   block_filled       a checked build wrote its fill pattern over a fresh block
//   load_link/store_link  the pool's own access to the link word of a free block
//   load_mark/store_mark  the pool's own access to the second word of a free block (the
//                      freed mark, pool/freed_mark.hpp)
//   load_word          a word of a block that may be free or live, read as it is (the
//                      word a freed mark checks)
//   clear_mark         the second word of a block leaving the pool is 0
//   region_handed_out  an arena handed out [p, p + bytes)
//   region_released    an arena took [p, p + bytes) back (release/reset/rewind)
#pragma once

#include "sta/detail/config.hpp" // STA_POOL_ASAN, STA_POOL_VALGRIND

#include <cstddef>
#include <cstdint>

#if STA_POOL_ASAN
#include <sanitizer/asan_interface.h>
#if defined(_MSC_VER) && !defined(__clang__)
#define STA_HOOK_NO_ASAN __declspec(no_sanitize_address) __declspec(noinline)
#else
#define STA_HOOK_NO_ASAN __attribute__((no_sanitize_address, noinline))
#endif
#else
#define STA_HOOK_NO_ASAN
#endif
#if STA_POOL_VALGRIND
#if !__has_include(<valgrind/memcheck.h>)
#error "STA_POOL_VALGRIND=1 needs <valgrind/memcheck.h> (Debian: package valgrind)"
#endif
#include <valgrind/memcheck.h>
#endif

namespace sta::detail::hooks {

/// True when a tool backend is compiled in.
inline constexpr bool active = STA_POOL_ASAN || STA_POOL_VALGRIND;

inline void page_mapped([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, bytes);
#endif
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_NOACCESS(p, bytes);
#endif
}

inline void page_unmapped([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, bytes); // ASan keeps a poisoned shadow past munmap
#endif
}

inline void block_allocated([[maybe_unused]] void* p, [[maybe_unused]] std::size_t requested,
                            [[maybe_unused]] std::size_t class_bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, class_bytes);
    ASAN_UNPOISON_MEMORY_REGION(p, requested);
#endif
#if STA_POOL_VALGRIND
    VALGRIND_MALLOCLIKE_BLOCK(p, requested, 0, 0);
#endif
}

inline void block_freed([[maybe_unused]] void* p,
                        [[maybe_unused]] std::size_t class_bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, class_bytes);
#endif
#if STA_POOL_VALGRIND
    VALGRIND_FREELIKE_BLOCK(p, 0);
#endif
}

inline void block_resized([[maybe_unused]] void* p, [[maybe_unused]] std::size_t old_requested,
                          [[maybe_unused]] std::size_t requested,
                          [[maybe_unused]] std::size_t class_bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, class_bytes);
    ASAN_UNPOISON_MEMORY_REGION(p, requested);
#endif
#if STA_POOL_VALGRIND
    if (old_requested != 0 && requested != 0) {
        VALGRIND_RESIZEINPLACE_BLOCK(p, old_requested, requested, 0);
    } else { // memcheck refuses to resize from or to 0 bytes; nothing to keep anyway
        VALGRIND_FREELIKE_BLOCK(p, 0);
        VALGRIND_MALLOCLIKE_BLOCK(p, requested, 0, 0);
    }
#endif
}

inline void block_pushed([[maybe_unused]] void* p,
                         [[maybe_unused]] std::size_t class_bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, class_bytes);
#endif
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_NOACCESS(p, class_bytes);
#endif
}

/// A checked build wrote fill_allocated over the `requested` bytes of a fresh block.
/// The pattern is for debuggers: to memcheck the bytes still hold no value, so that a
/// read of them is reported as uninitialised.
inline void block_filled([[maybe_unused]] void* p,
                         [[maybe_unused]] std::size_t requested) noexcept {
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(p, requested);
#endif
}

/// The link word of a free block, read by the pool itself (the block is poisoned).
STA_HOOK_NO_ASAN inline void* load_link(void* block) noexcept {
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_DEFINED(block, sizeof(void*));
    void* next = *static_cast<void**>(block);
    VALGRIND_MAKE_MEM_NOACCESS(block, sizeof(void*));
    return next;
#else
    return *static_cast<void**>(block);
#endif
}

STA_HOOK_NO_ASAN inline void store_link(void* block, void* next) noexcept {
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(block, sizeof(void*));
    *static_cast<void**>(block) = next;
    VALGRIND_MAKE_MEM_NOACCESS(block, sizeof(void*));
#else
    *static_cast<void**>(block) = next;
#endif
}

/// Word `index` of a block that may be free (poisoned) or live: the freed mark and the
/// word it checks (pool/freed_mark.hpp).
STA_HOOK_NO_ASAN inline std::uint64_t load_word(const void* block, std::size_t index) noexcept {
    const auto* const word = static_cast<const std::uint64_t*>(block) + index;
#if STA_POOL_VALGRIND
    // A live block's word may hold no value yet, a free one's is not accessible: read it
    // either way and leave memcheck's view of it as it was.
    unsigned char vbits[sizeof *word];
    const unsigned got = VALGRIND_GET_VBITS(word, vbits, sizeof *word); // 3: no access
    VALGRIND_MAKE_MEM_DEFINED(word, sizeof *word);
    const std::uint64_t value = *word;
    if (got == 3)
        VALGRIND_MAKE_MEM_NOACCESS(word, sizeof *word);
    else if (got == 1)
        (void)VALGRIND_SET_VBITS(word, vbits, sizeof *word);
    return value;
#else
    return *word;
#endif
}
/// The second word of a block that may be free: the freed mark's place.
STA_HOOK_NO_ASAN inline std::uint64_t load_mark(const void* block) noexcept {
    return load_word(block, 1);
}

/// The second word of a block just freed (poisoned) holds `mark`.
STA_HOOK_NO_ASAN inline void store_mark(void* block, std::uint64_t mark) noexcept {
    auto* const word = static_cast<std::uint64_t*>(block) + 1;
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(word, sizeof *word);
    *word = mark;
    VALGRIND_MAKE_MEM_NOACCESS(word, sizeof *word);
#else
    *word = mark;
#endif
}

/// The second word of a block leaving the pool (poisoned still: block_allocated comes
/// after) is 0.
STA_HOOK_NO_ASAN inline void clear_mark(void* block) noexcept {
    store_mark(block, 0);
}

inline void region_handed_out([[maybe_unused]] void* p,
                              [[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, bytes);
#endif
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(p, bytes);
#endif
}

inline void region_released([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if STA_POOL_ASAN
    ASAN_POISON_MEMORY_REGION(p, bytes);
#endif
#if STA_POOL_VALGRIND
    VALGRIND_MAKE_MEM_NOACCESS(p, bytes);
#endif
}

} // namespace sta::detail::hooks
