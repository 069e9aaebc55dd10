// sta-pool: the C library's allocation functions with glibc's and POSIX's semantics,
// over a per-thread pool of the span layout — what the drop-in malloc (src/malloc,
// libsta_malloc.so) exports as malloc, free, calloc, realloc, the memalign family and
// operator new / delete. A header so that the tests can run it in-process too.
//
// malloc_heap<Pool> is c_span_heap<Pool> (c_api/span_heap.hpp: pooled blocks without a header,
// poor fits in the private heap, big blocks with a 16-byte header) plus:
//
//   malloc(0), memalign(a, 0), ...   a unique 16-byte block, as glibc (not NULL)
//   alignment <= 16                  malloc: every block is 16-aligned
//   16 < a <= 4096, n rounded up to a multiple of a <= 32 KiB
//                                    the pooled class of that multiple: it is a multiple
//                                    of a (pool/size_class.hpp, aligned_request), and a
//                                    span's blocks lie at multiples of their class from a
//                                    64 KiB-aligned start, so the block is a-aligned
//   otherwise (aligned)              a mapping of its own from the OS
//                                    (aligned_os_block, c_api/span_heap.hpp: c_span_heap's tier
//                                    CS4, so free, realloc and usable_size are its)
//
// Every block handed out is one of c_span_heap's (CS1-CS4): free, realloc and
// malloc_usable_size are c_span_heap's, with glibc's answers for NULL and 0 around them.
//
// errno: ENOMEM on every failure to find memory, EINVAL for an alignment glibc refuses;
// posix_memalign returns the error number instead and leaves errno and *out alone.
#pragma once

#include "sta/detail/c_api/span_heap.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/segment_map.hpp"
#include "sta/detail/pool/size_class.hpp"

#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sta::detail {

/// The drop-in's refusals name it and glibc's functions.
struct malloc_names {
    static constexpr const char* library = "sta_malloc";
    static constexpr const char* free = "free()";
    static constexpr const char* realloc = "realloc()";
    static constexpr const char* usable_size = "malloc_usable_size()";
};

/// The C functions a drop-in heap derives from its own malloc, realloc and memalign
/// (CRTP: the default heap below, the hardened one of c_api/hardened_heap.hpp): calloc,
/// reallocarray, posix_memalign, valloc and pvalloc. Heap::zero_already(p, bytes) says
/// that malloc's block p is zero already (fresh from the OS).
template <class Heap>
struct c_derived_functions {
    static void* calloc(std::size_t count, std::size_t size) noexcept {
        std::size_t bytes;
        if (__builtin_mul_overflow(count, size, &bytes))
            return out_of_memory();
        void* const p = Heap::malloc(bytes);
        if (p != nullptr && !Heap::zero_already(p, bytes))
            std::memset(p, 0, bytes);
        return p;
    }

    static void* reallocarray(void* p, std::size_t count, std::size_t size) noexcept {
        std::size_t bytes;
        if (__builtin_mul_overflow(count, size, &bytes))
            return out_of_memory();
        return Heap::realloc(p, bytes);
    }

    /// POSIX: EINVAL unless the alignment is a power of two and a multiple of
    /// sizeof(void*); ENOMEM without memory; *out is set only on success.
    static int posix_memalign(void** out, std::size_t alignment, std::size_t bytes) noexcept {
        if (alignment == 0 || alignment % sizeof(void*) != 0 || !std::has_single_bit(alignment))
            return EINVAL;
        const int saved = errno;
        void* const p = Heap::memalign(alignment, bytes);
        errno = saved;
        if (p == nullptr)
            return ENOMEM;
        *out = p;
        return 0;
    }

    static void* valloc(std::size_t bytes) noexcept { return Heap::memalign(os_page_bytes, bytes); }

