// sta-pool: memory from the operating system, in large pages.
//
// Linux: anonymous private mmap. Windows: VirtualAlloc (reserve + commit).
// Both return memory aligned to at least the OS page (4 KiB) and zero-filled, or
// nullptr when the OS refuses, or when the mapping would take the library past its
// memory limit (os/memory_account.hpp: every mapping here is counted in os_memory).
// Nothing here is ever called on a fast path.
#pragma once

#include "sta/detail/block_move.hpp"
#include "sta/detail/os/memory_account.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(_WIN32)
#include "sta/detail/os/windows.hpp"
#else
#include <sys/mman.h>
#endif

namespace sta::detail {

/// Signature of a page source: `bytes` of fresh memory, or nullptr.
using map_pages_fn = void* (*)(std::size_t bytes) noexcept;
using unmap_pages_fn = void (*)(void* p, std::size_t bytes) noexcept;

/// The OS's mapping calls, uncounted: os_map_pages and os_unmap_pages count them.
inline void* os_map_uncounted(std::size_t bytes) noexcept {
#if defined(_WIN32)
    return ::VirtualAlloc(nullptr, bytes, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
#else
    void* const p =
        ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
#endif
}
inline void os_unmap_uncounted(void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(_WIN32)
    ::VirtualFree(p, 0, MEM_RELEASE);
#else
    ::munmap(p, bytes);
#endif
}

inline void* os_map_pages(std::size_t bytes) noexcept {
    if (!os_memory.admit_mapping(bytes))
        return nullptr;
    void* const p = os_map_uncounted(bytes);
    if (p == nullptr)
        os_memory.unmapped(bytes);
    return p;
}

inline void os_unmap_pages(void* p, std::size_t bytes) noexcept {
    os_memory.unmapped(bytes);
    os_unmap_uncounted(p, bytes);
}

/// The OS page: every mapping starts on one (the arena relies on it for alignments up
/// to 4096 without padding), and a mapping's length is whole pages of it.
inline constexpr std::size_t os_page_bytes = 4096;
/// `bytes` rounded up to whole OS pages: the length of a mapping of its own.
constexpr std::size_t os_round_up(std::size_t bytes) noexcept {
    return (bytes + os_page_bytes - 1) & ~(os_page_bytes - 1);
}

/// Give the pages [p, p + bytes) (whole OS pages) back to the OS and keep the range:
/// Linux MADV_DONTNEED (the next touch of a page faults in a zero page), Windows
/// MEM_DECOMMIT (os_reuse_pages commits the range again before it is touched). Linux's
/// MADV_FREE was measured and not taken: its pages stay in the process's RSS until the
/// kernel needs them (docs/design.md, "Memory goes back").
inline void os_purge_pages(void* p, std::size_t bytes) noexcept {
#if defined(_WIN32)
    ::VirtualFree(p, bytes, MEM_DECOMMIT);
#else
    ::madvise(p, bytes, MADV_DONTNEED);
#endif
}

/// Fresh pages that will be used later, a part at a time: given the state of purged
/// pages (os_reuse_pages before use). Windows decommits them, so that only the parts in
/// use count against the commit limit; elsewhere fresh pages are not resident until
/// touched, and nothing is done.
inline void os_leave_unused([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(_WIN32)
    ::VirtualFree(p, bytes, MEM_DECOMMIT);
#endif
}

/// Purged pages made usable again: Windows commits them (false when the OS refuses the
/// commit); elsewhere there is nothing to do.
inline bool os_reuse_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(_WIN32)
    return ::VirtualAlloc(p, bytes, MEM_COMMIT, PAGE_READWRITE) != nullptr;
#else
    return true;
#endif
}

/// How many bytes of the pages [p, p + bytes) are resident now: Linux mincore; Windows
/// the committed bytes (VirtualQuery), an upper bound. For statistics and tests only.
inline std::size_t os_resident_bytes(const void* p, std::size_t bytes) noexcept {
    std::size_t resident = 0;
#if defined(_WIN32)
    auto* at = static_cast<const std::byte*>(p);
    const auto* const end = at + bytes;
    while (at < end) {
        MEMORY_BASIC_INFORMATION info{};
        if (::VirtualQuery(at, &info, sizeof info) == 0)
            break;
        const auto* const region_end =
            static_cast<const std::byte*>(info.BaseAddress) + info.RegionSize;
        const auto* const stop = region_end < end ? region_end : end;
        if (info.State == MEM_COMMIT)
            resident += static_cast<std::size_t>(stop - at);
        at = stop;
    }
#else
    unsigned char pages[256];
    auto* at = const_cast<std::byte*>(static_cast<const std::byte*>(p));
    for (std::size_t done = 0; done < bytes;) {
        const std::size_t n = bytes - done < sizeof pages * os_page_bytes
                                  ? bytes - done
                                  : sizeof pages * os_page_bytes;
        if (::mincore(at + done, n, pages) != 0)
            return resident; // not mapped (any more): nothing of it is resident
        for (std::size_t i = 0; i < (n + os_page_bytes - 1) / os_page_bytes; ++i)
            resident += (pages[i] & 1u) != 0 ? os_page_bytes : 0;
        done += n;
    }
#endif
    return resident;
}

/// The pages [p, p + old_bytes) resized to `bytes` (both multiples of os_page_bytes),
/// moved if they must be; their contents are kept up to the smaller size and the rest is
/// zero. nullptr on failure, and then `p` is untouched. Linux: mremap, which refuses a
/// range of more than one kernel mapping (the retained mappings join neighbouring
/// ranges, which the kernel may keep apart); then, as elsewhere, a new mapping, a copy
/// and an unmap.
inline void* os_remap_pages(void* p, std::size_t old_bytes, std::size_t bytes) noexcept {
#if defined(__linux__)
    const bool grows = bytes > old_bytes;
    if (grows && !os_memory.admit_mapping(bytes - old_bytes))
        return nullptr; // past the limit: a move would be refused too
    void* const moved = ::mremap(p, old_bytes, bytes, MREMAP_MAYMOVE);
    if (moved != MAP_FAILED) {
        if (!grows)
            os_memory.unmapped(old_bytes - bytes);
        return moved;
    }
    if (grows)
        os_memory.unmapped(bytes - old_bytes); // the move below counts its own mapping
#endif
    return move_block(
        p, old_bytes, bytes, [bytes] { return os_map_pages(bytes); },
        [p, old_bytes] { os_unmap_pages(p, old_bytes); });
}

/// The pages [from, from + bytes) of one mapping move to [to, to + bytes), whatever was
/// there given back (Linux's mremap with MREMAP_FIXED: no copy, no fault); false when the
/// kernel refuses (the range spans two mappings, say): nothing moved. Elsewhere: false.
inline bool os_move_pages([[maybe_unused]] void* from, [[maybe_unused]] std::size_t bytes,
                          [[maybe_unused]] void* to) noexcept {
#if defined(__linux__)
    return ::mremap(from, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED;
#else
    return false;
#endif
}

/// Memory that had the advice of huge pages (advise_pages) takes plain pages from now
/// on: a fault in a range whose pages were all given back would bring in 2 MiB again,
/// and the kernel's khugepaged would gather the pages left into huge pages. Linux only.
inline void advise_plain_pages([[maybe_unused]] void* p,
                               [[maybe_unused]] std::size_t bytes) noexcept {
#if defined(__linux__)
    ::madvise(p, bytes, MADV_NOHUGEPAGE);
#endif
}

/// Advice for fresh memory: back it with transparent huge pages, and/or fill in its
/// pages now. Linux only (Windows: nothing); best effort, a refusal changes nothing.
inline void advise_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes,
                         [[maybe_unused]] bool huge, [[maybe_unused]] bool prefault) noexcept {
#if defined(__linux__)
    if (huge)
        ::madvise(p, bytes, MADV_HUGEPAGE);
    if (prefault) {
        constexpr int populate_write = 23; // MADV_POPULATE_WRITE, Linux 5.14
        if (::madvise(p, bytes, populate_write) != 0) {
            for (std::size_t at = 0; at < bytes; at += 4096) // older kernels: touch
                static_cast<volatile char*>(p)[at] = 0;
        }
    }
#endif
}

/// `bytes` of fresh memory aligned to `alignment` (a power of two, a multiple of the OS
/// page), from `map`: it maps bytes + alignment and, on Linux, gives back the parts
/// before and after the aligned range. On Windows a mapping is released whole only: the
/// OS's own pages are asked for at an aligned address, so that the block is a mapping
/// of its own; another source's spare part stays reserved (never touched).
inline void* map_aligned(map_pages_fn map, std::size_t bytes, std::size_t alignment) noexcept {
#if defined(_WIN32)
    if (map == &os_map_pages) {
        // An allocation of its own at an aligned address, so that os_unmap_pages can
        // release it: find the address in a larger reservation, release that, and ask
        // for the address (another thread may take it meanwhile: then again).
        for (int attempt = 0; attempt < 16; ++attempt) {
            void* const probe =
                ::VirtualAlloc(nullptr, bytes + alignment, MEM_RESERVE, PAGE_NOACCESS);
            if (probe == nullptr)
                return nullptr;
            const std::uintptr_t at =
                (reinterpret_cast<std::uintptr_t>(probe) + alignment - 1) & ~(alignment - 1);
            ::VirtualFree(probe, 0, MEM_RELEASE);
            if (!os_memory.admit_mapping(bytes))
                return nullptr;
            if (void* const p = ::VirtualAlloc(reinterpret_cast<void*>(at), bytes,
                                               MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE))
                return p;
            os_memory.unmapped(bytes);
        }
    }
#endif
    // The OS's own pages: only the aligned part counts (MA1), so that the spare part,
    // given back at once, never meets the memory limit.
    const bool counted = map == &os_map_pages;
    if (counted && !os_memory.admit_mapping(bytes))
        return nullptr;
    auto* const raw = static_cast<std::byte*>(counted ? os_map_uncounted(bytes + alignment)
                                                      : map(bytes + alignment));
    if (raw == nullptr) {
        if (counted)
            os_memory.unmapped(bytes);
        return nullptr;
    }
    const auto a = reinterpret_cast<std::uintptr_t>(raw);
    const std::size_t lead = (alignment - (a & (alignment - 1))) & (alignment - 1);
#if !defined(_WIN32)
    const auto unmap_spare = counted ? &os_unmap_uncounted : &os_unmap_pages;
    if (lead != 0)
        unmap_spare(raw, lead);
    unmap_spare(raw + lead + bytes, alignment - lead);
#endif
    return raw + lead;
}

/// The guard below an os_map_aligned_guarded range: a page on Linux; on Windows the
/// allocation granularity (64 KiB), the least a reservation can start below the range.
#if defined(_WIN32)
inline constexpr std::size_t os_guard_bytes = std::size_t{64} << 10;
#else
inline constexpr std::size_t os_guard_bytes = os_page_bytes;
#endif

/// map_aligned's OS pages with a guard below them: os_guard_bytes of no access right
/// before the aligned range, so that a write running past the end of whatever lies below
/// (a block of another mapping, the segment below) stops there and never reaches the
/// range's first bytes (a segment's headers, layout/span_types.hpp). It costs no memory,
/// an area of the process's map, and on Linux an mprotect; only the range counts (MA1).
/// Linux: the guard page is mprotected out of an aligned mapping. Windows: one
/// reservation of the guard and the range, found at an aligned address as map_aligned's
/// (the guard stays reserved, never committed). Given back by os_unmap_guarded.
inline void* os_map_aligned_guarded(std::size_t bytes, std::size_t alignment) noexcept {
#if defined(_WIN32)
    for (int attempt = 0; attempt < 16; ++attempt) { // another thread may take the address
        void* const probe =
            ::VirtualAlloc(nullptr, bytes + alignment + os_guard_bytes, MEM_RESERVE, PAGE_NOACCESS);
        if (probe == nullptr)
            return nullptr;
        const std::uintptr_t at =
            (reinterpret_cast<std::uintptr_t>(probe) + os_guard_bytes + alignment - 1) &
            ~(alignment - 1);
        ::VirtualFree(probe, 0, MEM_RELEASE);
        if (!os_memory.admit_mapping(bytes))
            return nullptr;
        if (void* const base = ::VirtualAlloc(reinterpret_cast<void*>(at - os_guard_bytes),
                                              bytes + os_guard_bytes, MEM_RESERVE, PAGE_NOACCESS)) {
            if (::VirtualAlloc(reinterpret_cast<void*>(at), bytes, MEM_COMMIT, PAGE_READWRITE))
                return reinterpret_cast<void*>(at);
            ::VirtualFree(base, 0, MEM_RELEASE);
        }
        os_memory.unmapped(bytes);
    }
    return nullptr;
#else
    if (!os_memory.admit_mapping(bytes))
        return nullptr;
    auto* const raw = static_cast<std::byte*>(os_map_uncounted(bytes + alignment + os_page_bytes));
    if (raw == nullptr) {
        os_memory.unmapped(bytes);
        return nullptr;
    }
    const auto a = reinterpret_cast<std::uintptr_t>(raw) + os_page_bytes;
    const std::size_t lead = (alignment - (a & (alignment - 1))) & (alignment - 1);
    std::byte* const start = raw + os_page_bytes + lead;
    if (lead != 0)
        os_unmap_uncounted(raw, lead);
    os_unmap_uncounted(start + bytes, alignment - lead);
    (void)::mprotect(start - os_page_bytes, os_page_bytes, PROT_NONE); // refused: unguarded
    return start;
#endif
}
/// A range of os_map_aligned_guarded goes back to the OS, its guard with it.
inline void os_unmap_guarded(void* p, std::size_t bytes) noexcept {
    os_memory.unmapped(bytes);
    os_unmap_uncounted(static_cast<std::byte*>(p) - os_guard_bytes, bytes + os_guard_bytes);
}

/// A transparent huge page on x86-64 Linux: the alignment a big mapping takes so that
/// each aligned 2 MiB of it may be one.
inline constexpr std::size_t os_huge_page_bytes = std::size_t{2} << 20;

/// The pages of a big block (`bytes`, a multiple of os_page_bytes). With `huge`, a mapping
/// of os_huge_page_bytes or more is aligned to it and advised transparent huge pages: each
/// aligned 2 MiB of it that the program touches costs one fault where plain pages cost
/// 512 (a 4 MiB vector filled at start-up: 2 faults, not 1,024). Its tail below the last
/// 2 MiB boundary keeps plain pages, so what is resident beyond a plain mapping's is at
/// most the untouched part of the huge pages touched. Linux only; elsewhere, and without
/// `huge`, a plain mapping.
inline void* os_map_big_pages(std::size_t bytes, [[maybe_unused]] bool huge) noexcept {
#if defined(__linux__)
    if (huge && bytes >= os_huge_page_bytes) {
        void* const p = map_aligned(&os_map_pages, bytes, os_huge_page_bytes);
        if (p != nullptr)
            advise_pages(p, bytes, true, false);
        return p;
    }
#endif
    return os_map_pages(bytes);
}

} // namespace sta::detail
