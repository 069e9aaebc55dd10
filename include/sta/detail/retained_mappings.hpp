// sta-pool: big mappings kept after their free, for the next big request — the drop-in
// malloc's tier above page_bytes / 2 maps every block of its own (STA_POOL_BIG_FROM_OS,
// next_tiers.hpp), and a program that frees and allocates a large buffer again and
// again would otherwise pay a page fault per 4 KiB each time (glibc moves such sizes
// into its heap; mimalloc keeps its segments).
//
//   free of a big block:   keep it here (the oldest unmapped while over the limits)
//   big request of n:      the smallest kept mapping of n or more, its tail unmapped;
//                          else the largest, grown by mremap; else a fresh mapping
//   a new pool segment:    everything kept is unmapped first, so that memory kept for
//                          big blocks never sits beside new memory for small ones
//
// Each pool state keeps its own (the freeing thread's): no lock, and fork() leaves the
// child's intact. Linux (the drop-in's platform): a tail is unmapped with munmap,
// which Windows' VirtualFree cannot do. A kept mapping is not zero: the last take() says whether it handed
// one out (calloc clears it then; a fresh mapping is zero already).
//
// Invariants:
//  RM1 start[0..count) are mappings of length[i] bytes (whole OS pages), each a big
//      block that was freed and not handed out again; nothing else refers to them.
//  RM2 held is the sum of length[0..count); count <= max_count, and held <= the limit
//      (retained_limit_bytes) when keep() returns.
//  RM3 entries are in the order they were kept, oldest first.
#pragma once

#include "sta/detail/page_source.hpp"

#include <atomic>
#include <cstddef>

namespace sta::detail {

/// The most a pool state keeps (RM2): 64 MiB unless the program sets it (the drop-in's
/// STA_MALLOC_RETAIN_MIB); 0 keeps nothing.
inline std::atomic<std::size_t> retained_limit_bytes{std::size_t{64} << 20};

struct retained_mappings {
    static constexpr std::size_t max_count = 8;

    void* start[max_count] = {};        // RM1, RM3
    std::size_t length[max_count] = {}; // RM1
    std::size_t count = 0;              // RM2
    std::size_t held = 0;               // RM2
    bool last_taken = false;            // the last take() handed out a kept mapping

    /// Keep a freed mapping of `bytes` (whole pages). False when it is not kept (larger
    /// than the limit): the caller unmaps it.
    bool keep(void* p, std::size_t bytes) noexcept {
        const std::size_t limit = retained_limit_bytes.load(std::memory_order_relaxed);
        if (bytes > limit)
            return false;
        while (count == max_count || held + bytes > limit)
            drop(0); // the oldest (RM3); terminates: bytes <= limit
        start[count] = p;
        length[count] = bytes;
        ++count;
        held += bytes;
        return true;
    }

    /// A mapping of exactly `bytes` (whole pages) made from a kept one, or nullptr when
    /// none is kept (or mremap refuses).
    void* take(std::size_t bytes) noexcept {
        last_taken = false;
        if (count == 0)
            return nullptr;
        std::size_t fit = count, largest = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (length[i] >= bytes && (fit == count || length[i] < length[fit]))
                fit = i;
            if (length[i] > length[largest])
                largest = i;
        }
        void* p;
        if (fit != count) {
            p = start[fit];
            if (length[fit] > bytes)
                os_unmap_pages(static_cast<std::byte*>(p) + bytes, length[fit] - bytes);
        } else {
            fit = largest;
            p = os_remap_pages(start[fit], length[fit], bytes);
            if (p == nullptr)
                return nullptr;
        }
        remove(fit);
        last_taken = true;
        return p;
    }

    /// Unmap everything kept.
    void release_all() noexcept {
        while (count != 0)
            drop(count - 1);
    }

  private:
    void drop(std::size_t i) noexcept {
        os_unmap_pages(start[i], length[i]);
        remove(i);
    }
    void remove(std::size_t i) noexcept {
        held -= length[i];
        --count;
        for (; i < count; ++i) { // RM3: the order stays
            start[i] = start[i + 1];
            length[i] = length[i + 1];
        }
    }
};

} // namespace sta::detail