    /// valloc of the size rounded up to whole pages (one page for 0).
    static void* pvalloc(std::size_t bytes) noexcept {
        if (bytes > Heap::max_request - os_page_bytes)
            return out_of_memory();
        const std::size_t pages = os_round_up(bytes);
        return Heap::memalign(os_page_bytes, pages == 0 ? os_page_bytes : pages);
    }
};

template <class Pool>
struct malloc_heap : c_derived_functions<malloc_heap<Pool>> {
    using span_heap = c_span_heap<Pool, malloc_names>;
    static constexpr std::size_t max_request = span_heap::max_request;
    /// Alignments up to this much come from a pooled class (the table above).
    static constexpr std::size_t pooled_align_max = 4096;

    /// 0 bytes take 1 (glibc's malloc(0) is a pointer to free) off the fast path. malloc
    /// and free are forced inline, as c_span_heap's (its comment says why); the rest of
    /// malloc is out of line, so that the inline part saves no register.
    STA_FORCE_INLINE static void* malloc(std::size_t bytes) noexcept {
        if (bytes - 1 < span_heap::fast_limit) [[likely]]
            return span_heap::malloc(bytes);
        return malloc_off_the_fast_path(bytes);
    }

    STA_FORCE_INLINE static void free(void* p) noexcept { span_heap::free(p); }

    /// malloc(bytes) from its class for 1 <= bytes <= the fast path's limit, `held` set to
    /// the class's bytes (good_size's; the hardened heap's: one look at the class for
    /// both); nullptr above it, or when the pool is out of memory.
    STA_FORCE_INLINE static void* malloc_pooled(std::size_t bytes, std::size_t& held,
                                                std::uint32_t& slot) noexcept {
        if (bytes - 1 >= span_heap::fast_limit)
            return nullptr;
        slot = span_heap::pooled_slot(bytes);
        held = bytes_by_slot[slot];
        return Pool::alloc_class(slot);
    }
    /// malloc_trim: free memory back to the OS now (Pool::trim); the bytes given back.
    static std::size_t trim() noexcept { return Pool::trim(); }
    /// Another block of the class at `slot` (of malloc_pooled), or nullptr.
    static void* malloc_slot(std::uint32_t slot) noexcept { return Pool::alloc_class(slot); }
    /// Requests up to this many bytes take malloc's fast path (their class).
    static constexpr std::size_t fast_limit = span_heap::fast_limit;

    /// The sized free of operator delete: a block of `bytes` from malloc(bytes) up to
    /// fast_limit is a pooled block of pooled_slot(bytes), found without reading its span.
    /// With the release checks on it is free(p): the span checks the block.
    static void free_sized(void* p, std::size_t bytes) noexcept {
        if (p != nullptr && bytes - 1 < span_heap::fast_limit && !c_release_checks) [[likely]]
            return Pool::free_class(p, span_heap::pooled_slot(bytes));
        free(p); // 0 (malloc's 1 byte) and above fast_limit: the span, or the header, says
    }

    /// C23's free_sized(p, bytes): `bytes` as malloc, calloc or realloc was asked (0 for
    /// malloc(0)'s block). Checked as c_span_heap's free_described checks.
    static void free_sized_c23(void* p, std::size_t bytes) noexcept {
        span_heap::free_described(p, at_least_one(bytes), 1, "free_sized()");
    }
    /// C23's free_aligned_sized(p, alignment, bytes): aligned_alloc's arguments. The
    /// alignment is taken as memalign takes it: rounded up to a power of two.
    static void free_aligned_sized(void* p, std::size_t alignment, std::size_t bytes) noexcept {
        const std::size_t align =
            alignment <= 1 || alignment > SIZE_MAX / 2 + 1 ? 1 : std::bit_ceil(alignment);
        span_heap::free_described(p, at_least_one(bytes), align, "free_aligned_sized()");
    }

    /// malloc_good_size (jemalloc's, macOS's): what malloc(bytes) gives room for —
    /// malloc_usable_size of the block it would return.
    static std::size_t good_size(std::size_t bytes) noexcept {
        return span_heap::good_size(at_least_one(bytes));
    }

