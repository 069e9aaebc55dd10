// sta-pool: blocks between guard pages — the hardened drop-in's big blocks and its sampled
// allocations (c_api/hardened_heap.hpp). Each block is a mapping of its own (Linux):
//
//   +-------+--------+----------------------------------------+-------+
//   | guard | record | data pages: ... [header | block      ] | guard |
//   +-------+--------+----------------------------------------+-------+
//   no access                                   the block ends at  no access
//                                               the data's end, rounded down to
//                                               its alignment: a write past it faults
//
//   header (the 16 bytes before the block; on the record page when the block starts a
//   page):   [ header_tag(p) ^ guarded_live_lead | the bytes asked for ]
//   record (the page before the block's first page, the mapping's own):
//            [ the mapping's start | its length ]
//
// Invariants:
//  GB1 A live guarded block's header decodes to guarded_live_lead (c_api/c_common.hpp's
//      tag: a program cannot write one without the process's secret); no other block's
//      header decodes to it (c_span_heap's leads are 0, header_freed, or a power of two
//      of 16 or more).
//  GB2 A freed sampled block's data pages lose all access and their memory at once (a read
//      or write after free faults), its header, where it lies on the record page, decodes
//      to guarded_freed_lead, and its mapping stays reserved until 64 later frees of
//      sampled blocks have come (guarded_freed), then goes back to the OS.
//  GB3 A freed big block's mapping is kept as it is, its guard pages around it and its
//      header decoding to guarded_freed_lead, in guarded_kept (at most 4 mappings of up
//      to max_kept_bytes: 64 MiB at the most): the next big block that fits one within a
//      quarter takes it again (no system call, where a new mapping costs a fault a page);
//      its header then decodes to guarded_reused_lead, and its bytes are the last
//      owner's (calloc clears them: only guarded_live_lead is zero already). A use after
//      free of a big block is not caught.
#pragma once

#include "sta/detail/c_api/c_common.hpp"
#include "sta/detail/os/pages.hpp"
#include "sta/detail/pool/state.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

#if !defined(_WIN32)
#include <sys/mman.h>
#endif

namespace sta::detail {

/// The header leads of guarded blocks (GB1, GB2): between header_freed and the aligned
/// blocks' leads of 16 or more.
inline constexpr std::size_t guarded_live_lead = 2;
inline constexpr std::size_t guarded_freed_lead = 3;
inline constexpr std::size_t guarded_reused_lead = 4;
static_assert(guarded_live_lead != header_freed && guarded_freed_lead != header_freed &&
              guarded_reused_lead != header_freed && guarded_reused_lead < 16);

/// A guarded block's mapping (the record page holds it).
struct guarded_mapping {
    std::byte* base = nullptr;
    std::size_t length = 0;
};
/// The last N mappings put in, under a lock: put() returns the one it pushes out (the
/// oldest; none while a slot is free). The freed sampled blocks' mappings, reserved
/// without access (GB2), and the big blocks' mappings kept for reuse (GB3).
template <std::size_t N>
struct guarded_ring {
    static constexpr std::size_t slots = N;
    spin_lock lock;
    guarded_mapping slot[N] = {};
    std::size_t next = 0; // the slot a full ring gives up next

    guarded_mapping put(guarded_mapping r) noexcept {
        const spin_guard held(lock);
        std::size_t at = 0;
        while (at < N && slot[at].base != nullptr)
            ++at;
        if (at == N) { // full: the oldest goes
            at = next;
            next = (next + 1) % N;
        }
        const guarded_mapping out = slot[at];
        slot[at] = r;
        return out;
    }
};
inline constinit guarded_ring<64> guarded_freed{};
/// GB3: at most 4 mappings of max_kept_bytes each.
inline constinit guarded_ring<4> guarded_kept{};
inline constexpr std::size_t max_kept_bytes = std::size_t{16} << 20;

struct guarded_block {

    /// The lead p's header decodes to (it must lie in readable memory: the caller knows p
    /// is no pooled block).
    static std::size_t lead_of(const void* p) noexcept {
        std::size_t word;
        std::memcpy(&word, static_cast<const std::byte*>(p) - 16, sizeof word);
        return word ^ header_tag(p);
    }
    /// The bytes asked for (GB1).
    static std::size_t size_of(const void* p) noexcept {
        std::size_t bytes;
        std::memcpy(&bytes, static_cast<const std::byte*>(p) - 8, sizeof bytes);
        return bytes;
    }

