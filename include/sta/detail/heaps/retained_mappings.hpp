// sta-pool: big mappings kept after their free, for the next big request — the drop-in
// malloc's tier above page_bytes / 2 maps every block of its own (STA_POOL_BIG_FROM_OS,
// pool/next_tiers.hpp), and a program that frees and allocates a large buffer again and
// again, or grows one with realloc, would otherwise pay a page fault per 4 KiB each
// time (glibc serves such sizes from its heap once it has seen them freed; mimalloc
// keeps its segments).
//
//   free of a big block:    keep its pages (joined to a kept range they touch); the
//                           oldest ranges are unmapped while over the byte limit, the
//                           smallest when all max_count entries are taken
//   big request of n:       the front of the smallest kept range of n or more (the
//                           rest stays kept); else the largest, grown by mremap when it
//                           lacks at most an eighth of its length; else a fresh mapping
//   realloc growing a block whose pages a kept range follows: the block takes the
//                           front of that range, in place — no syscall, no page fault
//   realloc shrinking one:  the tail it gives up is kept
//   a new pool segment:     everything kept is unmapped first, so that memory kept for
//                           big blocks never sits beside new memory for small ones
//   the purge delay passes: a range kept that long is unmapped (release_due, on the
//                           same slow paths as the spans' purges, layout/span_life.hpp)
//   the thread ends:        what it kept stays with its parked state, like its clean
//                           spans (home/per_thread.hpp): the next thread adopts it, kept
//                           pages and all, or the purge delay unmaps it (mimalloc-bench's
//                           mstress starts a thread a round: 35,700 page faults a run
//                           when they were unmapped at the thread's end, 2,900 kept)
//   trim, malloc_trim:      everything kept is unmapped
//
// One limit for the process: what all states keep together stays within
// retained_limit_now() — retained_limit_bytes (the drop-in's STA_MALLOC_RETAIN_MIB), or
// half of the big blocks' bytes in use when that is more. A program that cycles buffers
// larger than the floor keeps enough to serve the next ones from kept pages, and what it
// keeps falls back to the floor as its big blocks go (each keep() makes room under the
// limit of that moment).
//
// Each pool state keeps its own (the freeing thread's): no lock, and fork() leaves the
// child's intact. Linux (the drop-in's platform): part of a mapping is unmapped or
// remapped with munmap and mremap, which Windows' VirtualFree cannot do. Kept pages are
// not zero: the last take() says whether it handed any out (calloc clears them then; a
// fresh mapping is zero already).
//
// Invariants:
//  RM1 start[0..count) are disjoint ranges of length[i] > 0 bytes (whole OS pages),
//      mapped, whose pages were a big block's and are no block's now; nothing else
//      refers to them. Two ranges never touch (keep joins them).
//  RM2 held is the sum of length[0..count); count <= max_count. retained_total_bytes is
//      the sum of every state's held, and stays within retained_limit_now() when
//      keep() returns.
//  RM3 entries are in the order they were kept, oldest first (a range joined or cut
//      keeps its place); kept_ms[i] is when range i was kept or last grew by a join.
#pragma once

#include "sta/detail/os/pages.hpp"

#include "sta/detail/atomic.hpp"
#include <cstddef>
#include <cstdint>

namespace sta::detail {

/// The least that all pool states may keep together (RM2): 64 MiB unless the program
/// sets it (the drop-in's STA_MALLOC_RETAIN_MIB); 0 keeps nothing.
inline atomic<std::size_t> retained_limit_bytes{std::size_t{64} << 20};
/// While big blocks are in use, all pool states may keep up to 1 / big_share_divisor of
/// their bytes (os_memory.big_bytes) when that is more than retained_limit_bytes.
/// mimalloc-bench's malloc-large (20 buffers of 5-25 MiB, one replaced at a time) took
/// 2.75 s with the floor alone and 8 ranges, the oldest going first, and 2.23 s with
/// half and max_count's rule (tcmalloc 2.17 s; medians of eight interleaved runs), at a
/// peak RSS of 525 MiB against 447 MiB (tcmalloc 560 MiB).
inline constexpr std::size_t big_share_divisor = 2;

/// The limit of RM2 now: retained_limit_bytes, or the share of the big blocks in use
/// when that is more; 0 when retained_limit_bytes is 0.
inline std::size_t retained_limit_now() noexcept {
    const std::size_t floor = retained_limit_bytes.load(memory_order_relaxed);
    const std::size_t share = os_memory.big_bytes.load(memory_order_relaxed) / big_share_divisor;
    return floor == 0 || floor >= share ? floor : share;
}
/// What all pool states keep now (RM2).
inline atomic<std::size_t> retained_total_bytes{0};

struct retained_mappings {
    /// Ranges a state keeps at most (RM2): over it the smallest goes, a fragment that
    /// the front of a range taken left behind and that fits fewer requests than any other.
    static constexpr std::size_t max_count = 16;
    /// take() grows a kept range by mremap only by up to 1 / grow_share of its length:
    /// the pages it adds fault one by one (4 KiB each), where a fresh mapping of 2 MiB or
    /// more faults in huge pages (os_map_big_pages). Buffers of random sizes from 5 to 25
    /// MiB (mimalloc-bench's malloc-large) faulted 1.0 M times with any growth allowed,
    /// 0.14 M with none; a buffer a few bytes larger each round (big_buffers refill)
    /// grows its kept range by a page.
    static constexpr std::size_t grow_share = 8;