    static void* realloc(void* p, std::size_t bytes) noexcept {
        if (p == nullptr)
            return malloc(bytes);
        return span_heap::realloc(p, bytes); // bytes == 0 frees p and returns NULL
    }

    /// glibc's memalign (and aligned_alloc, which is the same function in glibc 2.36):
    /// an alignment that is no power of two is rounded up to one; one above
    /// SIZE_MAX / 2 + 1 fails with EINVAL.
    static void* memalign(std::size_t alignment, std::size_t bytes) noexcept {
        if (alignment <= 16)
            return malloc(bytes);
        if (alignment > SIZE_MAX / 2 + 1) {
            errno = EINVAL;
            return nullptr;
        }
        alignment = std::bit_ceil(alignment);
        bytes = at_least_one(bytes);
        if (bytes > max_request - alignment)
            return out_of_memory();
        if (alignment <= pooled_align_max && aligned_request(bytes, alignment) <= max_class_bytes) {
            void* const p =
                Pool::alloc_class(span_heap::pooled_slot(aligned_request(bytes, alignment)));
            return p != nullptr ? p : out_of_memory();
        }
        void* const p = aligned_os_block::alloc(alignment, bytes);
        return p != nullptr ? p : out_of_memory();
    }

    static std::size_t usable_size(const void* p) noexcept { return span_heap::usable_size(p); }
    /// The class bytes of p when it is a pooled block's start (live or not), else 0 (the
    /// hardened heap's fast test).
    STA_FORCE_INLINE static std::size_t pooled_block_held(const void* p) noexcept {
        return span_heap::pooled_block_held(p);
    }
    /// A live pooled block the caller has checked, of `held` bytes (pooled_block_held's),
    /// onto its class's cache without a look at its span (the hardened quarantine's).
    STA_FORCE_INLINE static void free_pooled(void* p, std::size_t held) noexcept {
        Pool::free_class(p, span_heap::pooled_slot(held));
    }
    /// usable_size of a block the caller knows is live, unchecked (the hardened heap's).
    static std::size_t held_bytes(const void* p) noexcept { return span_heap::held_bytes(p); }
    /// The release checks of realloc and usable_size: p is a live block's start, else one
    /// line naming `function`, abort.
    static void check_live(const void* p, const char* function) noexcept {
        span_heap::require_live(p, function);
    }

  private:
    /// Each class's bytes by its slot: one load where bytes_of_slot computes.
    static constexpr auto bytes_by_slot = [] {
        std::array<std::uint32_t, class_slots> a{};
        for (std::uint32_t n = 0; n < Pool::classes::count; ++n) {
            const std::uint32_t slot = Pool::classes::slot_of_ordinal(n);
            a[slot] = static_cast<std::uint32_t>(Pool::classes::bytes_of_slot(slot));
        }
        return a;
    }();

    STA_NOINLINE static void* malloc_off_the_fast_path(std::size_t bytes) noexcept {
        return span_heap::malloc(at_least_one(bytes));
    }
    static constexpr std::size_t at_least_one(std::size_t bytes) noexcept {
        return bytes == 0 ? 1 : bytes;
    }

  public:
    /// The block malloc just gave for this size came from a fresh OS mapping, already
    /// zero: the big tier maps every block of its own (STA_POOL_BIG_FROM_OS) unless it
    /// reused a retained mapping (heaps/retained_mappings.hpp). calloc's test.
    static bool zero_already(const void*, std::size_t bytes) noexcept {
        return STA_POOL_BIG_FROM_OS != 0 && bytes > max_class_bytes &&
               bytes + c_span_header_bytes > Pool::page_bytes() / 2 &&
               !next_tiers<typename Pool::engine>::last_big_was_retained();
    }
};

} // namespace sta::detail