    /// `bytes` aligned to `alignment` (a power of two up to a page), ending at the end of
    /// its data pages, between guard pages; nullptr when the OS refuses.
    static void* alloc(std::size_t bytes, std::size_t alignment) noexcept {
#if defined(_WIN32)
        (void)bytes, (void)alignment;
        return nullptr;
#else
        const std::size_t data = os_round_up(bytes + alignment - 1);
        if (void* const p = reuse(bytes, alignment, data))
            return p;
        const std::size_t length = data + 3 * os_page_bytes;
        if (!os_memory.admit_mapping(data + os_page_bytes))
            return nullptr;
        void* const reserved =
            ::mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        auto* const base = static_cast<std::byte*>(reserved);
        if (reserved == MAP_FAILED ||
            ::mprotect(base + os_page_bytes, data + os_page_bytes, PROT_READ | PROT_WRITE) != 0) {
            if (reserved != MAP_FAILED)
                ::munmap(reserved, length);
            os_memory.unmapped(data + os_page_bytes);
            return nullptr;
        }
        os_memory.big_taken(data + os_page_bytes);
        return place({base, length}, bytes, alignment, guarded_live_lead);
#endif
    }

    /// A live guarded block (GB1) is freed (GB2); a big one's mapping is kept (GB3).
    static void free(void* p, bool big) noexcept {
#if !defined(_WIN32)
        guarded_mapping r;
        std::memcpy(&r, record_of(p), sizeof r);
        auto* const first = static_cast<std::byte*>(record_of(p)) + os_page_bytes;
        const std::size_t counted = r.length - 2 * os_page_bytes;
        os_memory.big_freed(counted);
        const bool kept = big && r.length <= max_kept_bytes; // GB3: kept as it is
        // The header says freed where it stays readable: a kept mapping, the record page.
        if (kept || reinterpret_cast<std::uintptr_t>(p) % os_page_bytes == 0) {
            const std::size_t word = header_tag(p) ^ guarded_freed_lead;
            std::memcpy(static_cast<std::byte*>(p) - 16, &word, sizeof word);
        }
        if (kept) {
            if (const guarded_mapping out = guarded_kept.put(r); out.base != nullptr)
                give_back(out);
            return;
        }
        // The data pages: no access, no memory (one call: a fresh mapping over them).
        (void)::mmap(first, r.base + r.length - os_page_bytes - first, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
        os_memory.unmapped(counted);
        if (const guarded_mapping out = guarded_freed.put(r); out.base != nullptr)
            ::munmap(out.base, out.length);
#else
        (void)p;
#endif
    }

  private:
    /// The block of `bytes` in mapping r: its record, its header with `lead` (GB1, GB3).
    static void* place(guarded_mapping r, std::size_t bytes, std::size_t alignment,
                       std::size_t lead) noexcept {
        std::byte* const end = r.base + r.length - os_page_bytes;
        auto* const p = reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(end - bytes) &
                                                     ~(alignment - 1));
        std::memcpy(record_of(p), &r, sizeof r);
        const std::size_t word = header_tag(p) ^ lead;
        std::memcpy(p - 16, &word, sizeof word);
        std::memcpy(p - 8, &bytes, sizeof bytes);
        return p;
    }
    /// A kept mapping whose data pages hold `data` bytes within a quarter, taken again
    /// (GB3); nullptr when none fits.
    static void* reuse(std::size_t bytes, std::size_t alignment, std::size_t data) noexcept {
#if defined(_WIN32)
        (void)bytes, (void)alignment, (void)data;
        return nullptr;
#else
        guarded_mapping r{};
        {
            const spin_guard held(guarded_kept.lock);
            for (guarded_mapping& k : guarded_kept.slot) {
                const std::size_t has = k.length - 3 * os_page_bytes;
                if (k.base != nullptr && has >= data && has - data <= data / 4) {
                    r = k;
                    k = {};
                    break;
                }
            }
        }
        if (r.base == nullptr)
            return nullptr;
        os_memory.big_taken(r.length - 2 * os_page_bytes);
        return place(r, bytes, alignment, guarded_reused_lead);
#endif
    }
    /// A kept mapping goes back to the OS.
    static void give_back(guarded_mapping r) noexcept {
#if !defined(_WIN32)
        os_memory.unmapped(r.length - 2 * os_page_bytes);
        ::munmap(r.base, r.length);
#else
        (void)r;
#endif
    }
    static void* record_of(const void* p) noexcept {
        return reinterpret_cast<void*>(
            (reinterpret_cast<std::uintptr_t>(p) & ~(os_page_bytes - 1)) - os_page_bytes);
    }

  public:
    /// fork(): no other thread holds the ring's lock in the child.
    static void before_fork() noexcept {
        guarded_freed.lock.lock();
        guarded_kept.lock.lock();
    }
    static void after_fork() noexcept {
        guarded_kept.lock.unlock();
        guarded_freed.lock.unlock();
    }
};

} // namespace sta::detail