    std::byte* start[max_count] = {};      // RM1, RM3
    std::size_t length[max_count] = {};    // RM1
    std::uint32_t kept_ms[max_count] = {}; // RM3
    std::size_t count = 0;                 // RM2
    std::size_t held = 0;                  // RM2
    bool last_taken = false;               // the last take() handed out kept pages

    /// Keep the freed pages [p, p + bytes) (whole pages), at time `now`. False when they
    /// are not kept (more than the limit leaves room for, or every entry taken by a
    /// larger range): the caller unmaps them.
    bool keep(void* p, std::size_t bytes, std::uint32_t now) noexcept {
        const std::size_t limit = retained_limit_now();
        if (bytes > limit)
            return false;
        // Room within the process's limit (RM2): this state's oldest ranges go first.
        while (retained_total_bytes.fetch_add(bytes, memory_order_relaxed) + bytes > limit) {
            retained_total_bytes.fetch_sub(bytes, memory_order_relaxed);
            if (count == 0)
                return false; // the other threads keep it all
            drop(0);
        }
        auto* const b = static_cast<std::byte*>(p);
        std::size_t before = count; // a kept range that ends at b
        std::size_t after = count;  // one that starts at b + bytes
        for (std::size_t i = 0; i < count; ++i) {
            if (start[i] + length[i] == b)
                before = i;
            if (start[i] == b + bytes)
                after = i;
        }
        held += bytes;
        if (before != count) { // RM1: joined, never touching
            length[before] += bytes;
            kept_ms[before] = now;
            if (after != count) {
                length[before] += length[after];
                held += length[after]; // remove() takes it off again: counted once
                retained_total_bytes.fetch_add(length[after], memory_order_relaxed);
                remove(after);
            }
        } else if (after != count) {
            start[after] = b;
            length[after] += bytes;
            kept_ms[after] = now;
        } else {
            if (count == max_count) { // the smallest of the kept and the new one goes
                const std::size_t i = smallest();
                if (length[i] < bytes) {
                    drop(i);
                } else {
                    held -= bytes;
                    retained_total_bytes.fetch_sub(bytes, memory_order_relaxed);
                    return false;
                }
            }
            start[count] = b;
            length[count] = bytes;
            kept_ms[count] = now;
            ++count;
        }
        return true;
    }

    /// `bytes` (whole pages) made from kept pages, or nullptr when none are kept (or
    /// mremap refuses).
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
        std::byte* p;
        if (fit != count) {
            p = start[fit];
            cut_front(fit, bytes);
        } else {
            if (bytes - length[largest] > length[largest] / grow_share)
                return nullptr; // a fresh mapping takes huge pages: far fewer faults
            p = static_cast<std::byte*>(os_remap_pages(start[largest], length[largest], bytes));
            if (p == nullptr)
                return nullptr;
            remove(largest);
        }
        last_taken = true;
        return p;
    }

    /// The block of `old_bytes` at p grows to `bytes` (whole pages) in place when a kept
    /// range follows it with enough pages: true, and the range gives them up.
    bool grow_in_place(void* p, std::size_t old_bytes, std::size_t bytes) noexcept {
        std::byte* const end = static_cast<std::byte*>(p) + old_bytes;
        for (std::size_t i = 0; i < count; ++i)
            if (start[i] == end) {
                if (length[i] < bytes - old_bytes)
                    return false;
                cut_front(i, bytes - old_bytes);
                return true;
            }
        return false;
    }

    /// Unmap every range kept for `delay_ms` or longer at time `now` (oldest first, RM3).
    /// The bytes unmapped.
    std::size_t release_due(std::uint32_t now, std::uint32_t delay_ms) noexcept {
        std::size_t given = 0;
        while (count != 0 && now - kept_ms[0] >= delay_ms) {
            given += length[0];
            drop(0);
        }
        return given;
    }

    /// Unmap everything kept. The bytes unmapped.
    std::size_t release_all() noexcept {
        const std::size_t given = held;
        while (count != 0)
            drop(count - 1);
        return given;
    }

  private:
    std::size_t smallest() const noexcept {
        std::size_t i = 0;
        for (std::size_t j = 1; j < count; ++j)
            if (length[j] < length[i])
                i = j;
        return i;
    }
    void cut_front(std::size_t i, std::size_t bytes) noexcept {
        if (length[i] == bytes)
            return remove(i);
        start[i] += bytes;
        length[i] -= bytes;
        held -= bytes;
        retained_total_bytes.fetch_sub(bytes, memory_order_relaxed);
    }
    void drop(std::size_t i) noexcept {
        os_unmap_pages(start[i], length[i]);
        remove(i);
    }
    void remove(std::size_t i) noexcept {
        held -= length[i];
        retained_total_bytes.fetch_sub(length[i], memory_order_relaxed);
        --count;
        for (; i < count; ++i) { // RM3: the order stays
            start[i] = start[i + 1];
            length[i] = length[i + 1];
            kept_ms[i] = kept_ms[i + 1];
        }
    }
};

} // namespace sta::detail
